"""Text for a session joins its waiting run, or makes one: one statement on PostgreSQL, two on
SQLite, the same answers."""

from __future__ import annotations

from parley.conversations.model import TopicKind
from parley.runs.model import RunState
from tests.support import Harness


async def test_a_session_has_one_waiting_run_and_a_new_one_once_it_started(
    parley: Harness,
) -> None:
    await parley.hire("scribe", max_sessions=8)
    now = parley.clock.now()
    async with parley.context.store.transaction() as tx:
        agent = await tx.agents.by_name("scribe")
        assert agent is not None
        task = await tx.topics.insert(TopicKind.TASK, agent.id, now, text="work")
        other = await tx.topics.insert(TopicKind.TASK, agent.id, now, text="more work")
        session = await tx.runs.session(agent.id, task.id, now)
        elsewhere = await tx.runs.session(agent.id, other.id, now)
        first = await tx.runs.waiting_or_new(agent.id, task.id, session.id, now)
        assert await tx.runs.waiting_or_new(agent.id, task.id, session.id, now) == first
        apart = await tx.runs.waiting_or_new(agent.id, other.id, elsewhere.id, now)
        assert apart != first  # another session: a run of its own
        assert await tx.runs.start_many({first: "hash"}, now)
        after = await tx.runs.waiting_or_new(agent.id, task.id, session.id, now)
        runs = await tx.runs.by_ids([first, apart, after])
    assert after not in (first, apart)
    assert [runs[r].state for r in (first, apart, after)] == [
        RunState.RUNNING,
        RunState.QUEUED,
        RunState.QUEUED,
    ]
    assert (runs[after].agent_id, runs[after].topic_id, runs[after].session_id) == (
        agent.id,
        task.id,
        session.id,
    )
    assert runs[after].created_at == now


async def test_text_for_an_agent_makes_its_session_once_and_joins_the_waiting_run(
    parley: Harness,
) -> None:
    await parley.hire("scribe", max_sessions=8)
    now = parley.clock.now()
    async with parley.context.store.transaction() as tx:
        agent = await tx.agents.by_name("scribe")
        assert agent is not None
        task = await tx.topics.insert(TopicKind.TASK, agent.id, now, text="work")
        first = await tx.runs.run_for_text(agent.id, task.id, now)  # no session yet
        again = await tx.runs.run_for_text(agent.id, task.id, now)
        assert await tx.runs.start_many({first: "hash"}, now)
        after = await tx.runs.run_for_text(agent.id, task.id, now)
        session = await tx.runs.session(agent.id, task.id, now)
        runs = await tx.runs.by_ids([first, after])
    assert again == first and after != first
    assert {runs[r].session_id for r in (first, after)} == {session.id}
    assert runs[after].state is RunState.QUEUED
