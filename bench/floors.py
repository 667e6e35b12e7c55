"""Reference: single-row commits per second on the same disk, with and without Parley's store."""

from __future__ import annotations

import sqlite3
import tempfile
import time
from pathlib import Path

import asyncpg
from sqlalchemy import Column, Integer, MetaData, Table, Text, insert, select

from parley.store import Store

from .harness import fresh_database
from .profiling import cpu


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
            before = cpu()
            for _ in range(rounds):
                await tx.connection.execute(select(_floor).where(_floor.c.id == 1))
            found["select_us"] = 1e6 * (cpu() - before) / rounds
        before = cpu()
        for _ in range(rounds):
            async with store.transaction():
                pass
        found["empty_tx_us"] = 1e6 * (cpu() - before) / rounds
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
