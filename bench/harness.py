"""Parley in this process, on a fresh store, and calls to its API."""

from __future__ import annotations

import contextlib
import os
import tempfile
import textwrap
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from parley.app import create_app
from parley.clock import SystemClock
from parley.context import Context
from parley.people.bootstrap import owner_token_path
from parley.settings import Settings
from parley.store import Store

ADMIN_URL = os.environ.get("PARLEY_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


@dataclass
class Running:
    context: Context
    client: httpx.AsyncClient
    work: Path
    transport: httpx.ASGITransport

    @property
    def store(self) -> Store:
        return self.context.store


async def _admin(sql: str, url: str = ADMIN_URL) -> None:
    """``sql`` outside a transaction (``CREATE DATABASE``, ``VACUUM``), on the database at
    ``url`` (by default the bench's administration database)."""
    admin = await asyncpg.connect(url, timeout=5)
    try:
        await admin.execute(sql)
    finally:
        await admin.close()


async def vacuumed(url: str) -> None:
    """``VACUUM ANALYZE`` of the PostgreSQL database at ``url`` (a store URL): what autovacuum
    does for a database in use. This machine's PostgreSQL runs with ``autovacuum = off``, and
    without it the runs' dead rows and the planner's empty-table statistics made each window
    slower than the one before (a quarter fewer statements by the fifth 8-second window of 4
    pairs; flat with this between windows)."""
    await _admin("VACUUM ANALYZE", url.replace("postgresql+asyncpg://", "postgresql://"))


@contextlib.asynccontextmanager
async def fresh_database(backend: str, work: Path, tag: str = "") -> AsyncIterator[str]:
    """A store URL nobody used before (``tag`` tells several apart); a PostgreSQL database is
    dropped afterwards."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{work / f'parley{tag}.db'}"
        return
    name = f"parley_bench_{os.getpid()}{tag}"
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
        async with fresh_database(backend, work) as url, serving(url, work) as running:
            yield running


@contextlib.asynccontextmanager
async def serving(url: str, work: Path, token: str | None = None) -> AsyncIterator[Running]:
    """Parley in this process on the store at ``url``, its data folder in ``work``; the client
    calls as ``token`` (by default the owner's, saved when the store had nobody in it)."""
    settings = Settings(
        data_dir=work / "data",
        database_url=url,
        heartbeat_seconds=3600,
        sweep_seconds=3600,
        log_level="warning",
        # The pairs ping-pong for ever on purpose: a budget they never reach, still
        # counted on every hop, so that its cost is in the figures.
        hop_budget=1_000_000_000,
    )
    app = create_app(settings, SystemClock())
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        token = token or read(owner_token_path(settings.data_dir)).strip()
        async with httpx.AsyncClient(
            transport=transport,
            base_url="http://parley",
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        ) as client:
            yield Running(app.state.context, client, work, transport)


def read(path: Path) -> str:
    return path.read_text()


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip())
    return path


async def call(client: httpx.AsyncClient, method: str, path: str, **kw: Any) -> Any:
    response = await client.request(method, f"/api/v1{path}", **kw)
    if response.status_code >= 300:
        raise RuntimeError(f"{method} {path}: {response.status_code} {response.text}")
    return response.json() if response.content else None


async def hire(client: httpx.AsyncClient, name: str, brain: str, max_sessions: int) -> None:
    body = {"name": name, "node": "local", "brain": brain, "max_sessions": max_sessions}
    agent = await call(client, "POST", "/agents", json=body)
    if agent["lifecycle"] != "active":
        raise RuntimeError(f"agent {name} is {agent['lifecycle']}, not active")
