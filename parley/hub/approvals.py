"""The hub's side of a call that asks first: ask for the running turn behind a token, then wait
for the decision, woken by its commit (``RunWatch``) and rereading the store, which holds the
truth: the first decision, or a time-out once the deadline passes with nobody waiting for
nothing. The hub's own node calls this in process (``LocalApprovals``); a joined node through
``/api/v1/approvals`` (``parley/node/http_approvals.py``), which calls the same two steps."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from datetime import timedelta

from parley.approvals.model import Approval
from parley.channels.approvals import ask, time_out
from parley.clock import Clock
from parley.errors import Conflict, NotFound
from parley.hub.actions import running_run
from parley.hub.watch import RunWatch, WatchEvent
from parley.store import Store

# How long one wait lasts before its caller looks again (an HTTP long poll's length).
WAIT_SECONDS = 25.0
# How often a wait rereads the store unwoken: a deadline passes without a commit to wake it.
RECHECK_SECONDS = 1.0


async def ask_for_token(
    store: Store,
    clock: Clock,
    token: str | None,
    tool: str,
    arguments: Mapping[str, object],
    timeout: timedelta,
) -> Approval:
    async with store.transaction() as tx:
        run = await running_run(tx, token)
        return await ask(tx, clock, run, tool, arguments, timeout)


async def decision(
    store: Store, clock: Clock, watch: RunWatch, approval_id: int, run_id: int, at_most: float
) -> Approval:
    """The approval once decided (or timed out, or its turn ended), or as it stands after
    ``at_most`` seconds."""
    with watch.watching(run_id) as events:  # before reading: no decision slips between
        loop = asyncio.get_running_loop()
        until = loop.time() + at_most
        while True:
            approval = await _read(store, approval_id)
            if not approval.is_open:
                return approval
            left_to_deadline = (approval.deadline - clock.now()).total_seconds()
            if left_to_deadline <= 0:
                return await _timed_out(store, clock, approval)
            wait = min(left_to_deadline, until - loop.time(), RECHECK_SECONDS)
            if until <= loop.time():
                return approval
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_news(events), wait)


async def _news(events: asyncio.Queue[WatchEvent]) -> None:
    """Until an approval of the run changes or the run ends."""
    while (await events.get()).kind not in ("approval", "end"):
        pass


async def _read(store: Store, approval_id: int) -> Approval:
    async with store.transaction() as tx:
        approval = await tx.approvals.by_id(approval_id)
    if approval is None:
        raise NotFound(f"no approval {approval_id}")
    return approval


async def _timed_out(store: Store, clock: Clock, approval: Approval) -> Approval:
    try:
        async with store.transaction() as tx:
            return await time_out(tx, clock, approval.id)
    except (Conflict, NotFound):  # decided just before: that decision stands
        return await _read(store, approval.id)


class LocalApprovals:
    """For turns on the hub's own node: the same two steps, in process."""

    def __init__(
        self, store: Store, clock: Clock, watch: RunWatch, token: str, timeout: timedelta
    ) -> None:
        self._store, self._clock, self._watch = store, clock, watch
        self._token, self._timeout = token, timeout

    async def approve(self, tool: str, arguments: Mapping[str, object]) -> str | None:
        asked = await ask_for_token(
            self._store, self._clock, self._token, tool, arguments, self._timeout
        )
        approval = asked
        while approval.is_open:
            approval = await decision(
                self._store, self._clock, self._watch, asked.id, asked.run_id, WAIT_SECONDS
            )
        return approval.as_tool_result()
