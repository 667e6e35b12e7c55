"""Changing a hired agent's settings (``agent set``): each part of a change is optional."""

from __future__ import annotations

from dataclasses import dataclass, field

from parley.agents.lookup import agent_by_name
from parley.agents.model import Agent, Lifecycle
from parley.agents.variables import EnvChange, change_env
from parley.errors import Conflict, Invalid
from parley.store import Tx


@dataclass(frozen=True)
class AgentChange:
    env: EnvChange = field(default_factory=EnvChange)

    @property
    def is_empty(self) -> bool:
        return self.env.is_empty


async def change_agent(tx: Tx, name: str, change: AgentChange) -> Agent:
    agent = await agent_by_name(tx, name)
    if change.is_empty:
        raise Invalid(f"nothing to change for agent {agent.name}")
    if agent.lifecycle is Lifecycle.RETIRED:
        raise Conflict(
            f"agent {agent.name} is retired: it runs no more", state=agent.lifecycle.value
        )
    await change_env(tx, agent, change.env)
    changed = await tx.agents.by_id(agent.id)
    assert changed is not None
    return changed
