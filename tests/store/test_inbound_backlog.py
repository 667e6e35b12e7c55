"""The text a peer sent that waits here for a run (the receiver's queue limit counts it at every
batch): only text of queued runs in that connection's threads, counted up to the limit, and
found from the queued runs rather than from every text the connection's threads ever had."""

from __future__ import annotations

from datetime import datetime

import pytest

from bench.plans import explain
from parley.agents.model import Agent
from parley.conversations.model import Topic, TopicKind
from parley.runs.model import RunState
from parley.store import Tx
from tests.support import Harness


async def _thread(tx: Tx, agent: Agent, connection: str, thread_id: str, now: datetime) -> Topic:
    return await tx.topics.insert(
        TopicKind.AGENT_CONVERSATION,
        agent.id,
        now,
        connection=connection,
        peer_role="asker",
        pair_key=f"{agent.name}|asker@{connection}|{thread_id}",
        thread_id=thread_id,
    )


async def _texts(tx: Tx, topic: Topic, agent: Agent, n: int, now: datetime) -> int:
    run_id = await tx.runs.run_for_text(agent.id, topic.id, now)
    for i in range(n):
        await tx.messages.add(
            topic.id, "text", f"text {i}", now, recipient_agent_id=agent.id, run_id=run_id
        )
    return run_id


async def test_the_backlog_counts_only_the_connections_waiting_text_up_to_the_limit(
    parley: Harness,
) -> None:
    await parley.hire("sink")
    now = parley.clock.now()
    async with parley.context.store.transaction() as tx:
        sink = await tx.agents.by_name("sink")
        assert sink is not None
        first = await _thread(tx, sink, "far", "t1", now)
        second = await _thread(tx, sink, "far", "t2", now)
        elsewhere = await _thread(tx, sink, "near", "t3", now)
        # History: a run that took its text and ended is not the backlog.
        taken = await _texts(tx, first, sink, 5, now)
        assert await tx.runs.start_many({taken: "h"}, now)
        assert await tx.runs.finish(taken, RunState.FINISHED, now)
        await _texts(tx, first, sink, 3, now)
        await _texts(tx, second, sink, 2, now)
        await _texts(tx, elsewhere, sink, 4, now)

        assert await tx.frames.backlog("far", up_to=100) == 5
        assert await tx.frames.backlog("far", up_to=4) == 4
        assert await tx.frames.backlog("near", up_to=100) == 4
        assert await tx.frames.backlog("nobody", up_to=100) == 0


async def test_the_backlog_is_found_from_the_queued_runs_not_the_threads_history(
    parley: Harness,
) -> None:
    """On SQLite (whose plan names its indexes): queued runs by their state's index, then their
    texts by run; the connection's threads' every text (ix_messages_topic) made each batch cost
    as much as the connection's whole history."""
    store = parley.context.store
    if store.dialect != "sqlite":
        pytest.skip("EXPLAIN QUERY PLAN names the index on SQLite; PostgreSQL's plan is costed")
    plan = await explain(store, lambda tx: tx.frames.backlog("far", up_to=1000))
    assert any("ix_runs_state" in line for line in plan), plan
    assert any("ix_messages_run" in line for line in plan), plan
    assert not any("ix_messages_topic" in line for line in plan), plan


async def test_unclaimed_notices_are_found_by_their_own_index_not_every_reply(
    parley: Harness,
) -> None:
    """On SQLite: a turn's start looks for notices no run took in its topics through
    ``ix_messages_unclaimed``; through ``ix_messages_run`` it read every message without a run
    (every reply ever written), so each start cost as much as the store's history."""
    store = parley.context.store
    if store.dialect != "sqlite":
        pytest.skip("EXPLAIN QUERY PLAN names the index on SQLite; PostgreSQL's plan is costed")
    plan = await explain(store, lambda tx: tx.messages.claim_notices([(1, 1, 1)]))
    assert any("ix_messages_unclaimed" in line for line in plan), plan
    assert not any("ix_messages_run" in line for line in plan), plan
