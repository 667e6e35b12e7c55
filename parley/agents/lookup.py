"""Finding an agent by name, with the message a person expects when it is not there."""

from __future__ import annotations

from parley.agents.model import Agent
from parley.errors import NotFound
from parley.store import Tx


async def agent_by_name(tx: Tx, name: str) -> Agent:
    agent = await tx.agents.by_name(name)
    if agent is None:
        raise NotFound(f"no agent named {name!r}", field="agent")
    return agent
