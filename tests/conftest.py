"""Every test that touches the store runs once on SQLite and once on PostgreSQL.

PostgreSQL: ``PARLEY_TEST_POSTGRES_URL`` (default the machine's 127.0.0.1:5432, database test).
Absent, its half of the suite is skipped with the reason, except under CI=true, where it fails.
"""

from __future__ import annotations

import gc

# Collecting imports every test module, and with them Parley and its libraries: they make next to
# no garbage, yet the cyclic collector made full passes over the growing heap, 2.2 of a worker's
# 5.6 s of collection. Off until collected; then what was loaded is frozen, out of later passes.
# (Hence imports below a statement: E402 is off for this file.)
gc.disable()

import asyncio
import contextlib
import os
import shutil
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from parley.node.runner import NodeRunner
from parley.settings import Settings
from parley.store.store import Store
from parley.store.tables import metadata
from tests.federation.proxy import fault_proxy
from tests.nats_server import nats_binary, nats_server
from tests.node_creds import node_key
from tests.served import served
from tests.support import Harness, ManualClock, started
from tests.trust import share_default_trust

__all__ = [
    "fault_proxy",
    "nats_binary",
    "nats_server",
    "served",
]  # fixtures shared by several test folders

share_default_trust()  # before any test makes a client: see tests/trust.py

ADMIN_URL = os.environ.get("PARLEY_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
# What the test run itself chooses: its PostgreSQL, and the store's path (PARLEY_DIRECT_DRIVER=0:
# SQLAlchemy alone, how `./dev test` runs tests/store a second time).
KEPT_VARIABLES = ("PARLEY_TEST_POSTGRES_URL", "PARLEY_DIRECT_DRIVER", "PARLEY_WRITE_SHOTS")
# Children before parents, from the declared tables (test_migrations checks that the migrations
# create exactly these): deleting in this order breaks no foreign key.
EMPTY_TABLES = "".join(f"DELETE FROM {table.name};" for table in reversed(metadata.sorted_tables))
# Every sequence of the schema back to 1, as in a new store: tests may rely on ids from 1.
RESTART_SEQUENCES = (
    "SELECT setval(c.oid, 1, false) FROM pg_class c"
    " WHERE c.relkind = 'S' AND c.relnamespace = 'public'::regnamespace"
)


def pytest_sessionstart(session: pytest.Session) -> None:
    if session.config.pluginmanager.hasplugin("dsession"):  # xdist's controller collects nothing
        gc.enable()


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.freeze()
    gc.enable()


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No operator settings leak into a test: no PARLEY_* variables, no parley.toml."""
    for name in list(os.environ):
        if name.startswith("PARLEY_") and name not in KEPT_VARIABLES:
            monkeypatch.delenv(name)
    monkeypatch.setenv("PARLEY_CONFIG", str(tmp_path / "absent-parley.toml"))


async def create_database(name: str) -> str:
    admin = await asyncpg.connect(ADMIN_URL, timeout=5)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"


async def drop_database(name: str) -> None:
    admin = await asyncpg.connect(ADMIN_URL, timeout=5)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@contextlib.contextmanager
def database_of_its_own(label: str) -> Iterator[str]:
    """A PostgreSQL database for processes a test starts (a hub's), dropped after."""
    name = f"parley_{label}_{os.getpid()}"
    try:
        url = asyncio.run(create_database(name))
    except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
        reason = f"PostgreSQL not reachable at {ADMIN_URL}: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI=true: PostgreSQL is required)")
        pytest.skip(reason)
    try:
        yield url
    finally:
        asyncio.run(drop_database(name))


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The worker's PostgreSQL database, migrated once, as ``sqlite_template`` is: each test
    starts from a current store on either database, whichever test comes first."""
    name = f"parley_test_{os.getpid()}"
    try:
        url = asyncio.run(create_database(name))
    except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
        reason = f"PostgreSQL not reachable at {ADMIN_URL}: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI=true: PostgreSQL is required)")
        pytest.skip(reason)
    asyncio.run(_migrate(url))
    yield url
    asyncio.run(drop_database(name))


async def empty_tables(url: str) -> None:
    """A migrated database back to a new store's state. DELETE and a sequence restart, not
    TRUNCATE: on tables this small TRUNCATE costs 0.2-1.3 s (it rewrites every table's files),
    DELETE some 10 ms."""
    connection = await asyncpg.connect(url.replace("+asyncpg", ""))
    try:
        exists = await connection.fetchval("SELECT to_regclass('public.agents') IS NOT NULL")
        if exists:
            await connection.execute(EMPTY_TABLES + RESTART_SEQUENCES)
    finally:
        await connection.close()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite store migrated from empty once per session (per xdist worker): each test starts
    from a copy of it, a millisecond's work where running the migrations costs 0.15-0.3 s."""
    path = tmp_path_factory.mktemp("sqlite_template") / "parley.db"
    asyncio.run(_migrate(f"sqlite:///{path}"))
    with contextlib.closing(sqlite3.connect(path)) as connection:
        # All in the file itself: a copy of it alone is the whole store.
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


async def _migrate(url: str) -> None:
    store = await Store.open(url)
    await store.close()


def sqlite_copy(template: Path, path: Path) -> str:
    """A new, migrated SQLite store at ``path``: a copy of the session's template."""
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template, path)
    return f"sqlite:///{path}"


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return sqlite_copy(request.getfixturevalue("sqlite_template"), tmp_path / "parley.db")
    url: str = request.getfixturevalue("postgres_url")
    asyncio.run(empty_tables(url))
    return url


@pytest.fixture
def direct_driver() -> bool:
    """For a test that opens a store itself: the path the run's settings choose."""
    return Settings().direct_driver


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        heartbeat_seconds=3600,  # tests send heartbeats themselves when they need them
        sweep_seconds=3600,
    )


@pytest.fixture
async def parley(settings: Settings, clock: ManualClock) -> AsyncIterator[Harness]:
    async with started(settings, clock) as harness:
        yield harness


@pytest.fixture
async def beta(parley: Harness, tmp_path: Path) -> AsyncIterator[NodeRunner]:
    """A second node, 'beta', joined to the same mesh with its workspaces under tmp_path/beta."""
    key = await node_key(parley, "beta")
    runner = NodeRunner("beta", parley.context.broker, key, tmp_path / "beta", 3600)
    await runner.start()
    yield runner
    await runner.stop()


@pytest.fixture
async def pipes_held(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """asyncio joins a new process's pipes to the loop once the event is set (the first it
    joins is its stdin's, which a command brain and a stdio MCP server have): until then the
    process runs and its start waits, the window a stop may come in."""
    loop = asyncio.get_running_loop()
    joining = loop.connect_write_pipe
    released = asyncio.Event()

    async def joined_once_released(*args: Any, **kwargs: Any) -> Any:
        await released.wait()
        return await joining(*args, **kwargs)

    monkeypatch.setattr(loop, "connect_write_pipe", joined_once_released)
    return released
