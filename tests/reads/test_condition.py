"""The store's one visibility condition, on random rows written straight into the store: every
list (a page of each kind, of runs) and every single read (the condition plus an id) agree with
each other and with the pure model, for owners, members and people who wrote nothing."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.conversations.model import TopicKind
from parley.people.model import Person, Role
from parley.reads.model import Window
from parley.store import Store, Tx
from tests.reads.model import Reader, Run, Topic, World

NOW = datetime(2026, 12, 1, tzinfo=UTC)
EVERYTHING = Window(limit=200)


@dataclass(frozen=True)
class Row:
    kind: TopicKind
    person: int  # which person a conversation is with
    root: int  # an agent conversation's root: one of the rows before it
    closed: bool
    runs: int


ROWS = st.lists(
    st.builds(
        Row,
        st.sampled_from([TopicKind.CONVERSATION, TopicKind.TASK, TopicKind.AGENT_CONVERSATION]),
        st.integers(0, 3),
        st.integers(0, 30),
        st.booleans(),
        st.integers(0, 2),
    ),
    min_size=1,
    max_size=12,
)


@dataclass
class Stored:
    store: Store
    people: list[Person]
    agent_id: int
    world: World


@pytest.fixture
async def stored(database_url: str) -> AsyncIterator[Stored]:
    store = await Store.open(database_url)
    async with store.transaction() as tx:
        node = await tx.nodes.create_with_session("here", "node:here", "host", "/tmp", NOW)
        agent_id = await tx.agents.insert(
            name="worker",
            node_id=node.id,
            lifecycle="active",
            brain="offline",
            max_sessions=1,
            created_at=NOW,
        )
        roles = [Role.OWNER, Role.MEMBER, Role.OWNER, Role.MEMBER]
        people = [
            await tx.people.add(f"p{n}", role, secrets.token_hex(16), NOW)
            for n, role in enumerate(roles)
        ]
    world = World(readers=[Reader(p.id, p.name, p.is_owner, "") for p in people])
    try:
        yield Stored(store, people, agent_id, world)
    finally:
        await store.close()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=ROWS)
async def test_lists_and_single_reads_agree_with_each_other_and_the_rule(
    stored: Stored, rows: list[Row]
) -> None:
    before = set(stored.world.topics), set(stored.world.runs)
    async with stored.store.transaction() as tx:
        for row in rows:
            await _write(tx, stored, row)
    # Single reads of what this example wrote (the lists cover everything written so far).
    new_topics = set(stored.world.topics) - before[0]
    new_runs = set(stored.world.runs) - before[1]
    stranger = Person(id=10_000, name="stranger", role=Role.MEMBER, created_at=NOW)
    async with stored.store.transaction() as tx:
        for person in [*stored.people, stranger]:
            await _agree(tx, stored.world, person, new_topics, new_runs)


async def _write(tx: Tx, stored: Stored, row: Row) -> None:
    world = stored.world
    person = stored.people[row.person]
    values: dict[str, object] = {}
    if row.kind is TopicKind.CONVERSATION:
        values = {"person_id": person.id, "addressed_agent_id": stored.agent_id}
        earlier = await tx.topics.open_conversation(person.id, stored.agent_id)
        if earlier is not None:  # one open conversation per person and agent: delete it
            await tx.topics.close([earlier.id], "deleted", NOW)
            world.topics[earlier.id].deleted = True
    if row.kind is TopicKind.AGENT_CONVERSATION:
        roots = [t for t in world.topics.values() if t.root_id == t.id]
        if not roots:
            return
        root = roots[row.root % len(roots)]
        values = {
            "connection": "local",
            "root_topic_id": root.id,
            "sender_agent_id": stored.agent_id,
            "pair_key": secrets.token_hex(8),  # one open conversation per (root, pair)
            "thread_id": secrets.token_hex(16),
        }
    topic = await tx.topics.insert(row.kind, stored.agent_id, NOW, **values)
    if row.closed:  # what the rule reads is the root's closing; any topic may be closed here
        await tx.topics.close([topic.id], "closed at random", NOW)
    person_id = person.id if row.kind is TopicKind.CONVERSATION else None
    world.topics[topic.id] = Topic(
        topic.id,
        row.kind.value,
        "worker",
        person_id,
        topic.root_id,
        deleted=row.closed and topic.root_id == topic.id,
    )
    session = await tx.runs.session(stored.agent_id, topic.id, NOW)
    for _ in range(row.runs):
        run_id = await tx.runs.enqueue(stored.agent_id, topic.id, session.id, NOW)
        world.runs[run_id] = Run(run_id, topic.id, "worker", "queued")


async def _agree(
    tx: Tx, world: World, person: Person, new_topics: set[int], new_runs: set[int]
) -> None:
    reader = Reader(person.id, person.name, person.is_owner, "")
    listed: set[int] = set()
    for kind in (TopicKind.CONVERSATION, TopicKind.TASK, TopicKind.AGENT_CONVERSATION):
        window = EVERYTHING
        while True:
            page = await tx.topics.readable_page(person, window, kind, include_closed=True)
            listed |= {topic.id for topic in page.items}
            if page.next_key is None:
                break
            window = Window(EVERYTHING.limit, page.next_key)
    modelled = {id for id, topic in world.topics.items() if world.may_read(reader, topic)}
    assert listed == modelled, person
    single = {id for id in new_topics if await tx.topics.readable(person, id) is not None}
    assert single == listed & new_topics, person

    listed_runs: set[int] = set()
    window = EVERYTHING
    while True:
        runs = await tx.runs.readable_page(person, window)
        listed_runs |= {run.id for run in runs.items}
        if runs.next_key is None:
            break
        window = Window(EVERYTHING.limit, runs.next_key)
    modelled_runs = {
        id for id, run in world.runs.items() if world.may_read(reader, world.topics[run.topic_id])
    }
    assert listed_runs == modelled_runs, person
    single_runs = {id for id in new_runs if await tx.runs.readable(person, id) is not None}
    assert single_runs == modelled_runs & new_runs, person
