"""A topic's lock (how text joining it, a stop and a close take turns) does not hold up what
merely refers to the topic: recording a turn's reply (the run ended, then a message in the
topic) and closing the topic (its row locked, then its runs stopped) must not deadlock, as
they did on PostgreSQL while the lock was FOR UPDATE (which a foreign key's check waits on)."""

from __future__ import annotations

import asyncio

import pytest

from parley.conversations.model import TopicKind
from parley.runs.model import RunState
from parley.runs.stop import stop_topics
from tests.support import Harness


async def test_a_reply_recorded_while_its_topic_is_being_closed_does_not_deadlock(
    parley: Harness,
) -> None:
    store = parley.context.store
    if store.dialect == "sqlite":
        pytest.skip("SQLite runs one transaction at a time: two cannot deadlock")
    await parley.hire("scribe")
    now = parley.clock.now()
    async with store.transaction() as tx:
        scribe = await tx.agents.by_name("scribe")
        assert scribe is not None
        topic = await tx.topics.insert(TopicKind.TASK, scribe.id, now, text="write")
        run_id = await tx.runs.run_for_text(scribe.id, topic.id, now)
        assert await tx.runs.start_many({run_id: "h"}, now)
    locked, recorded = asyncio.Event(), asyncio.Event()

    async def close() -> list[int]:
        async with store.transaction() as tx:
            assert await tx.topics.closed_reason_locked(topic.id) is None
            locked.set()
            await asyncio.wait_for(recorded.wait(), 1.0)  # or until it waits on this lock
            return [run.id for run in await stop_topics(tx, [topic.id], now, "closed")]

    async def record() -> None:
        await locked.wait()
        async with store.transaction() as tx:
            assert await tx.runs.finish(run_id, RunState.FINISHED, now, output="done")
            await tx.messages.add(topic.id, "text", "done", now, from_run_id=run_id)
        recorded.set()

    closing = asyncio.create_task(close())
    outcomes = await asyncio.gather(closing, record(), return_exceptions=True)
    assert not [o for o in outcomes if isinstance(o, BaseException)], outcomes
    assert outcomes[0] == []  # the reply came first: nothing left running to stop
    async with store.transaction() as tx:
        run = await tx.runs.by_id(run_id)
        assert run is not None and run.state is RunState.FINISHED
