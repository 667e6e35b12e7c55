"""What the outcome recorder writes for a batch of replies at once (``hub/plain_replies.py``):
hops of several origins counted in one statement on PostgreSQL, runs finished in one. Each
must count and end exactly as the one-at-a-time statements do."""

from __future__ import annotations

from datetime import datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.conversations.model import TopicKind
from parley.runs.model import RunState
from tests.agents.support import queue_task
from tests.support import Harness

WINDOW = timedelta(seconds=60)
ORIGINS = 3

# Each step: seconds later, how many hops each origin sets off (0: none).
_steps = st.lists(
    st.tuples(st.integers(0, 90), st.lists(st.integers(0, 4), min_size=ORIGINS, max_size=ORIGINS)),
    min_size=1,
    max_size=8,
)


def _counted(
    held: dict[int, tuple[datetime, int]], counts: dict[int, int], now: datetime
) -> dict[int, int]:
    """The rule, one origin at a time: a window begun a WINDOW or more ago is over, and the
    hops start a new one; else they add to it."""
    for origin, count in counts.items():
        started, hops = held.get(origin, (now, 0))
        held[origin] = (now, count) if started <= now - WINDOW else (started, hops + count)
    return {origin: held[origin][1] for origin in counts}


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=_steps)
async def test_hops_of_several_origins_count_as_each_alone(
    parley: Harness, steps: list[tuple[int, list[int]]]
) -> None:
    now = parley.clock.now()
    if (await parley.owner.get("/api/v1/agents/scribe")).status_code == 404:
        await parley.hire("scribe")
    async with parley.context.store.transaction() as tx:  # fresh origins for each example
        agent = await tx.agents.by_name("scribe")
        assert agent is not None
        origins = [
            (await tx.topics.insert(TopicKind.TASK, agent.id, now, text="o")).id
            for _ in range(ORIGINS)
        ]
    model: dict[int, tuple[datetime, int]] = {}
    for seconds, hops in steps:
        now += timedelta(seconds=seconds)
        counts = {origin: n for origin, n in zip(origins, hops, strict=True) if n}
        async with parley.context.store.transaction() as tx:
            found = await tx.hops.spend_many(counts, now, now - WINDOW)
        assert found == _counted(model, counts, now)


async def test_a_batch_finishes_the_open_runs_each_with_its_own_output(parley: Harness) -> None:
    await parley.hire("scribe", max_sessions=8)
    now = parley.clock.now()
    async with parley.context.store.transaction() as tx:
        made = [await queue_task(tx, "scribe", now, f"work {n}") for n in range(3)]
        first, second, third = made
        await tx.runs.start_many({run_id: f"hash-{run_id}" for run_id in made}, now)
        await tx.runs.keep_stderr(second, "kept before")
        assert await tx.runs.finish(third, RunState.FAILED, now, reason="gone")
        later = now + timedelta(seconds=5)
        endings = {first: ("one", "said on stderr"), second: ("two", None), third: ("three", None)}
        ended = await tx.runs.finish_many(endings, later)
        runs = await tx.runs.by_ids(made)
        stderrs = [await tx.runs.stderr_of(run_id) for run_id in made]
    assert ended == {first, second}  # the failed one stays as it was
    assert [(runs[r].state, runs[r].output, runs[r].reason) for r in made] == [
        (RunState.FINISHED, "one", None),
        (RunState.FINISHED, "two", None),
        (RunState.FAILED, None, "gone"),
    ]
    assert runs[first].finished_at == runs[second].finished_at == later
    assert stderrs == ["said on stderr", "kept before", None]  # a kept stderr is never unset
