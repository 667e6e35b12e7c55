"""The lifecycle hired → active → draining → retired: one function per transition.

Each transition is a conditional update (safe when two callers race) and fails with Conflict
naming the state the agent is really in. Node sessions have no lifecycle and refuse them all.
"""

from __future__ import annotations

from collections.abc import Sequence

from parley.agents.model import Agent, Lifecycle
from parley.clock import Clock
from parley.errors import Conflict
from parley.runs.stop import stop_runs
from parley.store import Tx


def refuse_node_session(agent: Agent, verb: str) -> None:
    if agent.is_node_session:
        raise Conflict(
            f"{agent.name} is the node session of node {agent.node_name}: node sessions are exempt"
            f" from the hiring lifecycle and cannot be {verb}",
            state=agent.lifecycle.value,
        )


async def activate(tx: Tx, agent: Agent) -> None:
    """hired → active: its workspace exists, it may take work."""
    await _move(tx, agent, (Lifecycle.HIRED,), Lifecycle.ACTIVE, "activated")


async def begin_draining(tx: Tx, agent: Agent, reason: str) -> None:
    """hired|active → draining: no new topics; what it holds may finish."""
    await _move(
        tx,
        agent,
        (Lifecycle.HIRED, Lifecycle.ACTIVE),
        Lifecycle.DRAINING,
        "drained",
        retired_reason=reason,
    )


async def retire(tx: Tx, clock: Clock, agent: Agent) -> None:
    """draining → retired, once nothing of it is queued or running."""
    open_runs = await tx.runs.count_open(agent.id)
    if open_runs:
        raise Conflict(
            f"agent {agent.name} still has {open_runs} run(s) queued or running; it retires when"
            " they end (or use --force)",
            state=agent.lifecycle.value,
        )
    await _move(
        tx, agent, (Lifecycle.DRAINING,), Lifecycle.RETIRED, "retired", retired_at=clock.now()
    )


async def force_retire(tx: Tx, clock: Clock, agent: Agent, reason: str) -> int:
    """hired|active|draining → retired now; its open runs are stopped (their turns cancelled on
    their node once this commits). Returns how many."""
    now = clock.now()
    await _move(
        tx,
        agent,
        (Lifecycle.HIRED, Lifecycle.ACTIVE, Lifecycle.DRAINING),
        Lifecycle.RETIRED,
        "retired",
        retired_at=now,
        retired_reason=reason,
    )
    stopped = await stop_runs(tx, await tx.runs.open_of_agent(agent.id), now, "agent retired")
    return len(stopped)


async def _move(
    tx: Tx,
    agent: Agent,
    allowed_from: Sequence[Lifecycle],
    to: Lifecycle,
    verb: str,
    **values: object,
) -> None:
    refuse_node_session(agent, verb)
    if await tx.agents.move_lifecycle(agent.id, allowed_from, to, **values):
        return
    current = await tx.agents.by_id(agent.id)
    state = current.lifecycle if current else agent.lifecycle
    raise Conflict(
        f"agent {agent.name} is {state.value}; only a"
        f" {' or '.join(s.value for s in allowed_from)} agent can be {verb}",
        state=state.value,
    )
