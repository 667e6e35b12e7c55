"""Hops through agent conversations and their latency: ping-pong pairs, counted in the store."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from parley.store import Store
from parley.store.tables import messages, runs, topics

from .harness import call, hire, parley, vacuumed, write
from .profiling import cpu, profiling
from .statements import SqlCounters

PING = """
rules:
  - when: {text: "^start$"}
    do:
      - send: {to: pong, text: "ball"}
  - when: {from: pong}
    do:
      - reply: "{text}"
"""
PONG = """
rules:
  - when: {from: ping}
    do:
      - reply: "{text}"
"""


@dataclass
class HopResult:
    pairs: int
    hops_per_s: float
    p50_ms: float
    p99_ms: float
    first_s: float  # hops in the window's first second
    last_s: float  # ... and in its last
    tx_per_hop: float
    statements_per_hop: float
    begin_wait_ms_per_hop: float  # wall time inside BEGIN IMMEDIATE (SQLite's write lock)
    held_ms_per_tx: float  # mean time from begun to commit asked: how long a writer holds it
    still_running: int  # runs open or finishing after the tasks were deleted
    escaped: int  # agent conversations left open under a deleted task
    failed: int  # runs that failed (none should)
    cpu_ms_per_hop: float  # this process's CPU time (all threads) per hop
    sql: SqlCounters


async def measure_hops(
    backend: str,
    pairs: int,
    warmup: float,
    seconds: float,
    max_sessions: int,
    profile: Path | None,
    profiler: str,
    keep_texts: bool,
    settle: Callable[[], None] | None = None,
) -> HopResult:
    """``settle``: called once Parley has started and the pairs are set off (the server's
    ``started_for_good``, to measure it as it runs)."""
    sql = SqlCounters(keep_texts=keep_texts)
    sql.attach()
    async with parley(backend) as p:
        ping = write(p.work / "ping.yaml", PING)
        pong = write(p.work / "pong.yaml", PONG)
        await hire(p.client, "ping", f"scripted:{ping}", max_sessions)
        await hire(p.client, "pong", f"scripted:{pong}", max_sessions)
        tasks = [
            (await call(p.client, "POST", "/tasks", json={"agent": "ping", "text": "start"}))["id"]
            for _ in range(pairs)
        ]
        if settle is not None:
            settle()
        await asyncio.sleep(warmup)
        if backend == "postgresql":
            # What autovacuum does to a database in use, which this machine's PostgreSQL does
            # not: without it, the plans its connections cached while the tables were empty
            # (scans of runs and messages) stayed, and each second was slower than the last.
            await vacuumed(p.context.settings.database_url)
        clock = p.context.clock
        with profiling(profile, profiler):
            started, cpu_before = clock.now(), cpu()
            sql.recording = True
            await asyncio.sleep(seconds)
            sql.recording = False
            ended, spent = clock.now(), cpu() - cpu_before
        for task in tasks:
            await call(p.client, "DELETE", f"/tasks/{task}")
        await asyncio.sleep(0.5)
        still, escaped, failed = await _leftovers(p.store, clock.now() - timedelta(seconds=0.25))
        hops, first, last = await finished_hops(p.store, started, ended)
        latencies = await hop_latencies(p.store, started, ended)
    span = (ended - started).total_seconds()
    per_hop = max(hops, 1)
    return HopResult(
        pairs=pairs,
        hops_per_s=hops / span,
        p50_ms=percentile(latencies, 50),
        p99_ms=percentile(latencies, 99),
        first_s=first,
        last_s=last,
        tx_per_hop=sql.commits / per_hop,
        statements_per_hop=sql.statements / per_hop,
        begin_wait_ms_per_hop=1000 * sql.begin_wait / per_hop,
        held_ms_per_tx=1000 * sql.held / max(1, sql.commits + sql.rollbacks),
        still_running=still,
        escaped=escaped,
        failed=failed,
        cpu_ms_per_hop=1000 * spent / per_hop,
        sql=sql,
    )


def _in_agent_conversations() -> Any:
    return select(topics.c.id).where(topics.c.kind == "agent_conversation")


async def finished_hops(store: Store, started: datetime, ended: datetime) -> tuple[int, int, int]:
    """Runs finished in agent conversations within the window; and in its first and last second."""
    query = select(runs.c.finished_at).where(
        runs.c.state == "finished",
        runs.c.topic_id.in_(_in_agent_conversations()),
        runs.c.finished_at >= started,
        runs.c.finished_at < ended,
    )
    async with store.transaction() as tx:
        times = [row.finished_at for row in await tx.connection.execute(query)]
    one = timedelta(seconds=1)
    first = sum(1 for t in times if t < started + one)
    last = sum(1 for t in times if t >= ended - one)
    return len(times), first, last


async def turns_per_start(store: Store, started: datetime, ended: datetime) -> float:
    """Turns of agent conversations started in the window, per start: a batch of starts is
    stamped with one time, so the runs sharing a start time went out together."""
    query = (
        select(runs.c.started_at, func.count().label("turns"))
        .where(
            runs.c.topic_id.in_(_in_agent_conversations()),
            runs.c.started_at >= started,
            runs.c.started_at < ended,
        )
        .group_by(runs.c.started_at)
    )
    async with store.transaction() as tx:
        batches = [row.turns for row in await tx.connection.execute(query)]
    return sum(batches) / len(batches) if batches else 0.0


async def hop_latencies(store: Store, started: datetime, ended: datetime) -> list[float]:
    """For each text written in the window, the time since the previous text of its agent
    conversation: the hop that answered it (the writer is the run that took the previous one)."""
    query = (
        select(messages.c.topic_id, messages.c.created_at)
        .where(
            messages.c.kind == "text",
            messages.c.topic_id.in_(_in_agent_conversations()),
            messages.c.created_at < ended,
        )
        .order_by(messages.c.topic_id, messages.c.id)
    )
    async with store.transaction() as tx:
        rows = list(await tx.connection.execute(query))
    latencies = []
    for previous, current in itertools.pairwise(rows):
        if previous.topic_id == current.topic_id and current.created_at >= started:
            latencies.append(1000 * (current.created_at - previous.created_at).total_seconds())
    return latencies


async def _leftovers(store: Store, since: datetime) -> tuple[int, int, int]:
    """After every task was deleted nothing should be queued or running, nor finish any more,
    and no agent conversation should be open under a deleted task; no run should have failed.
    Returns (runs open or finished since ``since``, conversations open under closed roots,
    failed runs)."""
    in_play = runs.c.topic_id.in_(_in_agent_conversations())
    still = select(func.count()).where(
        in_play,
        runs.c.state.in_(["queued", "running"])
        | ((runs.c.state == "finished") & (runs.c.finished_at >= since)),
    )
    root = topics.alias("root")
    escaped = (
        select(func.count())
        .select_from(topics.join(root, root.c.id == topics.c.root_topic_id))
        .where(
            topics.c.kind == "agent_conversation",
            topics.c.closed_at.is_(None),
            root.c.closed_at.is_not(None),
        )
    )
    failed = select(func.count()).where(in_play, runs.c.state == "failed")
    async with store.transaction() as tx:
        return (
            int((await tx.connection.execute(still)).scalar_one()),
            int((await tx.connection.execute(escaped)).scalar_one()),
            int((await tx.connection.execute(failed)).scalar_one()),
        )


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]
