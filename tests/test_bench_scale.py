"""The scale bench's own smoke test, at a small size: its fill has the shape it claims, every
hot operation runs (and the writes write), and a topic's subtasks stay one range of the parent
index once the planner has statistics."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import ColumnElement, func, select

from bench.bulk import AGENT_CONVERSATIONS_PER_ROOT, Filled, Size, fill
from bench.hot import time_side_by_side
from bench.plans import explain
from parley.reads import topics
from parley.store import Store
from parley.store import tables as t

SMALL = Size.of(0.002)  # 20 agents, 200 agent conversations, 2,000 messages


async def _count(store: Store, table: str, *where: ColumnElement[bool]) -> int:
    table_ = t.metadata.tables[table]
    async with store.transaction() as tx:
        result = await tx.connection.execute(select(func.count()).select_from(table_).where(*where))
    return int(result.scalar_one())


@pytest.fixture
async def filled(database_url: str) -> AsyncIterator[tuple[Store, Filled]]:
    store = await Store.open(database_url)
    try:
        yield store, await fill(store, SMALL)
    finally:
        await store.close()


async def test_the_fill_has_the_size_and_shape_it_claims(filled: tuple[Store, Filled]) -> None:
    store, found = filled
    agent_conversations = t.topics.c.kind == "agent_conversation"
    assert await _count(store, "agents", t.agents.c.kind == "agent") == SMALL.agents
    assert await _count(store, "topics", agent_conversations) == SMALL.agent_conversations
    assert SMALL.messages * 0.9 <= await _count(store, "messages") <= SMALL.messages
    for root in found.roots[:5]:
        under = (t.topics.c.root_topic_id == root) & agent_conversations
        assert await _count(store, "topics", under) == AGENT_CONVERSATIONS_PER_ROOT
    async with store.transaction() as tx:
        page = await topics.conversations_page(tx, found.members[0])
    assert 1 <= len(page.items) <= 10  # a person's share does not grow with the store


async def test_every_hot_operation_runs_and_the_writes_write(
    filled: tuple[Store, Filled],
) -> None:
    store, found = filled
    agent_conversations = t.topics.c.kind == "agent_conversation"
    runs_before = await _count(store, "runs")
    (timings,) = await time_side_by_side([(store, found)], repeat=2, rounds=1)
    assert [timing.name for timing in timings] == [
        "pick an agent",
        "find an agent conversation",
        "open an agent conversation + send",
        "queue text (say)",
        "a person's conversations page",
        "runs page (member)",
        "runs page (owner)",
        "show a root",
    ]
    assert all(timing.median_ms > 0 for timing in timings)
    assert await _count(store, "topics", agent_conversations) > SMALL.agent_conversations
    assert await _count(store, "runs") > runs_before  # the sends and says queued runs


async def test_a_topics_subtasks_are_read_from_the_parent_index(
    filled: tuple[Store, Filled],
) -> None:
    """With statistics on a store where most topics have no parent (the fill runs ANALYZE),
    SQLite walked every task of the kind index to find a root's subtasks (migration 0009)."""
    store, found = filled
    if store.dialect != "sqlite":
        pytest.skip("EXPLAIN QUERY PLAN names the index on SQLite; PostgreSQL's plan is costed")
    root = found.roots[0]
    plan = await explain(store, lambda tx: topics.tasks_page(tx, found.owner, None, True, root))
    assert any("ix_topics_reply" in line for line in plan), plan
