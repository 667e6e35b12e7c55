"""Run the Alembic migrations at start, on the engine the store already holds."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, text
from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS = Path(__file__).parent / "migrations"
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
    if direction == "upgrade":
        command.upgrade(config, revision)
    else:
        command.downgrade(config, revision)
