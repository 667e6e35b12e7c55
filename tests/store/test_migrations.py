"""Migrations build exactly the declared tables, and run once however often we start."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Connection, text

from parley.store import Store
from parley.store.tables import metadata


def _differences(connection: Connection) -> list[object]:
    context = MigrationContext.configure(connection)
    return list(compare_metadata(context, metadata))


async def test_migrated_schema_matches_the_declared_tables(database_url: str) -> None:
    store = await Store.open(database_url)
    try:
        differences = await store.run_sync(_differences)
    finally:
        await store.close()
    assert differences == []


async def test_opening_twice_migrates_once(database_url: str) -> None:
    first = await Store.open(database_url)
    await first.close()
    second = await Store.open(database_url)
    try:
        async with second.transaction() as tx:
            versions = (
                await tx.connection.execute(text("SELECT version_num FROM alembic_version"))
            ).all()
    finally:
        await second.close()
    assert [row[0] for row in versions] == ["0012"]


async def test_sqlite_runs_in_wal_mode(tmp_path: object) -> None:
    store = await Store.open(f"sqlite:///{tmp_path}/wal.db")
    try:
        async with store.transaction() as tx:
            mode = (await tx.connection.execute(text("PRAGMA journal_mode"))).scalar_one()
            foreign_keys = (await tx.connection.execute(text("PRAGMA foreign_keys"))).scalar_one()
    finally:
        await store.close()
    assert mode == "wal"
    assert foreign_keys == 1
