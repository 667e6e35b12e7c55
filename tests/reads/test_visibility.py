"""Who reads what, on random worlds: people (owners and members),
conversations, tasks, subtasks, agent conversations, runs and deletions, built through the
library; then every list and every single read of the API, for every reader, against the pure
model of the rule in ``model.py``: no leak, nothing over-hidden."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.reads.build import KINDS, Builder, Step, hire_idle_agents
from tests.reads.compare import Comparison
from tests.reads.model import World
from tests.support import Harness

STEPS = st.lists(
    st.builds(Step, st.sampled_from(KINDS), st.integers(0, 40), st.integers(0, 40)),
    min_size=1,
    max_size=8,
)
RECENT = 6  # single reads for the newest topics and runs (the lists cover all of them)


@pytest.fixture
async def builder(parley: Harness) -> AsyncIterator[Builder]:
    """One world per test, growing with every example (the store is not reset between them):
    the model keeps all of it, so older rows are checked again with every new reader."""
    await hire_idle_agents(parley)
    built = Builder(parley, World())
    await built.owner()
    yield built


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    new_readers=st.lists(st.booleans(), min_size=1, max_size=2),
    steps=STEPS,
    small=st.integers(1, 4),
)
async def test_every_read_follows_the_rule(
    parley: Harness, builder: Builder, new_readers: list[bool], steps: list[Step], small: int
) -> None:
    readers = [await builder.add_reader(is_owner) for is_owner in new_readers]
    for step in steps:
        await builder.run(step)
    await builder.settle()
    world = builder.world
    recent_topics = sorted(world.topics.values(), key=lambda t: t.id)[-RECENT:]
    recent_runs = sorted(world.runs)[-RECENT:]
    for reader in [world.readers[0], *readers]:
        async with parley.client(reader.token) as client:
            compare = Comparison(client, world, reader, small)
            if reader is readers[0]:
                await compare.shared_lists()
            await compare.lists()
            await compare.own_conversations()
            for topic in recent_topics:
                await compare.single_reads(topic)
            for topic in recent_topics[-2:]:
                await compare.lists_of(topic)
            for run_id in recent_runs:
                await compare.run_read(run_id)
