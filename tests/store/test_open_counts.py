"""A page of agents reads its running and queued turns in one grouped query: per agent, the
runs open (running, queued); those finished, and agents with none open, are not counted."""

from __future__ import annotations

from parley.conversations.model import TopicKind
from parley.runs.model import RunState
from tests.support import Harness


async def test_open_counts_are_running_and_queued_per_agent(parley: Harness) -> None:
    await parley.hire("scribe", max_sessions=8)
    await parley.hire("clerk")
    await parley.hire("idle")
    now = parley.clock.now()
    async with parley.context.store.transaction() as tx:
        scribe, clerk, idle = [await tx.agents.by_name(n) for n in ("scribe", "clerk", "idle")]
        assert scribe is not None and clerk is not None and idle is not None
        runs = []
        for agent, text in ((scribe, "a"), (scribe, "b"), (scribe, "c"), (clerk, "d")):
            topic = await tx.topics.insert(TopicKind.TASK, agent.id, now, text=text)
            runs.append(await tx.runs.run_for_text(agent.id, topic.id, now))
        assert await tx.runs.start_many({runs[0]: "one"}, now)
        assert await tx.runs.start_many({runs[1]: "two"}, now)
        assert await tx.runs.start_many({runs[3]: "three"}, now)
        await tx.runs.finish(runs[3], RunState.FINISHED, now)
        counts = await tx.runs.open_counts([scribe.id, clerk.id, idle.id])
        none = await tx.runs.open_counts([])
    assert counts == {scribe.id: (2, 1)}
    assert none == {}
