"""The query plans of the paginated reads: each list's page should be one range of an index,
not a scan of its table and a sort. Fills a fresh store with rows (bulk inserts), calls the
library's read functions as a member and as an owner, and prints EXPLAIN of every statement they
ran, on SQLite and on PostgreSQL.

Run as ``.venv/bin/python bench/plans.py [--backend sqlite|postgresql|both] [--topics N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import secrets
import sys
import tempfile
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import event, insert, text

from bench.harness import fresh_database
from parley.conversations.model import TaskStatus
from parley.people.model import Person, Role
from parley.reads import agents, details, directory, runs, topics
from parley.runs.model import RunState
from parley.store import Store, Tx
from parley.store import tables as t

NOW = datetime(2026, 12, 1, tzinfo=UTC)
Read = Callable[[Tx], Awaitable[Any]]
OPTIONAL = ["person_id", "reply_topic_id", "connection", "root_topic_id", "sender_agent_id"]
OPTIONAL += ["pair_key", "thread_id"]  # each row names every column: one executemany


async def fill(store: Store, n_topics: int) -> tuple[Person, Person, int]:
    """People, agents, topics of every kind (a few deleted), a run and two messages each.
    Returns a member, an owner and an open task's id (every person reads it)."""
    rng = random.Random(7)
    async with store.transaction() as tx:
        node = await tx.nodes.create_with_session("local", "node:local", "h", "/tmp", NOW)
        agent_ids = [
            await tx.agents.insert(
                name=f"agent{n}", node_id=node.id, lifecycle="active", brain="offline",
                max_sessions=1, created_at=NOW,
            )
            for n in range(10)
        ]  # fmt: skip
        people = [
            await tx.people.add(f"p{n}", Role.OWNER if n < 3 else Role.MEMBER, f"h{n}", NOW)
            for n in range(200)
        ]
        rows = [_topic(rng, topic_id, people, agent_ids) for topic_id in range(1, n_topics + 1)]
        keys: set[tuple[int, str]] = set()
        for row in rows:  # one open agent conversation per root and pair of roles
            key = (row["root_topic_id"], row["pair_key"])
            if row["kind"] == "agent_conversation" and (key in keys or row["closed_at"]):
                row["closed_at"] = NOW
            keys.add(key)
        await tx.connection.execute(insert(t.topics), rows)
        sessions = [
            {"id": r["id"], "agent_id": r["agent_id"], "topic_id": r["id"], "created_at": NOW}
            for r in rows
        ]
        await tx.connection.execute(insert(t.sessions), sessions)
        states = [s.value for s in RunState if s is not RunState.RUNNING]
        await tx.connection.execute(
            insert(t.runs),
            [
                {"agent_id": r["agent_id"], "topic_id": r["id"], "session_id": r["id"],
                 "state": rng.choice(states), "created_at": NOW}
                for r in rows
            ],
        )  # fmt: skip
        await tx.connection.execute(
            insert(t.messages),
            [
                {"topic_id": r["id"], "kind": "text", "body": "words", "created_at": NOW}
                for r in rows
                for _ in range(2)
            ],
        )
        for n, agent_id in enumerate(agent_ids):
            for _ in range(300):
                await tx.agents.add_memory(agent_id, f"note {n}", None, NOW)
        await tx.connection.execute(text("ANALYZE"))
    if store.dialect == "postgresql":  # serial sequences follow the explicit ids
        async with store.transaction() as tx:
            await tx.connection.execute(
                text("SELECT setval('topics_id_seq', (SELECT max(id) FROM topics))")
            )
    busy = next(r for r in reversed(rows) if r["kind"] == "task" and r["closed_at"] is None)
    return people[10], people[0], busy["id"]


