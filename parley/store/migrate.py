"""Run the Alembic migrations at start, on the engine the store already holds."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, text
from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


async def upgrade_to_head(engine: AsyncEngine | Engine) -> None:
    if isinstance(engine, Engine):
        with engine.begin() as sync_connection:
            _upgrade(sync_connection)
        return
    async with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            # Several hubs starting at once must not migrate twice.
            await connection.execute(text("SELECT pg_advisory_xact_lock(87000001)"))
        await connection.run_sync(_upgrade)


def _upgrade(connection: Connection) -> None:
    command.upgrade(alembic_config(connection), "head")
