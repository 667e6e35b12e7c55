"""Run the Alembic migrations at start, on the engine the store already holds."""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, text
from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS = Path(__file__).parent / "migrations"
log = logging.getLogger(__name__)
Direction = Literal["upgrade", "downgrade"]


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


async def upgrade_to_head(engine: AsyncEngine | Engine) -> None:
    await migrate(engine, "upgrade", "head")


async def migrate(engine: AsyncEngine | Engine, direction: Direction, revision: str) -> None:
    if isinstance(engine, Engine):
        _migrate_sqlite(engine, direction, revision)
        return
    async with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            # Several hubs starting at once must not migrate twice.
            await connection.execute(text("SELECT pg_advisory_xact_lock(87000001)"))
        await connection.run_sync(_run, direction, revision)


def _migrate_sqlite(engine: Engine, direction: Direction, revision: str) -> None:
    """SQLite changes a table's constraints by copying it (Alembic's batch mode), and a copy
    dropped under foreign keys pointing at it fails them for good. Foreign keys are off while
    migrating (SQLite switches them only outside a transaction) and checked before commit."""
    with engine.connect() as connection:
        raw = connection.connection.dbapi_connection
        assert raw is not None
        raw.execute("PRAGMA foreign_keys=OFF")
        try:
            with connection.begin():
                _run(connection, direction, revision)
                broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise RuntimeError(f"a migration broke foreign keys: {broken[:5]}")
        finally:
            raw.execute("PRAGMA foreign_keys=ON")


def _run(connection: Connection, direction: Direction, revision: str) -> None:
    config = alembic_config(connection)
    with _alembic_quiet():
        before = _revision(connection)
        if direction == "upgrade" and revision == "head" and before == _head():
            return  # Alembic's environment would load every migration file again (~45 ms)
        if direction == "upgrade":
            command.upgrade(config, revision)
        else:
            command.downgrade(config, revision)
        after = _revision(connection)
    if after != before:
        log.info("store migrated to %s (from %s)", after, before or "empty")


def _revision(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


@functools.cache
def _head() -> str | None:
    """The newest migration's revision: the files are read once per process."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


@contextlib.contextmanager
def _alembic_quiet() -> Iterator[None]:
    """Alembic logs each step with its migration's whole docstring (some 40 lines on a first
    start); an operator needs the one line ``_run`` writes. Its warnings still come through."""
    logger = logging.getLogger("alembic")
    level = logger.level
    logger.setLevel(max(logging.WARNING, level))
    try:
        yield
    finally:
        logger.setLevel(level)
