"""The hot reads and writes, timed one transaction each through the library's functions (what
an API call does, without HTTP): pick an agent, find or open an agent conversation, queue text,
a person's conversations page, the runs page, a root shown in full."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from bench.bulk import Filled
from parley.agents.selection import pick_for_new_topic
from parley.clock import SystemClock
from parley.conversations import agent_conversations, person
from parley.conversations.model import LOCAL, HopBudget, Role, pair_key
from parley.reads import details, runs, topics
from parley.store import Store, Tx

Operation = Callable[[Tx], Awaitable[object]]
BUDGET = HopBudget(hops=1_000_000_000, window=timedelta(hours=1))
CLOCK = SystemClock()


@dataclass(frozen=True)
class Timing:
    name: str
    median_ms: float
    p95_ms: float


def operations(filled: Filled, rng: random.Random) -> list[tuple[str, Callable[[], Operation]]]:
    """Each entry makes a fresh operation (new random targets) for every repetition."""
    names = filled.agent_names
    first = filled.first_agent_id
    members = {member.id: member for member in filled.members}

    def pick() -> Operation:
        name = rng.choice(names)
        return lambda tx: pick_for_new_topic(tx, CLOCK, name)

    def find_agent_conversation() -> Operation:
        root = rng.choice(filled.roots)
        sender, recipient = rng.choice(filled.root_pairs[root])
        key = pair_key(_name(filled, sender), _name(filled, recipient))
        return lambda tx: _found(tx.topics.open_agent_conversation(LOCAL, root, key))

    def open_agent_conversation() -> Operation:
        root = rng.choice(filled.roots)
        busy = {agent for pair in filled.root_pairs[root] for agent in pair}
        busy.add(filled.root_agents[root])
        free = [rng.randrange(len(names)) for _ in range(50)]
        to = next((a for a in free if a + first not in busy), free[0])  # tiny stores: any
        return lambda tx: _send_new(tx, filled, root, names[to])

    def queue_text() -> Operation:
        person_id, agent_id = rng.choice(filled.conversations)
        reader = members[person_id]
        return lambda tx: person.say(tx, CLOCK, reader, _name(filled, agent_id), "one more thing")

    def conversations_page() -> Operation:
        reader = rng.choice(filled.members)
        return lambda tx: topics.conversations_page(tx, reader)

    def runs_page_member() -> Operation:
        reader = rng.choice(filled.members)
        return lambda tx: runs.runs_page(tx, reader)

    def runs_page_owner() -> Operation:
        return lambda tx: runs.runs_page(tx, filled.owner)

    def show_root() -> Operation:
        root = rng.choice(filled.roots)
        return lambda tx: _show(tx, filled, root)

    return [
        ("pick an agent", pick),
        ("find an agent conversation", find_agent_conversation),
        ("open an agent conversation + send", open_agent_conversation),
        ("queue text (say)", queue_text),
        ("a person's conversations page", conversations_page),
        ("runs page (member)", runs_page_member),
        ("runs page (owner)", runs_page_owner),
        ("show a root", show_root),
    ]


async def time_side_by_side(
    stores: list[tuple[Store, Filled]], repeat: int, rounds: int = 5, seed: int = 11
) -> list[list[Timing]]:
    """Every operation on every store, in rounds that alternate between the stores, so that a
    change in the machine's other load falls on all of them alike; per store, its timings."""
    rngs = [random.Random(seed) for _ in stores]
    made = [operations(filled, rng) for (_, filled), rng in zip(stores, rngs, strict=True)]
    timings: list[list[Timing]] = [[] for _ in stores]
    for index, (name, _) in enumerate(made[0]):
        samples: list[list[float]] = [[] for _ in stores]
        for _ in range(rounds):
            for (store, _), ops, taken in zip(stores, made, samples, strict=True):
                make = ops[index][1]
                for _ in range(3):  # warm the caches and the pool, not timed
                    await _once(store, make())
                taken += [await _once(store, make()) for _ in range(max(1, repeat // rounds))]
        for kept, taken in zip(timings, samples, strict=True):
            taken.sort()
            p95 = taken[int(0.95 * (len(taken) - 1))]
            kept.append(Timing(name, statistics.median(taken), p95))
    return timings


async def _once(store: Store, operation: Operation) -> float:
    started = time.perf_counter()
    async with store.transaction() as tx:
        await operation(tx)
    return (time.perf_counter() - started) * 1000


async def _found(lookup: Awaitable[object | None]) -> object:
    found = await lookup
    assert found is not None, "the bench's agent conversation should exist"
    return found


async def _send_new(tx: Tx, filled: Filled, root: int, to: str) -> object:
    """A send from the root's run to an agent it has no conversation with yet: opens one."""
    run = await tx.runs.by_id(filled.root_runs[root])
    topic = await tx.topics.by_id(root)
    assert run is not None and topic is not None
    sender = Role(run.agent_id, _name(filled, run.agent_id))
    return await agent_conversations.send_from_run(
        tx, CLOCK, BUDGET, run, sender, topic, to, "could you look at this part?"
    )


async def _show(tx: Tx, filled: Filled, root: int) -> object:
    reader = filled.owner
    topic = await topics.readable_task(tx, reader, root)
    return await details.topic_detail(tx, reader, topic)


def _name(filled: Filled, agent_id: int) -> str:
    return filled.agent_names[agent_id - filled.first_agent_id]
