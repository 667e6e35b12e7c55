"""Backlog: what the scheduler's read of startable runs costs behind one agent with thousands of
runs waiting (one per task, each in a session of its own), with its one slot taken (as at
nearly every pass while it works through them) and free (once per turn it ends), on SQLite and
PostgreSQL. The scheduler reads at every pass, whatever woke it (any agent's text, any turn's
end), so what a busy agent's backlog costs there, every agent waits for.

Run as ``.venv/bin/python bench/backlog.py [--backend sqlite|postgresql|both]
[--backlogs 100,1000,10000] [--repeat N]``. Progress goes to stderr, the table to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

if not __package__:  # run as a script: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import insert

from bench.bulk import NOW
from bench.harness import fresh_database
from parley.conversations.model import TopicKind
from parley.store import Store
from parley.store.tables import agents

BATCH = 64  # what the scheduler asks for at each pass
CHUNK = 500  # tasks queued per transaction while filling


async def measure(backend: str, backlog: int, repeat: int) -> tuple[float, float]:
    """Median ms of one read of startable runs, the agent's slot taken and free."""
    with tempfile.TemporaryDirectory(prefix="parley-backlog-") as tmp:
        async with fresh_database(backend, Path(tmp)) as url:
            store = await Store.open(url)
            try:
                agent_id = await _busy_agent(store, backlog)
                free = await _timed(store, repeat)
                async with store.transaction() as tx:
                    [first, *_] = await tx.runs.startable(BATCH)
                    await tx.runs.start_many({first.id: "bench"}, NOW)
                taken = await _timed(store, repeat)
                assert first.agent_id == agent_id
                return taken, free
            finally:
                await store.close()


async def _busy_agent(store: Store, backlog: int) -> int:
    """One agent of one slot, with ``backlog`` tasks queued for it, as text queues them."""
    async with store.transaction() as tx:
        node = await tx.nodes.create_with_session("local", "node:local", "bench", "/tmp", NOW)
        row = {
            "name": "busy",
            "kind": "agent",
            "node_id": node.id,
            "lifecycle": "active",
            "brain": "offline",
            "workspace": "/tmp/parley-bench/busy",
            "max_sessions": 1,
            "created_at": NOW,
        }
        result = await tx.connection.execute(insert(agents).returning(agents.c.id), row)
        agent_id = int(result.scalar_one())
    for start in range(0, backlog, CHUNK):
        async with store.transaction() as tx:
            for n in range(start, min(backlog, start + CHUNK)):
                task = await tx.topics.insert(TopicKind.TASK, agent_id, NOW, text=f"task {n}")
                await tx.runs.run_for_text(agent_id, task.id, NOW)
    return agent_id


async def _timed(store: Store, repeat: int) -> float:
    took = []
    async with store.transaction() as tx:
        await tx.runs.startable(BATCH)  # warm: the statement's shape, the pages
        for _ in range(repeat):
            started = time.perf_counter()
            await tx.runs.startable(BATCH)
            took.append(time.perf_counter() - started)
    return statistics.median(took) * 1000


async def main(args: argparse.Namespace) -> int:
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    backlogs = [int(n) for n in args.backlogs.split(",")]
    print("| store | runs waiting | slot taken: ms a read | slot free: ms a read |")
    print("|---|---:|---:|---:|")
    for backend in backends:
        for backlog in backlogs:
            print(f"{backend}: {backlog} runs waiting…", file=sys.stderr, flush=True)
            taken, free = await measure(backend, backlog, args.repeat)
            print(f"| {backend} | {backlog} | {taken:.2f} | {free:.2f} |", flush=True)
    return 0


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--backlogs", default="100,1000,10000", help="runs waiting, one line each")
    parser.add_argument("--repeat", type=int, default=20, help="reads timed per line")
    return parser.parse_args()


if __name__ == "__main__":
    sys.exit(asyncio.run(main(_arguments())))
