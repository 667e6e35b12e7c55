"""Which queued runs the scheduler reads: at most an agent's free slots, one per session, in
arrival order, however long the backlog behind a busy agent (the same on both stores)."""

from __future__ import annotations

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
