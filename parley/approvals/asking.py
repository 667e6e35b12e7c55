"""Asking and deciding. A running turn asks before a call of a tool on its agent's ask list:
the approval is kept with the call's exact arguments, shown to whoever may decide (the person
whose conversation or task the turn works for, and every owner) in their turns and in the run's
events (and, by ``parley/channels/approvals.py``, which calls these, where the turn's text came
from in a channel). The first decision is the one; a turn that ended, or a deadline that passed,
takes none."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import timedelta

from parley.actions.table import ACTIONS, MAX_CONTENT
from parley.approvals.model import Approval, ApprovalState, asks_first
from parley.clock import Clock
from parley.errors import Conflict, Forbidden, Invalid, NotFound
from parley.people.model import Person
from parley.runs.model import Run, RunState
from parley.store import Tx
from parley.text import MAX_REASON, check_length, refuse_nul, refuse_nul_within

# Calls of one turn that may wait at once (a model may call tools in parallel); more is a loop.
MAX_WAITING_PER_RUN = 8
# The arguments kept: a write's whole content and a little more for the JSON around it.
MAX_ARGUMENTS = MAX_CONTENT + 4096
# A tool's name as kept: an MCP server's name, a dot and the server's name for its tool.
MAX_TOOL = 200


async def ask(
    tx: Tx,
    clock: Clock,
    run: Run,
    tool: str,
    arguments: Mapping[str, object],
    timeout: timedelta,
) -> Approval:
    """``run`` (running, its token checked) asks before calling ``tool``: one of its agent's
    tools that ask first."""
    agent = await tx.agents.by_id(run.agent_id)
    assert agent is not None
    _check_asked(agent.name, agent.tools, agent.ask, [s.name for s in agent.mcp_servers], tool)
    refuse_nul_within(dict(arguments), "arguments")
    shown = json.dumps(dict(arguments), ensure_ascii=False, sort_keys=True, default=str)
    if len(shown) > MAX_ARGUMENTS:
        raise Invalid(f"the arguments of {tool} are past {MAX_ARGUMENTS} characters")
    if await tx.approvals.waiting_of_run(run.id) >= MAX_WAITING_PER_RUN:
        raise Conflict(
            f"this turn has {MAX_WAITING_PER_RUN} calls waiting for approval already: wait for"
            " their answers"
        )
    now = clock.now()
    approval_id = await tx.approvals.add(run.id, tool, shown, now, now + timeout)
    approval = await tx.approvals.by_id(approval_id)
    assert approval is not None
    tx.effects.approvals.append(approval)
    return approval


def _check_asked(
    agent: str, tools: tuple[str, ...], ask: tuple[str, ...], servers: list[str], tool: str
) -> None:
    server, dot, _ = tool.partition(".")
    on_its_list = server in servers if dot else tool in tools and _is_workspace_tool(tool)
    if not on_its_list:
        raise Forbidden(f"{tool[:80]!r} is not one of {agent}'s tools")
    if len(tool) > MAX_TOOL:
        raise Invalid(f"a tool's name is at most {MAX_TOOL} characters: {tool[:80]!r}…")
    if not asks_first(ask, tool):
        raise Invalid(f"{agent} does not ask before {tool}: call it")


def _is_workspace_tool(name: str) -> bool:
    action = ACTIONS.get(name)
    return action is not None and action.in_workspace


async def decide(
    tx: Tx,
    clock: Clock,
    person: Person,
    approval_id: int,
    approve: bool,
    reason: str | None = None,
) -> Approval:
    """``person`` approves or denies; the turn goes on with the call, or with the denial (and
    ``reason``) as its result."""
    if reason is not None:
        reason = check_length(refuse_nul(reason, "reason"), MAX_REASON, "reason") or None
    approval = await tx.approvals.by_id(approval_id)
    if approval is None or not await tx.approvals.may_decide(person, approval_id):
        raise NotFound(f"no approval {approval_id} waits for you")
    _check_open(approval, clock)
    state = ApprovalState.APPROVED if approve else ApprovalState.DENIED
    if not await tx.approvals.decide(approval_id, state, clock.now(), person.id, reason):
        raise Conflict(f"approval {approval_id} was decided meanwhile")
    return await _decided(tx, approval_id)


def _check_open(approval: Approval, clock: Clock) -> None:
    where = f"approval {approval.id} ({approval.tool} for {approval.agent_name})"
    if not approval.is_waiting:
        by = approval.decided_by or "nobody in time"
        raise Conflict(f"{where} was already {approval.state.value} by {by}")
    if approval.run_state != RunState.RUNNING.value:
        raise Conflict(f"{where} waits for nothing: its turn is {approval.run_state}")
    if approval.deadline <= clock.now():
        raise Conflict(f"{where} timed out: its turn reads it as denied")


async def time_out(tx: Tx, clock: Clock, approval_id: int) -> Approval:
    """Nobody decided before the deadline: denied, by nobody."""
    approval = await tx.approvals.by_id(approval_id)
    if approval is None or not approval.is_waiting:
        raise NotFound(f"approval {approval_id} waits no more")
    reason = "nobody answered in time"
    if not await tx.approvals.decide(approval_id, ApprovalState.DENIED, clock.now(), None, reason):
        raise Conflict(f"approval {approval_id} was decided meanwhile")
    return await _decided(tx, approval_id)


async def _decided(tx: Tx, approval_id: int) -> Approval:
    decided = await tx.approvals.by_id(approval_id)
    assert decided is not None
    tx.effects.approvals.append(decided)
    return decided
