"""A store filled in bulk to a given size: agents, people, their conversations, tasks with
agent conversations under them, a session and a run per topic, and messages.

Rows go in with multi-row inserts in chunks (one ``executemany`` each), with explicit ids so that
every reference is known without reading back. The shape per unit of size is fixed, so that a
person, a root or an agent has as much at a tenth as at full size: only the tables grow.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Table, insert, text

from parley.conversations.model import pair_key
from parley.people.model import Person, Role
from parley.store import Store
from parley.store import tables as t
from parley.tokens import hash_token

NOW = datetime(2026, 12, 1, tzinfo=UTC)
CHUNK = 5_000
AGENT_CONVERSATIONS_PER_ROOT = 10
MESSAGES_PER_AGENT_CONVERSATION = 8
OWNERS = 3
# Every row names every column, so that a chunk is one multi-row insert.
OPTIONAL = ["person_id", "text", "connection", "root_topic_id", "sender_agent_id", "pair_key"]
OPTIONAL += ["thread_id", "origin_topic_id", "addressed_agent_id"]


@dataclass(frozen=True)
class Size:
    """The full size of the issue, times ``fraction``."""

    agents: int
    agent_conversations: int
    messages: int

    @classmethod
    def of(cls, fraction: float) -> Size:
        return cls(
            agents=round(10_000 * fraction),
            agent_conversations=round(100_000 * fraction),
            messages=round(1_000_000 * fraction),
        )

    @property
    def roots(self) -> int:  # tasks, each the root of ten agent conversations
        return self.agent_conversations // AGENT_CONVERSATIONS_PER_ROOT

    @property
    def people(self) -> int:  # members with ten conversations each, whatever the size
        return OWNERS + max(1, self.conversations // 10)

    @property
    def conversations(self) -> int:
        return self.agent_conversations // 5

    @property
    def label(self) -> str:
        return f"{self.agents:,} agents, {self.agent_conversations:,} agent conversations"


@dataclass(frozen=True)
class Filled:
    """What the timed operations pick from."""

    size: Size
    owner: Person
    members: list[Person]
    agent_names: list[str]
    roots: list[int]  # task ids, each with agent conversations under it
    root_pairs: dict[int, list[tuple[int, int]]]  # root -> (sender, recipient) agent ids
    root_runs: dict[int, int]  # root -> the run of its agent in it
    root_agents: dict[int, int]  # root -> its agent
    root_people: dict[int, int]  # root -> the person who gave the task
    first_agent_id: int  # agents' ids follow their names: agentN is first_agent_id + N
    conversations: list[tuple[int, int]]  # (person id, agent id) of open conversations
    rows: dict[str, int]


class _Ids:
    def __init__(self) -> None:
        self.next: dict[str, int] = {}

    def take(self, table: str) -> int:
        value = self.next.get(table, 1)
        self.next[table] = value + 1
        return value


async def fill(store: Store, size: Size, seed: int = 7) -> Filled:
    rng = random.Random(seed)
    ids = _Ids()
    async with store.transaction() as tx:
        node = await tx.nodes.create_with_session("local", "node:local", "bench", "/tmp", NOW)
        session_agent = node.session_agent_id
    ids.next["agents"] = session_agent + 1
    ids.next["topics"] = await _max_id(store, "topics") + 1
    ids.next["sessions"] = await _max_id(store, "sessions") + 1
    ids.next["runs"] = await _max_id(store, "runs") + 1
    ids.next["messages"] = await _max_id(store, "messages") + 1
    people = [_person(n) for n in range(size.people)]
    agents = [_agent(ids.take("agents"), n, node.id) for n in range(size.agents)]
    await _insert(store, t.people, people)
    await _insert(store, t.agents, agents)
    agent_ids = [a["id"] for a in agents]
    topics: list[dict[str, Any]] = []
    sessions: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []

    def work(topic: dict[str, Any], count: int, author: dict[str, Any]) -> int:
        """A session and a finished run of the topic's agent, and ``count`` messages."""
        session_id = ids.take("sessions")
        sessions.append(_session(session_id, topic))
        run_id = ids.take("runs")
        runs.append(_run(run_id, topic, session_id))
        for _ in range(count):
            messages.append(_message(ids.take("messages"), topic, run_id, author))
        return run_id

    conversations: list[tuple[int, int]] = []
    members = people[OWNERS:]
    per_conversation = _spread(size, size.conversations)
    for n in range(size.conversations):
        person = members[n % len(members)]
        agent_id = agent_ids[(n % len(members) + n // len(members)) % len(agent_ids)]
        if (person["id"], agent_id) in conversations:
            continue
        topic = _topic(ids.take("topics"), "conversation", agent_id, person_id=person["id"])
        topics.append(topic)
        conversations.append((person["id"], agent_id))
        work(topic, per_conversation, {"author_person_id": person["id"]})
    root_pairs: dict[int, list[tuple[int, int]]] = {}
    root_runs: dict[int, int] = {}
    root_agents: dict[int, int] = {}
    root_people: dict[int, int] = {}
    for _ in range(size.roots):
        person = rng.choice(members)
        task = _topic(ids.take("topics"), "task", rng.choice(agent_ids), person_id=person["id"])
        task.update(text="review the change", origin_topic_id=task["id"])
        topics.append(task)
        root_agents[task["id"]] = task["agent_id"]
        root_people[task["id"]] = person["id"]
        root_runs[task["id"]] = work(task, 1, {"author_person_id": person["id"]})
        pairs = _pairs(rng, agent_ids, AGENT_CONVERSATIONS_PER_ROOT)
        root_pairs[task["id"]] = pairs
        for sender, recipient in pairs:
            topic = _topic(ids.take("topics"), "agent_conversation", recipient)
            topic.update(
                connection="local",
                root_topic_id=task["id"],
                origin_topic_id=task["id"],
                sender_agent_id=sender,
                pair_key=pair_key(_name_of(sender, agents), _name_of(recipient, agents)),
                thread_id=secrets.token_hex(16),
            )
            topics.append(topic)
            work(topic, MESSAGES_PER_AGENT_CONVERSATION, {"author_agent_id": sender})
    for table, rows in ((t.topics, topics), (t.sessions, sessions), (t.runs, runs)):
        await _insert(store, table, rows)
    await _insert(store, t.messages, messages)
    await _after_bulk(store)
    return Filled(
        size=size,
        owner=_as_person(people[0]),
        members=[_as_person(p) for p in members],
        agent_names=[a["name"] for a in agents],
        roots=list(root_pairs),
        root_pairs=root_pairs,
        root_runs=root_runs,
        root_agents=root_agents,
        root_people=root_people,
        first_agent_id=agent_ids[0],
        conversations=conversations,
        rows={
            "people": len(people),
            "agents": len(agents),
            "topics": len(topics),
            "agent conversations": sum(len(p) for p in root_pairs.values()),
            "runs": len(runs),
            "messages": len(messages),
        },
    )


def _spread(size: Size, conversations: int) -> int:
    """Messages per person's conversation: what the agent conversations leave of the total."""
    left = size.messages - size.agent_conversations * MESSAGES_PER_AGENT_CONVERSATION - size.roots
    return max(1, left // max(1, conversations))


def _pairs(rng: random.Random, agent_ids: Sequence[int], count: int) -> list[tuple[int, int]]:
    """``count`` distinct pairs of roles (one open agent conversation per pair and root)."""
    chosen: dict[frozenset[int], tuple[int, int]] = {}
    while len(chosen) < count:
        sender, recipient = rng.sample(agent_ids, 2)
        chosen.setdefault(frozenset((sender, recipient)), (sender, recipient))
    return list(chosen.values())


def _name_of(agent_id: int, agents: list[dict[str, Any]]) -> str:
    return str(agents[agent_id - agents[0]["id"]]["name"])


def _person(n: int) -> dict[str, Any]:
    role = Role.OWNER if n < OWNERS else Role.MEMBER
    return {
        "id": n + 1,
        "name": f"person{n}",
        "role": role.value,
        "token_hash": hash_token(token_of(n + 1)),
        "created_at": NOW,
    }


def token_of(person_id: int) -> str:
    """The API token of the filled store's person ``person_id``."""
    return f"pk_bench_{person_id}"


def _as_person(row: dict[str, Any]) -> Person:
    return Person(id=row["id"], name=row["name"], role=Role(row["role"]), created_at=NOW)


def _agent(agent_id: int, n: int, node_id: int) -> dict[str, Any]:
    return {
        "id": agent_id,
        "name": f"agent{n}",
        "kind": "agent",
        "node_id": node_id,
        "lifecycle": "active",
        "brain": "offline",
        "workspace": f"/tmp/parley-bench/agent{n}",  # made: the node is not asked at start-up
        "max_sessions": 4,
        "created_at": NOW,
    }


def _topic(topic_id: int, kind: str, agent_id: int, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(OPTIONAL)
    row.update(
        id=topic_id,
        kind=kind,
        agent_id=agent_id,
        status="open",
        created_at=NOW - timedelta(minutes=1),
        **extra,
    )
    if kind == "conversation":
        row["addressed_agent_id"] = agent_id
    return row


def _session(session_id: int, topic: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": session_id,
        "agent_id": topic["agent_id"],
        "topic_id": topic["id"],
        "created_at": NOW,
    }


def _run(run_id: int, topic: dict[str, Any], session_id: int) -> dict[str, Any]:
    return {
        "id": run_id,
        "agent_id": topic["agent_id"],
        "topic_id": topic["id"],
        "session_id": session_id,
        "state": "finished",
        "output": "looks fine",
        "created_at": NOW,
        "started_at": NOW,
        "finished_at": NOW,
    }


def _message(
    message_id: int, topic: dict[str, Any], run_id: int, author: dict[str, Any]
) -> dict[str, Any]:
    return {
        "id": message_id,
        "topic_id": topic["id"],
        "kind": "text",
        "author_person_id": author.get("author_person_id"),
        "author_agent_id": author.get("author_agent_id"),
        "recipient_agent_id": topic["agent_id"],
        "run_id": run_id,
        "body": "please have a look at the second half of the change",
        "created_at": NOW,
    }


def _chunks(rows: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), CHUNK):
        yield rows[start : start + CHUNK]


async def _insert(store: Store, table: Table, rows: list[dict[str, Any]]) -> None:
    for chunk in _chunks(rows):
        async with store.transaction() as tx:
            await tx.connection.execute(insert(table), chunk)


async def _max_id(store: Store, table: str) -> int:
    async with store.transaction() as tx:
        result = await tx.connection.execute(text(f"SELECT coalesce(max(id), 0) FROM {table}"))
        found = result.scalar()
    return int(found or 0)


async def _after_bulk(store: Store) -> None:
    """What a database that grew by inserts one at a time would have: sequences past the
    explicit ids (PostgreSQL) and fresh statistics for the planner."""
    async with store.transaction() as tx:
        if store.dialect == "postgresql":
            for table in ("people", "agents", "topics", "sessions", "runs", "messages"):
                await tx.connection.execute(
                    text(f"SELECT setval('{table}_id_seq', (SELECT max(id) FROM {table}))")
                )
        else:
            await tx.connection.execute(text("ANALYZE"))
    if store.dialect == "postgresql":  # ANALYZE outside a transaction block is not needed,
        async with store.transaction() as tx:  # but it must see the committed rows
            await tx.connection.execute(text("ANALYZE"))
