"""Benchmark of Parley's runtime: hops through agent conversations, hop latency, stop latency.

Run as ``.venv/bin/python bench/runtime.py`` (see bench/README.md). Parley is started in this
process the way the tests start it (``create_app`` + its lifespan + ``httpx.ASGITransport``),
once per measured phase, on a fresh SQLite file or a fresh PostgreSQL database.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import itertools
import logging
import os
import platform
import pstats
import re
import resource
import shlex
import sqlite3
import sys
import tempfile
import textwrap
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from sqlalchemy import Column, Integer, MetaData, Table, Text, event, func, insert, select
from sqlalchemy.engine import Engine

from parley.app import create_app
from parley.clock import SystemClock
from parley.context import Context
from parley.people.bootstrap import owner_token_path
from parley.settings import Settings
from parley.store import Store
from parley.store.tables import messages, runs, topics

ADMIN_URL = os.environ.get("PARLEY_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
BACKENDS = ("sqlite", "postgresql")
TARGET_HOPS = 1000.0  # hops/s on SQLite ...
TARGET_HOP_P99_MS = 20.0  # ... with this p99
TARGET_PG_SHARE = 0.5  # PostgreSQL at least half of SQLite's hops/s
TARGET_STOP_P99_MS = 100.0

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
SLEEPER = """
import os, sys, time
from pathlib import Path

pid_file = Path(sys.argv[1]) / (os.environ["PARLEY_RUN_ID"] + ".pid")
partial = pid_file.with_suffix(".tmp")
partial.write_text(str(os.getpid()))
partial.rename(pid_file)
time.sleep(60)
"""


# ---------------------------------------------------------------------------------------------
# Parley in process, on a fresh store


@dataclass
class Running:
    context: Context
    client: httpx.AsyncClient
    work: Path

    @property
    def store(self) -> Store:
        return self.context.store


async def _admin(sql: str) -> None:
    admin = await asyncpg.connect(ADMIN_URL, timeout=5)
    try:
        await admin.execute(sql)
    finally:
        await admin.close()


@contextlib.asynccontextmanager
async def fresh_database(backend: str, work: Path) -> AsyncIterator[str]:
    """A store URL nobody used before; a PostgreSQL database is dropped afterwards."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{work / 'parley.db'}"
        return
    name = f"parley_bench_{os.getpid()}"
    await _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await _admin(f'CREATE DATABASE "{name}"')
    try:
        yield ADMIN_URL.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://") + (
            f"/{name}"
        )
    finally:
        await _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.asynccontextmanager
async def parley(backend: str) -> AsyncIterator[Running]:
    with tempfile.TemporaryDirectory(prefix="parley-bench-") as tmp:
        work = Path(tmp)
        async with fresh_database(backend, work) as url:
            settings = Settings(
                data_dir=work / "data",
                database_url=url,
                heartbeat_seconds=3600,
                sweep_seconds=3600,
                log_level="warning",
            )
            app = create_app(settings, SystemClock())
            async with app.router.lifespan_context(app):
                transport = httpx.ASGITransport(app=app)
                token = _read(owner_token_path(settings.data_dir)).strip()
                async with httpx.AsyncClient(
                    transport=transport,
                    base_url="http://parley",
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=60,
                ) as client:
                    yield Running(app.state.context, client, work)


def _read(path: Path) -> str:
    return path.read_text()


def _write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip())
    return path


async def _call(client: httpx.AsyncClient, method: str, path: str, **kw: Any) -> Any:
    response = await client.request(method, f"/api/v1{path}", **kw)
    if response.status_code >= 300:
        raise RuntimeError(f"{method} {path}: {response.status_code} {response.text}")
    return response.json() if response.content else None


async def hire(client: httpx.AsyncClient, name: str, brain: str, max_sessions: int) -> None:
    body = {"name": name, "node": "local", "brain": brain, "max_sessions": max_sessions}
    agent = await _call(client, "POST", "/agents", json=body)
    if agent["lifecycle"] != "active":
        raise RuntimeError(f"agent {name} is {agent['lifecycle']}, not active")


# ---------------------------------------------------------------------------------------------
# What the store does meanwhile: transactions, statements, time spent waiting in BEGIN / COMMIT


