"""Which queued runs the scheduler reads: at most an agent's free slots, one per session, in
arrival order, however long the backlog behind a busy agent (the same on both stores)."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, event

from parley.conversations.model import TopicKind
from tests.support import Harness


async def test_a_backlog_gives_only_the_agent_s_free_slots_one_run_per_session(
    parley: Harness,
) -> None:
    await parley.hire("busy", max_sessions=2)
    await parley.hire("idle", max_sessions=1)
    now = parley.clock.now()
    async with parley.context.store.transaction() as tx:
        busy, idle = await tx.agents.by_name("busy"), await tx.agents.by_name("idle")
        assert busy is not None and idle is not None
        tasks = [
            await tx.topics.insert(TopicKind.TASK, busy.id, now, text=f"t{n}") for n in range(6)
        ]
        queued = [await tx.runs.run_for_text(busy.id, task.id, now) for task in tasks]
        other_task = await tx.topics.insert(TopicKind.TASK, idle.id, now, text="other")
        other = await tx.runs.run_for_text(idle.id, other_task.id, now)
        assert [w.id for w in await tx.runs.startable(256)] == [*queued[:2], other]
        assert [w.id for w in await tx.runs.startable(1)] == queued[:1]

        # One slot taken: one left, and text for the running session waits behind its run.
        assert await tx.runs.start_many({queued[0]: "h0"}, now)
        behind = await tx.runs.run_for_text(busy.id, tasks[0].id, now)
        assert [w.id for w in await tx.runs.startable(256)] == [queued[1], other]

        # The running one put back in the queue: its session now has two queued runs; the
        # first of them is startable, the other waits behind it, and so does the backlog.
        await tx.runs.requeue(queued[0])
        assert [w.id for w in await tx.runs.startable(256)] == [*queued[:2], other]
        assert behind not in [w.id for w in await tx.runs.startable(256)]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_a_full_agent_s_backlog_is_not_ranked_at_every_pass(parley: Harness) -> None:
    """The scheduler asks at every pass, and an agent with every slot taken may have thousands
    waiting: their runs are left out before the ranking, not sorted to find that none may
    start. Measured in SQLite's own steps (its progress handler), not in time: the same
    backlog ranked costs many times what it costs left out."""
    await parley.hire("busy", max_sessions=1)
    now = parley.clock.now()
    async with parley.context.store.transaction() as tx:
        busy = await tx.agents.by_name("busy")
        assert busy is not None
        for n in range(BACKLOG):
            task = await tx.topics.insert(TopicKind.TASK, busy.id, now, text=f"t{n}")
            await tx.runs.run_for_text(busy.id, task.id, now)

    steps = _counting_startable_steps(parley)
    async with parley.context.store.transaction() as tx:
        [first] = await tx.runs.startable(256)  # one free slot: the backlog is ranked
        free = steps.pop()
        assert await tx.runs.start_many({first.id: "h"}, now)
        assert await tx.runs.startable(256) == []  # its one slot taken: nothing may start
        full = steps.pop()
    assert full * 5 < free, (full, free)  # ranked: about as many steps as with a free slot


BACKLOG = 500


def _counting_startable_steps(parley: Harness) -> list[int]:
    """SQLite's virtual-machine steps (in hundreds) of each ``startable`` read from now on."""
    engine = parley.context.store.engine
    assert isinstance(engine, Engine)
    counted: list[int] = []

    def before(connection: Connection, *_: Any) -> None:
        counted.append(0)

        def step() -> int:
            counted[-1] += 1
            return 0  # go on

        raw = connection.connection.dbapi_connection
        assert isinstance(raw, sqlite3.Connection)
        raw.set_progress_handler(step, 100)

    def after(connection: Connection, *_: Any) -> None:
        raw = connection.connection.dbapi_connection
        assert isinstance(raw, sqlite3.Connection)
        raw.set_progress_handler(None, 0)

    def startable_only(listener: Any) -> Any:
        def listening(connection: Connection, cursor: Any, statement: str, *rest: Any) -> None:
            if "AS in_session" in statement:
                listener(connection)

        return listening

    event.listen(engine, "before_cursor_execute", startable_only(before))
    event.listen(engine, "after_cursor_execute", startable_only(after))
    return counted
