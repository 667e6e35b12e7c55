"""Run the Alembic migrations at start, on the engine the store already holds."""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from sqlalchemy import Connection, Engine, inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations"
VERSIONS = MIGRATIONS / "versions"
VERSION_TABLE = "alembic_version"  # where Alembic keeps a store's revision
log = logging.getLogger(__name__)
Direction = Literal["upgrade", "downgrade"]


def alembic_config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

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
    with _alembic_quiet():
        before = _revision(connection)
        if direction == "upgrade" and revision == "head" and before == newest_revision():
            # A store already current, as at nearly every start: Alembic is not even imported
            # (its import took a tenth of `parley serve`'s start), nor its files read.
            return
        from alembic import command

        config = alembic_config(connection)
        if direction == "upgrade":
            command.upgrade(config, revision)
        else:
            command.downgrade(config, revision)
        after = _revision(connection)
    if after != before:
        log.info("store migrated to %s (from %s)", after, before or "empty")


def _revision(connection: Connection) -> str | None:
    """The store's revision, read from Alembic's table as Alembic reads it (None: empty)."""
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    found = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
    if len(found) > 1:
        raise RuntimeError(f"the store is at several revisions at once: {sorted(found)}")
    return found[0] if found else None


@functools.cache
def newest_revision() -> str:
    """The newest migration's revision, from the files' names alone: each migration is named
    after its revision, numbered in the order Alembic applies them (tests/store/
    test_migrations.py checks both against Alembic's own reading of the files)."""
    return max(path.name.partition("_")[0] for path in VERSIONS.glob("[0-9]*_*.py"))


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