def _topic(
    rng: random.Random, topic_id: int, people: list[Person], agent_ids: list[int]
) -> dict[str, Any]:
    kind = rng.choices(["conversation", "task", "agent_conversation"], [4, 3, 3])[0]
    row: dict[str, Any] = {
        "id": topic_id,
        "kind": kind,
        "agent_id": rng.choice(agent_ids),
        "created_at": NOW,
        "status": "open",
        "closed_at": NOW if rng.random() < 0.05 else None,
        **dict.fromkeys(OPTIONAL),
    }
    if kind == "conversation" or topic_id < 10:
        row.update(kind="conversation", person_id=rng.choice(people).id)  # no addressed agent:
        # the one-open-conversation index leaves such rows alone
    elif kind == "task":
        row["status"] = rng.choice([s.value for s in TaskStatus])
        if rng.random() < 0.2:
            row["reply_topic_id"] = rng.randrange(1, topic_id)
    else:
        row.update(
            connection="local",
            root_topic_id=rng.randrange(1, topic_id),
            sender_agent_id=rng.choice(agent_ids),
            pair_key=f"agent{rng.randrange(3)}|agent{rng.randrange(3, 6)}",
            thread_id=secrets.token_hex(16),
        )
    return row


def reads(member: Person, owner: Person, busy: int) -> list[tuple[str, Read]]:
    return [
        ("conversations (member)", lambda tx: topics.conversations_page(tx, member)),
        ("conversations deleted (owner)", lambda tx: topics.conversations_page(tx, owner, True)),
        ("tasks (member)", lambda tx: topics.tasks_page(tx, member)),
        ("tasks done (member)", lambda tx: topics.tasks_page(tx, member, TaskStatus.DONE)),
        ("subtasks of a topic", lambda tx: topics.tasks_page(tx, owner, None, True, busy)),
        ("agent conversations (member)", lambda tx: topics.agent_conversations_page(tx, member)),
        (
            "agent conversations of a root",
            lambda tx: topics.agent_conversations_page(tx, owner, True, busy),
        ),
        (
            "history between two roles",
            lambda tx: details.history_page(tx, owner, "agent0", "agent4"),
        ),
        ("runs (member)", lambda tx: runs.runs_page(tx, member)),
        ("runs of an agent (member)", lambda tx: runs.runs_page(tx, member, "agent3")),
        ("runs finished (owner)", lambda tx: runs.runs_page(tx, owner, None, [RunState.FINISHED])),
        ("runs of a topic", lambda tx: runs.runs_page(tx, owner, topic=busy)),
        ("a run (single read)", lambda tx: runs.readable_run(tx, owner, busy)),
        ("messages of a topic", lambda tx: topics.messages_page(tx, owner, busy)),
        ("people", lambda tx: directory.people_page(tx)),
        ("agents", lambda tx: agents.agents_page(tx)),
        ("memory of an agent", lambda tx: agents.memory_page(tx, "agent2")),
        ("turns waiting (member)", lambda tx: runs.turns_page(tx, member)),
    ]


async def explain(store: Store, read: Read) -> list[str]:
    """Run ``read``, then EXPLAIN the page's query among the SELECTs it sent."""
    seen: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append((statement, parameters))

    engine = getattr(store.engine, "sync_engine", store.engine)
    event.listen(engine, "before_cursor_execute", record)
    try:
        async with store.transaction() as tx:
            await read(tx)
    finally:
        event.remove(engine, "before_cursor_execute", record)
    # The page's own query: the first with a LIMIT (a single read has none: the last).
    paged = [(sql, params) for sql, params in seen if " LIMIT " in sql]
    statement, parameters = paged[0] if paged else seen[-1]
    prefix = "EXPLAIN QUERY PLAN " if store.dialect == "sqlite" else "EXPLAIN "

    def plan(connection: Any) -> list[str]:
        rows = connection.exec_driver_sql(prefix + statement, parameters)
        return [str(row[-1]) for row in rows]

    return await store.run_sync(plan)


async def main(args: argparse.Namespace) -> None:
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    for backend in backends:
        with tempfile.TemporaryDirectory(prefix="parley-plans-") as tmp:
            async with fresh_database(backend, Path(tmp)) as url:
                store = await Store.open(url)
                try:
                    member, owner, busy = await fill(store, args.topics)
                    print(f"\n## {backend}: {args.topics} topics, as many runs, twice the messages")
                    for name, read in reads(member, owner, busy):
                        print(f"\n{name}")
                        for line in await explain(store, read):
                            print(f"    {line}")
                finally:
                    await store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--topics", type=int, default=20_000)
    asyncio.run(main(parser.parse_args()))