@dataclass
class SqlCounters:
    """Transactions and statements seen by the store's engine while ``recording``."""

    commits: int = 0
    rollbacks: int = 0
    statements: int = 0
    begin_wait: float = 0.0  # seconds inside BEGIN IMMEDIATE: waiting for SQLite's write lock
    held: float = 0.0  # seconds from having begun to asking for the commit, summed
    texts: Counter[str] = field(default_factory=Counter)
    keep_texts: bool = False
    recording: bool = False
    _begun_at: dict[int, float] = field(default_factory=dict)
    _started_at: dict[int, float] = field(default_factory=dict)

    def attach(self) -> None:
        """Listen on every engine, from before any exists: adding listeners to a running engine
        can mutate a listener deque that a suspended greenlet is iterating over."""
        global _counting
        _counting = self
        if _listening:
            return
        _listening.append(True)
        # Listeners run in the order added: parley's own "begin" (BEGIN IMMEDIATE) comes first.
        event.listen(Engine, "begin", lambda conn: _counting._begun(conn))
        event.listen(Engine, "commit", lambda conn: _counting._ended(conn, "commit"))
        event.listen(Engine, "rollback", lambda conn: _counting._ended(conn, "rollback"))
        event.listen(Engine, "before_cursor_execute", lambda c, *a: _counting._before(c, a[1]))
        event.listen(Engine, "after_cursor_execute", lambda c, *a: _counting._after(c, a[1]))

    def _begun(self, conn: Any) -> None:
        self._begun_at[id(conn)] = time.perf_counter()

    def _ended(self, conn: Any, how: str) -> None:
        begun = self._begun_at.pop(id(conn), None)
        if not self.recording:
            return
        if how == "commit":
            self.commits += 1
        else:
            self.rollbacks += 1
        if begun is not None:
            self.held += time.perf_counter() - begun

    def _before(self, conn: Any, statement: str) -> None:
        self._started_at[id(conn)] = time.perf_counter()

    def _after(self, conn: Any, statement: str) -> None:
        started = self._started_at.pop(id(conn), None)
        if not self.recording:
            if statement.startswith("BEGIN"):
                self._begun_at[id(conn)] = time.perf_counter()
            return
        self.statements += 1
        if statement.startswith("BEGIN") and started is not None:
            now = time.perf_counter()
            self.begin_wait += now - started
            self._begun_at[id(conn)] = now  # SQLite's write lock is held from here
        if self.keep_texts:
            self.texts[_shorten(statement)] += 1


_listening: list[bool] = []
_counting = SqlCounters()


def _shorten(statement: str) -> str:
    flat = re.sub(r"\s+", " ", statement).strip()
    flat = re.sub(r"\(\$?\??\d*(, \$?\??\d*)*\)", "(…)", flat)
    return flat[:110]


# ---------------------------------------------------------------------------------------------
# 1 + 2: hops through agent conversations and their latency


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
) -> HopResult:
    sql = SqlCounters(keep_texts=keep_texts)
    sql.attach()
    async with parley(backend) as p:
        ping = _write(p.work / "ping.yaml", PING)
        pong = _write(p.work / "pong.yaml", PONG)
        await hire(p.client, "ping", f"scripted:{ping}", max_sessions)
        await hire(p.client, "pong", f"scripted:{pong}", max_sessions)
        tasks = [
            (await _call(p.client, "POST", "/tasks", json={"agent": "ping", "text": "start"}))["id"]
            for _ in range(pairs)
        ]
        await asyncio.sleep(warmup)
        clock = p.context.clock
        with _profiling(profile, profiler):
            started, cpu_before = clock.now(), _cpu()
            sql.recording = True
            await asyncio.sleep(seconds)
            sql.recording = False
            ended, cpu = clock.now(), _cpu() - cpu_before
        for task in tasks:
            await _call(p.client, "DELETE", f"/tasks/{task}")
        await asyncio.sleep(0.5)
        still, escaped, failed = await _leftovers(p.store, clock.now() - timedelta(seconds=0.25))
        hops, first, last = await _finished_hops(p.store, started, ended)
        latencies = await _hop_latencies(p.store, started, ended)
    span = (ended - started).total_seconds()
    per_hop = max(hops, 1)
    return HopResult(
        pairs=pairs,
        hops_per_s=hops / span,
        p50_ms=_percentile(latencies, 50),
        p99_ms=_percentile(latencies, 99),
        first_s=first,
        last_s=last,
        tx_per_hop=sql.commits / per_hop,
        statements_per_hop=sql.statements / per_hop,
        begin_wait_ms_per_hop=1000 * sql.begin_wait / per_hop,
        held_ms_per_tx=1000 * sql.held / max(1, sql.commits + sql.rollbacks),
        still_running=still,
        escaped=escaped,
        failed=failed,
        cpu_ms_per_hop=1000 * cpu / per_hop,
        sql=sql,
    )


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _in_agent_conversations() -> Any:
    return select(topics.c.id).where(topics.c.kind == "agent_conversation")


