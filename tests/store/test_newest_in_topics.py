"""A root's page reads the newest messages and runs of all its conversations in one statement
each: per asked topic the newest ``each``, newest first, with whether more are left, as a first
page of that topic would give them; topics not asked are not read, and an asked topic with
nothing in it is there, empty."""

from __future__ import annotations

from parley.conversations.model import Topic, TopicKind
from parley.reads.model import Window
from parley.runs.model import RunState
from parley.store import Tx
from tests.support import Harness


async def _topics(parley: Harness, n: int) -> tuple[int, list[Topic]]:
    await parley.hire("scribe", max_sessions=8)
    now = parley.clock.now()
    async with parley.context.store.transaction() as tx:
        agent = await tx.agents.by_name("scribe")
        assert agent is not None
        made = [
            await tx.topics.insert(TopicKind.TASK, agent.id, now, text=str(i)) for i in range(n)
        ]
    return agent.id, made


async def _messages(tx: Tx, topic: Topic, n: int, parley: Harness) -> list[int]:
    now = parley.clock.now()
    return [await tx.messages.add(topic.id, "text", f"{topic.id}:{i}", now) for i in range(n)]


async def test_newest_messages_per_topic(parley: Harness) -> None:
    _, (many, few, empty, other) = await _topics(parley, 4)
    async with parley.context.store.transaction() as tx:
        ids = {
            t.id: await _messages(tx, t, k, parley) for t, k in ((many, 5), (few, 2), (other, 3))
        }
        found = await tx.messages.newest_in_topics([many.id, few.id, empty.id], 3)
        first = await tx.messages.page(many.id, Window(limit=3))
    assert set(found) == {many.id, few.id, empty.id}  # ``other`` was not asked
    assert [m.id for m in found[many.id].items] == ids[many.id][::-1][:3]
    assert found[many.id] == first  # as a first page of three gives them, its next key too
    assert found[many.id].next_key is not None
    assert [m.id for m in found[few.id].items] == ids[few.id][::-1]
    assert found[few.id].next_key is None
    assert found[empty.id].items == [] and found[empty.id].next_key is None


async def test_newest_runs_per_topic(parley: Harness) -> None:
    agent_id, (many, one, empty, other) = await _topics(parley, 4)
    now = parley.clock.now()
    async with parley.context.store.transaction() as tx:
        made: dict[int, list[int]] = {}
        for topic, k in ((many, 4), (one, 1), (other, 2)):
            for _ in range(k):  # each run finished, so the next text makes a new one
                run_id = await tx.runs.run_for_text(agent_id, topic.id, now)
                assert await tx.runs.start_many({run_id: f"t{run_id}"}, now)
                await tx.runs.finish(run_id, RunState.FINISHED, now)
                made.setdefault(topic.id, []).append(run_id)
        found = await tx.runs.newest_in_topics([many.id, one.id, empty.id], 2)
        none = await tx.runs.newest_in_topics([], 2)
    assert set(found) == {many.id, one.id, empty.id}
    assert [r.id for r in found[many.id].items] == made[many.id][::-1][:2]
    assert found[many.id].next_key == made[many.id][2]  # the last one kept: more are left
    assert all(r.topic_id == many.id for r in found[many.id].items)
    assert [r.id for r in found[one.id].items] == made[one.id]
    assert found[one.id].next_key is None
    assert found[empty.id].items == []
    assert none == {}
