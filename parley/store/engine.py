"""Engines by URL: SQLite tuned for one writer (WAL, busy timeout, BEGIN IMMEDIATE) and used
inline (see ``connection.py``), PostgreSQL through asyncpg."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy import create_engine as create_sync_engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from parley.errors import Invalid
from parley.store.checkpoints import PAGE_BYTES, RESTART_PAGES
from parley.store.compiled import SHARED

SUPPORTED_DRIVERS = ("sqlite+pysqlite", "postgresql+asyncpg")
# A log a burst left longer is cut back to this when it starts over (see checkpoints.py): four
# times what the checkpointer lets it reach before it makes it start over (64 MB).
LOG_LIMIT_BYTES = 4 * RESTART_PAGES * PAGE_BYTES


def normalise_url(url: str) -> str:
    """Accept the plain forms an operator types (``postgresql://``, ``sqlite:///``)."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise Invalid(f"database URL {url!r} is not a URL: {exc}") from exc
    driver = {
        "sqlite": "sqlite+pysqlite",
        "sqlite+aiosqlite": "sqlite+pysqlite",  # the spelling of earlier versions
        "postgresql": "postgresql+asyncpg",
        "postgres": "postgresql+asyncpg",
    }
    name = driver.get(parsed.drivername, parsed.drivername)
    if name not in SUPPORTED_DRIVERS:
        raise Invalid(f"database URL {url!r}: use sqlite:///PATH or postgresql://USER@HOST/DB")
    return parsed.set(drivername=name).render_as_string(hide_password=False)


def create_engine(url: str) -> AsyncEngine | Engine:
    url = normalise_url(url)
    if url.startswith("sqlite"):
        return _sqlite_engine(url)
    return create_async_engine(
        url,
        pool_size=10,
        max_overflow=10,
        pool_pre_ping=False,
        execution_options={"compiled_cache": SHARED},
    )


# Set in a SQLite connection's ``info`` while a statement runs there outside any transaction.
ALONE = "parley.alone"


def _sqlite_engine(url: str) -> Engine:
    database = make_url(url).database
    if database and database != ":memory:":
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_sync_engine(
        url,
        connect_args={"timeout": 30, "check_same_thread": False},
        execution_options={"compiled_cache": SHARED},
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let us issue BEGIN ourselves; pysqlite's implicit transactions defer the write lock.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in (
            "journal_mode=WAL",
            "synchronous=NORMAL",
            "busy_timeout=30000",
            "foreign_keys=ON",
            "wal_autocheckpoint=0",  # never in a commit: see checkpoints.py
            f"journal_size_limit={LOG_LIMIT_BYTES}",
        ):
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        # Take the write lock up front: no deadlock between two readers upgrading to writers.
        # On the driver's connection itself: SQLAlchemy's execution path around one fixed
        # statement cost a quarter of a short transaction.
        if connection.info.get(ALONE):
            return  # a statement alone (Store.single_read): sqlite3 reads in autocommit
        dbapi = connection.dialect.loaded_dbapi
        try:
            connection.connection.dbapi_connection.execute("BEGIN IMMEDIATE")
        except dbapi.Error as error:  # wrapped as SQLAlchemy wraps a statement's: the store maps it
            raise DBAPIError.instance("BEGIN IMMEDIATE", (), error, dbapi.Error) from error

    return engine