async def _finished_hops(store: Store, started: datetime, ended: datetime) -> tuple[int, int, int]:
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


async def _hop_latencies(store: Store, started: datetime, ended: datetime) -> list[float]:
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


@contextlib.contextmanager
def _profiling(path: Path | None, profiler: str) -> Any:
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if profiler == "cprofile":
        profile = cProfile.Profile()
        profile.enable()
        try:
            yield
        finally:
            profile.disable()
            profile.dump_stats(str(path.with_suffix(".prof")))
            with path.with_suffix(".cprofile.txt").open("w") as out:
                stats = pstats.Stats(profile, stream=out)
                stats.sort_stats("tottime").print_stats(60)
                stats.sort_stats("cumulative").print_stats(80)
        return
    from pyinstrument import Profiler

    sampler = Profiler(interval=0.0005, async_mode="disabled")
    sampler.start()
    try:
        yield
    finally:
        sampler.stop()
        path.with_suffix(".txt").write_text(
            sampler.output_text(unicode=True, show_all=False, short_mode=False)
        )
        path.with_suffix(".html").write_text(sampler.output_html())


def _percentile(values: list[float], pct: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


# ---------------------------------------------------------------------------------------------
# 3: stop latency of a command brain's process


@dataclass
class StopResult:
    total_ms: list[float]  # POST /runs/ID/stop sent → process gone
    post_ms: list[float]  # ... of which the HTTP call itself


def _gone(pid: int) -> bool:
    try:
        stat = _read(Path(f"/proc/{pid}/stat"))
    except OSError:  # gone between listing and reading counts as gone too
        return True
    state = stat.rsplit(")", 1)[1].split()[0]
    return state in ("Z", "X")


class _Watch(threading.Thread):
    """Polls a pid about every millisecond, from a thread, and notes when it is gone."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.gone_at = float("nan")

    def run(self) -> None:
        while not _gone(self.pid):
            time.sleep(0.001)
        self.gone_at = time.perf_counter()


async def _until(check: Callable[[], Awaitable[bool]], within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not await check():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out waiting")
        await asyncio.sleep(0.001)


async def measure_stops(backend: str, count: int) -> StopResult:
    result = StopResult([], [])
    async with parley(backend) as p:
        sleeper = _write(p.work / "sleeper.py", SLEEPER)
        pids = p.work / "pids"
        pids.mkdir()
        command = shlex.join([sys.executable, str(sleeper), str(pids)])
        await hire(p.client, "sleeper", f"command:{command}", 1)
        for _ in range(count):
            queued = await _call(
                p.client, "POST", "/conversations/sleeper/messages", json={"text": "sleep"}
            )
            run_id = queued["run_id"]
            pid_file = pids / f"{run_id}.pid"

            async def started(pid_file: Path = pid_file) -> bool:
                return pid_file.exists()  # noqa: ASYNC240 (a stat, polled)

            await _until(started)
            run = await _call(p.client, "GET", f"/runs/{run_id}")
            if run["run"]["state"] != "running":
                raise RuntimeError(f"run {run_id} is {run['run']['state']}, not running")
            watch = _Watch(int(_read(pid_file)))
            watch.start()
            sent = time.perf_counter()
            stopped = await _call(p.client, "POST", f"/runs/{run_id}/stop")
            answered = time.perf_counter()
            if stopped["stopped"] != [run_id]:
                raise RuntimeError(f"stopping run {run_id} stopped {stopped['stopped']}")
            await asyncio.to_thread(watch.join, 30)
            result.total_ms.append(1000 * (watch.gone_at - sent))
            result.post_ms.append(1000 * (answered - sent))
    return result


# ---------------------------------------------------------------------------------------------
# Reference: single-row commits per second on the same disk


def sqlite_floor(directory: Path, seconds: float, synchronous: str = "NORMAL") -> float:
    path = directory / f"floor-{synchronous.lower()}.db"
    db = sqlite3.connect(path, isolation_level=None)
    for pragma in ("journal_mode=WAL", f"synchronous={synchronous}", "busy_timeout=30000"):
        db.execute(f"PRAGMA {pragma}")
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    done, deadline = 0, time.perf_counter() + seconds
    started = time.perf_counter()
    while time.perf_counter() < deadline:
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO t (body) VALUES (?)", ("ball",))
        db.execute("COMMIT")
        done += 1
    elapsed = time.perf_counter() - started
    db.close()
    return done / elapsed


_floor = Table("floor", MetaData(), Column("id", Integer, primary_key=True), Column("body", Text))


async def sqlalchemy_floor(url: str, seconds: float) -> dict[str, float]:
    """The same loop through parley.store.engine's engine (pragmas, BEGIN IMMEDIATE, pool); and
    what one statement and one empty transaction cost this process in CPU through that stack."""
    store = await Store.open(url)
    try:
        await store.run_sync(_floor.metadata.create_all)
        done, deadline = 0, time.perf_counter() + seconds
        started = time.perf_counter()
        while time.perf_counter() < deadline:
            async with store.transaction() as tx:
                await tx.connection.execute(insert(_floor).values(body="ball"))
            done += 1
        found = {"sqlalchemy": done / (time.perf_counter() - started)}
        rounds = 500
        async with store.transaction() as tx:
            before = _cpu()
            for _ in range(rounds):
                await tx.connection.execute(select(_floor).where(_floor.c.id == 1))
            found["select_us"] = 1e6 * (_cpu() - before) / rounds
        before = _cpu()
        for _ in range(rounds):
            async with store.transaction():
                pass
        found["empty_tx_us"] = 1e6 * (_cpu() - before) / rounds
        return found
    finally:
        await store.close()


async def asyncpg_floor(url: str, seconds: float) -> float:
    connection = await asyncpg.connect(url.replace("+asyncpg", ""))
    try:
        await connection.execute("CREATE TABLE raw_floor (id serial PRIMARY KEY, body text)")
        done, deadline = 0, time.perf_counter() + seconds
        started = time.perf_counter()
        while time.perf_counter() < deadline:
            await connection.execute("INSERT INTO raw_floor (body) VALUES ($1)", "ball")
            done += 1
        return done / (time.perf_counter() - started)
    finally:
        await connection.close()


async def floors(backends: list[str], seconds: float) -> dict[str, dict[str, float]]:
    found: dict[str, dict[str, float]] = {b: {} for b in backends}
    with tempfile.TemporaryDirectory(prefix="parley-bench-floor-") as tmp:
        work = Path(tmp)
        if "sqlite" in backends:
            found["sqlite"]["raw"] = sqlite_floor(work, seconds)
            found["sqlite"]["full"] = sqlite_floor(work, seconds, "FULL")
            url = f"sqlite+aiosqlite:///{work / 'floor-sa.db'}"
            found["sqlite"] |= await sqlalchemy_floor(url, seconds)
        if "postgresql" in backends:
            async with fresh_database("postgresql", work) as url:
                found["postgresql"]["raw"] = await asyncpg_floor(url, seconds)
                found["postgresql"] |= await sqlalchemy_floor(url, seconds)
    return found


# ---------------------------------------------------------------------------------------------
# The report


def _n(value: float, digits: int = 0) -> str:
    return "-" if value != value else f"{value:,.{digits}f}"  # NaN → "-"


def report(
    args: argparse.Namespace,
    found_floors: dict[str, dict[str, float]],
    hops: dict[str, list[HopResult]],
    stops: dict[str, StopResult],
) -> str:
    backends = list(hops)
    lines = [
        f"Parley runtime benchmark — {os.cpu_count()} CPUs, Python {platform.python_version()},"
        f" window {args.seconds:g}s after {args.warmup:g}s warm-up",
        "",
        "Reference: single-row commits/s on the same disk",
    ]
    labels = {
        "raw": "raw driver (sqlite3 WAL+NORMAL / asyncpg)",
        "full": "sqlite3 WAL+FULL (an fsync per commit)",
        "sqlalchemy": "parley.store (SQLite inline / asyncpg)",
        "select_us": "  CPU µs per SELECT by key through it",
        "empty_tx_us": "  CPU µs per empty transaction through it",
    }
    lines.append(f"  {'':44}" + "".join(f"{b:>12}" for b in backends))
    for key, label in labels.items():
        cells = [_n(found_floors.get(b, {}).get(key, float("nan"))) for b in backends]
        lines.append(f"  {label:44}" + "".join(f"{c:>12}" for c in cells))
    lines += [
        "",
        "Hops through agent conversations (ping ⇄ pong; a hop = a finished run there)",
        "  trend: hops in the window's first → last second;  cpu ms: this process's CPU per hop;",
        "  lock wait: ms per hop inside BEGIN IMMEDIATE;  held: ms a transaction is open (begun →"
        " commit), mean",
    ]
    columns = "  hops/s   p50ms   p99ms     trend  cpu ms  tx/hop  sql/hop  lock wait  held"
    lines.append(f"  {'':>5} │" + " │".join(f" {b:<{len(columns) - 1}}" for b in backends))
    lines.append(f"  {'pairs':>5} │" + " │".join(columns for _ in backends))
    pairs = sorted({r.pairs for results in hops.values() for r in results})
    for n in pairs:
        cells = []
        for backend in backends:
            r = next((r for r in hops[backend] if r.pairs == n), None)
            if r is None:
                cells.append(" " * len(columns))
                continue
            cells.append(
                f"{_n(r.hops_per_s):>8}{_n(r.p50_ms, 1):>8}{_n(r.p99_ms, 1):>8}"
                f"{f'{r.first_s}→{r.last_s}':>10}{_n(r.cpu_ms_per_hop, 1):>8}"
                f"{_n(r.tx_per_hop, 2):>8}"
                f"{_n(r.statements_per_hop, 1):>9}{_lock(backend, r):>11}"
                f"{_n(r.held_ms_per_tx, 1):>6}"
            )
        lines.append(f"  {n:>5} │" + " │".join(cells))
    for backend in backends:
        for r in hops[backend]:
            if r.still_running:
                lines.append(
                    f"  ! {backend}, {r.pairs} pairs: {r.still_running} runs still open or"
                    " finishing 0.5 s after every task was deleted"
                )
            if r.escaped:
                lines.append(
                    f"  ! {backend}, {r.pairs} pairs: {r.escaped} agent conversations still open"
                    " under a deleted task (a send raced the deletion and started a new one)"
                )
            if r.failed:
                lines.append(f"  ! {backend}, {r.pairs} pairs: {r.failed} runs failed")
    best: dict[str, HopResult] = {}
    for backend in backends:
        if hops[backend]:
            best[backend] = max(hops[backend], key=lambda r: r.hops_per_s)
            b = best[backend]
            lines.append(
                f"  best {backend}: {_n(b.hops_per_s)} hops/s at {b.pairs} pairs,"
                f" p50 {_n(b.p50_ms, 1)} ms, p99 {_n(b.p99_ms, 1)} ms"
            )
    if stops:
        lines += ["", "Stop latency (POST /runs/ID/stop → command brain's process gone)"]
        for backend, s in stops.items():
            lines.append(
                f"  {backend:<11} n={len(s.total_ms):<3} p50 {_n(_percentile(s.total_ms, 50), 1)}"
                f" ms  p99 {_n(_percentile(s.total_ms, 99), 1)} ms  max"
                f" {_n(max(s.total_ms, default=float('nan')), 1)} ms   (of which the HTTP call:"
                f" p50 {_n(_percentile(s.post_ms, 50), 1)} ms, p99"
                f" {_n(_percentile(s.post_ms, 99), 1)} ms)"
            )
    lines += ["", "Targets"]
    sqlite = best.get("sqlite")
    if sqlite:
        ok = sqlite.hops_per_s >= TARGET_HOPS and sqlite.p99_ms <= TARGET_HOP_P99_MS
        lines.append(
            f"  {_mark(ok)} SQLite ≥ {TARGET_HOPS:,.0f} hops/s with p99 ≤ {TARGET_HOP_P99_MS:g} ms:"
            f" {_n(sqlite.hops_per_s)} hops/s, p99 {_n(sqlite.p99_ms, 1)} ms"
        )
        within = [
            r
            for r in hops["sqlite"]
            if r.p99_ms <= TARGET_HOP_P99_MS and r.hops_per_s >= TARGET_HOPS
        ]
        if not ok and within:
            lines.append(f"    (met at {within[0].pairs} pairs)")
    postgres = best.get("postgresql")
    if sqlite and postgres:
        share = postgres.hops_per_s / sqlite.hops_per_s
        lines.append(
            f"  {_mark(share >= TARGET_PG_SHARE)} PostgreSQL ≥ {TARGET_PG_SHARE:.0%} of SQLite:"
            f" {share:.0%}"
        )
    for backend, s in stops.items():
        p99 = _percentile(s.total_ms, 99)
        lines.append(
            f"  {_mark(p99 <= TARGET_STOP_P99_MS)} stop p99 ≤ {TARGET_STOP_P99_MS:g} ms"
            f" ({backend}): {_n(p99, 1)} ms"
        )
    if args.statements:
        for backend in backends:
            for r in hops[backend]:
                lines += ["", f"Statements per hop, {backend}, {r.pairs} pairs"]
                hopped = max(1, round(r.hops_per_s * args.seconds))
                for text, count in r.sql.texts.most_common(args.statements):
                    lines.append(f"  {count / hopped:6.2f}  {text}")
    return "\n".join(lines)


def _lock(backend: str, r: HopResult) -> str:
    return _n(r.begin_wait_ms_per_hop, 1) if backend == "sqlite" else "-"


def _mark(ok: bool) -> str:
    return "✓" if ok else "✗"


# ---------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="measured window per phase")
    parser.add_argument("--warmup", type=float, default=2.0, help="warm-up before each window")
    parser.add_argument("--pairs", default="1,8,32,64", help="concurrent ping-pong pairs to try")
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--stops", type=int, default=50, help="stops to time (0: skip)")
    parser.add_argument("--floor-seconds", type=float, default=2.0, help="0: skip the reference")
    parser.add_argument(
        "--statements", type=int, default=0, help="also list the N most frequent SQL statements"
    )
    parser.add_argument("--profile", type=Path, help="profile each hop window into this folder")
    parser.add_argument("--profiler", choices=["pyinstrument", "cprofile"], default="pyinstrument")
    return parser.parse_args(argv)


async def main(args: argparse.Namespace) -> None:
    backends = list(BACKENDS) if args.backend == "both" else [args.backend]
    pairs = [int(n) for n in args.pairs.split(",") if n.strip()]
    max_sessions = max(64, *pairs)
    found_floors = await floors(backends, args.floor_seconds) if args.floor_seconds > 0 else {}
    hops: dict[str, list[HopResult]] = {b: [] for b in backends}
    stops: dict[str, StopResult] = {}
    for backend in backends:
        for n in pairs:
            print(f"… {backend}: {n} pairs", file=sys.stderr, flush=True)
            profile = args.profile / f"{backend}-{n}" if args.profile else None
            hops[backend].append(
                await measure_hops(
                    backend,
                    n,
                    args.warmup,
                    args.seconds,
                    max_sessions,
                    profile,
                    args.profiler,
                    bool(args.statements),
                )
            )
        if args.stops > 0:
            print(f"… {backend}: {args.stops} stops", file=sys.stderr, flush=True)
            stops[backend] = await measure_stops(backend, args.stops)
    print(report(args, found_floors, hops, stops))


def _quiet_and_isolated() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # No operator settings leak in: Settings also reads PARLEY_* and parley.toml.
    for name in list(os.environ):
        if name.startswith("PARLEY_") and name != "PARLEY_BENCH_POSTGRES_URL":
            del os.environ[name]
    os.environ["PARLEY_CONFIG"] = "/nonexistent/parley.toml"


if __name__ == "__main__":
    _quiet_and_isolated()
    asyncio.run(main(parse_args()))
