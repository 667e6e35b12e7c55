"""An exposed agent's A2A card: one card per agent, at ``/a2a/<agent>/.well-known/agent-card.json``.

One card per agent rather than one card listing agents as skills: A2A gives a client no way to
address a skill in a message, and each agent has its own contexts, session cap and stop; a card
per agent makes each an A2A agent of its own, its endpoints under its own path. Its one skill is
the agent's work as its engram describes it."""

from __future__ import annotations

from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_1_0, TransportProtocol

from parley import __version__
from parley.a2a.edge import REST, agent_url
from parley.a2a.model import Exposed

SCHEME = "bearer"
MAX_DESCRIPTION = 2000


def card_of(agent: Exposed, base_url: str) -> AgentCard:
    url = agent_url(base_url, agent.name)
    description = agent.engram.strip()[:MAX_DESCRIPTION] or f"{agent.name}, an agent of Parley"
    card = AgentCard(
        name=agent.name,
        description=description,
        version=__version__,
        provider=AgentProvider(organization="Parley", url=base_url),
        supported_interfaces=[
            AgentInterface(
                url=url,
                protocol_binding=TransportProtocol.JSONRPC,
                protocol_version=PROTOCOL_VERSION_1_0,
            ),
            AgentInterface(
                url=f"{url}{REST}",
                protocol_binding=TransportProtocol.HTTP_JSON,
                protocol_version=PROTOCOL_VERSION_1_0,
            ),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id=agent.name,
                name=agent.name,
                description=description,
                tags=["parley"],
                input_modes=["text/plain"],
                output_modes=["text/plain"],
            )
        ],
        security_requirements=[SecurityRequirement(schemes={SCHEME: StringList(list=[])})],
    )
    card.security_schemes[SCHEME].CopyFrom(
        SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(
                scheme="Bearer",
                description="What an owner of this installation gave the client"
                " (parley a2a client add)",
            )
        )
    )
    return card
