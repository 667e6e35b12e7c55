"""Migrations build exactly the declared tables, and run once however often we start."""

from __future__ import annotations

import contextlib
import sqlite3
import uuid
from datetime import UTC, datetime
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, create_engine, text

from parley.agents.model import Agent
from parley.conversations.model import TopicKind
from parley.store import Store
from parley.store.migrate import VERSIONS, alembic_config, migrate, newest_revision
from parley.store.tables import metadata
from tests.probes import modules_loaded_by


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


def _conditions(connection: Connection, schema: str = "public") -> dict[str, str]:
    """Each partial index's condition as the database keeps it, by the index's name (SQLite
    keeps the text it was given, PostgreSQL its own rendering of the expression)."""
    if connection.dialect.name == "sqlite":
        rows = connection.execute(
            text(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql LIKE '% WHERE %'"
            )
        )
        return {name: " ".join(sql.split(" WHERE ", 1)[1].split()) for name, sql in rows}
    rows = connection.execute(
        text(
            "SELECT c.relname, pg_get_expr(i.indpred, i.indrelid) FROM pg_index i"
            " JOIN pg_class c ON c.oid = i.indexrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE i.indpred IS NOT NULL AND n.nspname = :schema"
        ),
        {"schema": schema},
    )
    return {name: condition for name, condition in rows}


def _declared_conditions(connection: Connection) -> dict[str, str]:
    """The partial indexes' conditions of the tables as declared, created afresh beside the
    migrated ones (PostgreSQL: in a schema of their own, dropped after)."""
    if connection.dialect.name == "sqlite":
        with create_engine("sqlite://").begin() as fresh:
            metadata.create_all(fresh)
            return _conditions(fresh)
    schema = f"declared_{uuid.uuid4().hex}"
    connection.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        connection.execute(text(f"SET LOCAL search_path TO {schema}"))
        metadata.create_all(connection)
        return _conditions(connection, schema)
    finally:
        connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        connection.execute(text("SET LOCAL search_path TO public"))


async def test_partial_indexes_keep_the_declared_conditions(database_url: str) -> None:
    """``compare_metadata`` does not compare an index's condition: an index declared partial
    for one dialect only, or migrated with another condition, indexes other rows than the
    queries planned against it expect."""
    store = await Store.open(database_url)
    try:
        migrated = await store.run_sync(_conditions)
        declared = await store.run_sync(_declared_conditions)
    finally:
        await store.close()
    on_each = {dialect: _declared_partial(dialect) for dialect in ("sqlite", "postgresql")}
    assert on_each["sqlite"] == on_each["postgresql"]  # one condition, given to both
    assert set(declared) == set(on_each["sqlite"])
    assert migrated == declared


def _declared_partial(dialect: str) -> dict[str, str]:
    """The declared tables' partial indexes on ``dialect``: their conditions by name."""
    return {
        str(index.name): str(where)
        for table in metadata.tables.values()
        for index in table.indexes
        if (where := index.dialect_options[dialect]["where"]) is not None
    }


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
    assert [row[0] for row in versions] == ["0032"]


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


async def test_federation_migration_goes_down_and_up_with_data_kept(database_url: str) -> None:
    """0013 rebuilds topics on SQLite: its rows, and the rows pointing at them, survive both
    ways."""
    now = datetime(2026, 12, 1, tzinfo=UTC)
    store = await Store.open(database_url)
    try:
        async with store.transaction() as tx:
            node = await tx.nodes.create_with_session("here", "node:here", "host", "/tmp", now)
            task = await tx.topics.insert(TopicKind.TASK, node.session_agent_id, now, text="t")
            await tx.messages.add(task.id, "text", "kept", now)
        await migrate(store.engine, "downgrade", "0012")
        await migrate(store.engine, "upgrade", "head")
        assert await store.run_sync(_differences) == []
        async with store.transaction() as tx:
            kept = await tx.topics.by_id(task.id)
            count = (await tx.connection.execute(text("SELECT count(*) FROM messages"))).scalar()
    finally:
        await store.close()
    assert kept is not None and kept.text == "t" and count == 1


async def test_agents_hired_before_tool_lists_have_the_read_only_tools(database_url: str) -> None:
    """0023 gives every existing agent (node sessions too) read, list and find, and going down
    and up again keeps the agents."""
    session = await _session_down_and_up(database_url, "0022")
    assert session is not None and session.tools == ("read", "list", "find")
    assert session.ask == ("run",)  # 0026: every agent asks before run, as a new one does


async def test_approvals_go_down_and_up_with_the_agents_kept(database_url: str) -> None:
    """0026 adds the ask lists and the approvals; going down to 0025 and up again keeps the
    agents and leaves the schema as the tables say."""
    session = await _session_down_and_up(database_url, "0025")
    assert session is not None and session.ask == ("run",)


async def test_a2a_goes_down_and_up_with_conversations_kept(database_url: str) -> None:
    """0027 adds A2A clients and their contexts' columns; going down to 0026 and up again keeps
    the topics and leaves the schema (and its one-conversation index) as the tables say."""
    assert await _session_down_and_up(database_url, "0026") is not None


async def _session_down_and_up(database_url: str, revision: str) -> Agent | None:
    """A node's session agent, read again after the store went down to ``revision`` and up to
    head, its schema checked against the tables on the way."""
    now = datetime(2026, 12, 5, tzinfo=UTC)
    store = await Store.open(database_url)
    try:
        async with store.transaction() as tx:
            node = await tx.nodes.create_with_session("here", "node:here", "host", "/tmp", now)
        await migrate(store.engine, "downgrade", revision)
        await migrate(store.engine, "upgrade", "head")
        assert await store.run_sync(_differences) == []
        async with store.transaction() as tx:
            return await tx.agents.by_id(node.session_agent_id)
    finally:
        await store.close()


def test_the_newest_revision_read_from_the_file_names_is_alembic_s_head() -> None:
    """A start on a current store reads the newest revision from the files' names, without
    Alembic: each file must be named after its revision, in the order Alembic chains them."""
    scripts = ScriptDirectory.from_config(alembic_config())
    chain = list(reversed(list(scripts.walk_revisions())))  # oldest first
    named = sorted(path.name for path in VERSIONS.glob("[0-9]*_*.py"))
    assert [Path(script.path).name for script in chain] == named
    assert [script.revision for script in chain] == [name.partition("_")[0] for name in named]
    assert newest_revision() == scripts.get_current_head()


OPEN_AND_LIST_LIBRARIES = """
import asyncio, json, sys
from parley.store import Store

async def main():
    store = await Store.open(sys.argv[1])
    await store.close()

asyncio.run(main())
print(json.dumps(sorted(sys.modules)))
"""


def test_opening_a_current_store_does_without_alembic_and_a_new_one_is_migrated(
    database_url: str, tmp_path: Path
) -> None:
    """Alembic (a tenth of ``parley serve``'s start) is imported only when there is migrating
    to do: not for a store already at the newest revision, on either database."""
    assert "alembic" not in modules_loaded_by(OPEN_AND_LIST_LIBRARIES, database_url)
    new = f"sqlite:///{tmp_path / 'new.db'}"
    assert "alembic" in modules_loaded_by(OPEN_AND_LIST_LIBRARIES, new)
    with contextlib.closing(sqlite3.connect(tmp_path / "new.db")) as connection:
        (version,) = connection.execute("SELECT version_num FROM alembic_version").fetchone()
    assert version == newest_revision()
