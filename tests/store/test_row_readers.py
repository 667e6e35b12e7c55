"""Topics and runs are read by position (``store/rows.py``), one row alone (``_topic``,
``_run``) as each row of a batch: both reads make the same objects, field for field, open,
started, failed, closed, with a thread. A column moved in a statement, or a field added to the
model, must not shift a value into another field unnoticed."""

from __future__ import annotations

from datetime import timedelta

from parley.conversations.model import TopicKind
from parley.runs.model import RunState
from tests.agents.support import queue_task
from tests.support import Harness


async def test_many_topics_and_runs_read_as_each_alone_reads_them(parley: Harness) -> None:
    await parley.hire("scribe", max_sessions=8)
    now = parley.clock.now()
    async with parley.context.store.transaction() as tx:
        made = [await queue_task(tx, "scribe", now, f"work {n}") for n in range(4)]
        scribe = await tx.agents.by_name("scribe")
        assert scribe is not None
        root = (await tx.runs.by_ids(made))[made[0]].topic_id
        # Fields that are empty on a task: an agent conversation under it, closed, with a thread.
        talk = await tx.topics.insert(
            TopicKind.AGENT_CONVERSATION,
            scribe.id,
            now,
            root_topic_id=root,
            sender_agent_id=scribe.id,
            thread_id="t-1",
            pair_key="scribe|scribe",
            connection="local",
            thread=True,
        )
        await tx.topics.close([talk.id], "done", now)
        started = await tx.runs.start_many({made[0]: "hash-0", made[1]: "hash-1"}, now)
        await tx.runs.finish(made[1], RunState.FAILED, now + timedelta(seconds=3), reason="no")
        runs = await tx.runs.by_ids(made)
        alone = {run_id: await tx.runs.by_id(run_id) for run_id in made}
        topic_ids = {run.topic_id for run in runs.values()} | {talk.id}
        topics = await tx.topics.with_roots(topic_ids)
        each = {topic_id: await tx.topics.by_id(topic_id) for topic_id in topic_ids}
    assert runs == alone
    assert started[made[0]] == alone[made[0]]  # as started: what start_many returns
    assert [runs[r].state for r in made] == [RunState.RUNNING, RunState.FAILED] + [
        RunState.QUEUED
    ] * 2
    assert topics == each
    assert topics[talk.id].thread and topics[talk.id].closed_reason == "done"
    assert topics[talk.id].kind is TopicKind.AGENT_CONVERSATION
