"""Policy: an agent can be warned; at the configured count it is dismissed (forced retirement)."""

from __future__ import annotations

from dataclasses import dataclass

from parley.agents.lifecycle import force_retire, refuse_node_session
from parley.agents.lookup import agent_by_name
from parley.agents.model import Agent, Lifecycle
from parley.clock import Clock
from parley.errors import Conflict, Invalid
from parley.people.model import Person
from parley.store import Tx
from parley.text import MAX_REASON


@dataclass(frozen=True)
class WarnOutcome:
    agent: Agent
    warnings: int
    dismissed: bool


async def warn(
    tx: Tx, clock: Clock, agent_name: str, reason: str, by: Person, warnings_to_dismiss: int
) -> WarnOutcome:
    reason = reason.strip()
    if not reason or len(reason) > MAX_REASON:
        raise Invalid(f"a warning needs a reason of 1 to {MAX_REASON} characters", field="reason")
    agent = await agent_by_name(tx, agent_name)
    refuse_node_session(agent, "warned")
    if agent.lifecycle is Lifecycle.RETIRED:
        raise Conflict(f"agent {agent.name} is retired; it cannot be warned", state="retired")
    count = await tx.agents.add_warning(agent.id, reason, by.id, clock.now())
    dismissed = count >= warnings_to_dismiss
    if dismissed:
        await force_retire(tx, clock, agent, f"dismissed after {count} warnings; last: {reason}")
    updated = await tx.agents.by_id(agent.id)
    assert updated is not None
    return WarnOutcome(updated, count, dismissed)
