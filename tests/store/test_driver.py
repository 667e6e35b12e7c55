"""Statements marked ``once`` run on the driver directly (parley/store/shapes.py; asyncpg in
driver.py, sqlite3 in connection.py): in the same transaction as SQLAlchemy's, read back as
SQLAlchemy reads them, failing as it fails."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import asyncpg
import pytest
from sqlalchemy import bindparam, event, func, insert, select, update

from parley.errors import Conflict, Unavailable
from parley.store import Store
from parley.store.shapes import once
from parley.store.tables import people
from tests.conftest import empty_tables

_ADD = once(insert(people).returning(people.c.id, people.c.created_at))
_NAMED = once(
    select(people.c.id, people.c.name.label("who"), people.c.created_at)
    .where(people.c.name.in_(bindparam("names", expanding=True)))
    .order_by(people.c.id)
)
_RENAME = once(update(people).where(people.c.role == bindparam("was")).values(role="member"))
_ADD_ORDERED = once(
    insert(people).returning(people.c.id, people.c.created_at, sort_by_parameter_order=True)
)
_ADD_PLAIN = once(insert(people))  # run once per row of a list: sqlite3's executemany
_MEMBERS = once(  # constants (a role, a list of names) and one parameter of the caller's
    select(people.c.name)
    .where(people.c.role == "member", people.c.name.in_(["bob", "o'hara"]))
    .where(people.c.created_at >= bindparam("since"))
    .order_by(people.c.name)
)
_COUNT = select(func.count()).select_from(people)  # not marked: SQLAlchemy runs it


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[Store]:
    opened = await Store.open(database_url)
    yield opened
    await opened.close()


@pytest.fixture
async def postgres_store(postgres_url: str) -> AsyncIterator[Store]:
    await empty_tables(postgres_url)
    opened = await Store.open(postgres_url)
    yield opened
    await opened.close()


def person(name: str, role: str = "owner") -> dict[str, Any]:
    east = timezone(timedelta(hours=2))
    made = datetime(2026, 1, 2, 5, 0, tzinfo=east)
    token_hash = f"hash-{secrets.token_hex(8)}"  # one rule broken at a time: the name's
    return {"name": name, "role": role, "token_hash": token_hash, "created_at": made}


async def test_a_marked_statement_bypasses_sqlalchemys_execution_but_not_its_listeners(
    store: Store,
) -> None:
    executed: list[str] = []
    on_cursor: list[str] = []
    engine = getattr(store.engine, "sync_engine", store.engine)
    event.listen(engine, "before_execute", lambda *a: executed.append("sqlalchemy"))
    event.listen(engine, "before_cursor_execute", lambda c, cur, sql, *a: on_cursor.append(sql))
    async with store.transaction() as tx:
        await tx.connection.execute(_ADD, person("ada"))
        await tx.connection.execute(_COUNT)
    assert executed == ["sqlalchemy"]  # the unmarked count alone
    statements = [sql for sql in on_cursor if sql != "BEGIN IMMEDIATE"]  # SQLite's, ours
    assert len(statements) == 2 and statements[0].startswith("INSERT INTO people")


async def test_rows_come_back_as_sqlalchemy_reads_them(store: Store) -> None:
    async with store.transaction() as tx:
        added = (await tx.connection.execute(_ADD, person("ada"))).one()
        await tx.connection.execute(_ADD, person("bob", "member"))
        rows = (await tx.connection.execute(_NAMED, {"names": ["bob", "ada", "cy"]})).all()
        renamed = await tx.connection.execute(_RENAME, {"was": "owner"})
        none = await tx.connection.execute(_NAMED, {"names": ["cy"]})
        assert none.first() is None
    # Bound through the type decorator (to UTC), read back through it (aware, UTC).
    assert added.created_at == datetime(2026, 1, 2, 3, 0, tzinfo=UTC)
    assert added.created_at.tzinfo is UTC
    assert [(row.who, row[0]) for row in rows] == [("ada", added.id), ("bob", added.id + 1)]
    assert renamed.rowcount == 1


async def test_a_marked_statement_is_inside_the_transaction(store: Store) -> None:
    with pytest.raises(RuntimeError, match="undo"):
        async with store.transaction() as tx:  # the marked insert is its first statement
            await tx.connection.execute(_ADD, person("ada"))
            assert (await tx.connection.execute(_COUNT)).scalar_one() == 1
            raise RuntimeError("undo")
    async with store.transaction() as tx:
        assert (await tx.connection.execute(_COUNT)).scalar_one() == 0


async def test_a_broken_rule_is_a_conflict_as_through_sqlalchemy(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.connection.execute(_ADD, person("ada"))
    with pytest.raises(Conflict, match="a person with that name already exists"):
        async with store.transaction() as tx:
            await tx.connection.execute(_ADD, person("ada"))
    with pytest.raises(Conflict, match="role"):
        async with store.transaction() as tx:
            await tx.connection.execute(_ADD, person("eve", "boss"))


async def test_a_marked_statement_is_undone_with_its_savepoint(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.connection.execute(_ADD, person("ada"))
        with pytest.raises(RuntimeError, match="undo"):
            async with tx.connection.begin_nested():
                await tx.connection.execute(_ADD, person("bob"))
                raise RuntimeError("undo")
        await tx.connection.execute(_ADD, person("cy"))
    async with store.transaction() as tx:
        rows = (await tx.connection.execute(_NAMED, {"names": ["ada", "bob", "cy"]})).all()
    assert [row.who for row in rows] == ["ada", "cy"]


async def test_a_lost_connection_is_unavailable_and_the_next_transaction_works(
    postgres_store: Store, postgres_url: str
) -> None:
    store = postgres_store
    killer = await asyncpg.connect(postgres_url.replace("+asyncpg", ""))
    try:
        with pytest.raises(Unavailable):
            async with store.transaction() as tx:
                await tx.connection.execute(_ADD, person("ada"))
                pid = await killer.fetchval(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                    " AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'"
                )
                await killer.execute("SELECT pg_terminate_backend($1)", pid)
                await asyncio.sleep(0.1)  # the server closes the socket
                await tx.connection.execute(_ADD, person("bob"))
    finally:
        await killer.close()
    async with store.transaction() as tx:
        await tx.connection.execute(_ADD, person("cy"))
        assert (await tx.connection.execute(_COUNT)).scalar_one() == 1


async def test_a_transaction_cancelled_at_any_step_loses_no_later_commit(
    store: Store, database_url: str
) -> None:
    """A task cancelled mid-transaction (a request whose client left, a timeout) may stop
    inside BEGIN or a statement on the driver: every transaction after it still commits, seen
    from another store's connection. The direct path once returned such a connection to the
    pool with asyncpg holding a BEGIN SQLAlchemy did not know, and each later "commit" on it
    released a savepoint inside that transaction, never committed."""

    async def reading() -> None:
        async with store.transaction() as tx:
            for _ in range(3):
                await tx.connection.execute(_NAMED, {"names": ["nobody"]})

    written = [f"p{steps}" for steps in range(40)]
    for name, steps in zip(written, range(40), strict=True):
        reader = asyncio.create_task(reading())
        for _ in range(steps):  # cancelled one more step of the loop into it each time
            await asyncio.sleep(0)
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
        async with store.transaction() as tx:
            await tx.connection.execute(_ADD, person(name))
    other = await Store.open(database_url)
    try:
        async with other.transaction() as tx:
            rows = (await tx.connection.execute(_NAMED, {"names": written})).all()
    finally:
        await other.close()
    assert [row.who for row in rows] == written


async def test_a_marked_statement_runs_once_per_row_of_a_list(store: Store) -> None:
    executed: list[str] = []
    engine = getattr(store.engine, "sync_engine", store.engine)
    event.listen(engine, "before_execute", lambda *a: executed.append("sqlalchemy"))
    rows = [person("ada"), person("bob", "member")]
    async with store.transaction() as tx:
        added = await tx.connection.execute(_ADD_PLAIN, rows)
        named = (await tx.connection.execute(_NAMED, {"names": ["ada", "bob"]})).all()
    assert [(row.who, row.created_at) for row in named] == [
        ("ada", datetime(2026, 1, 2, 3, 0, tzinfo=UTC)),
        ("bob", datetime(2026, 1, 2, 3, 0, tzinfo=UTC)),
    ]
    if store.dialect == "sqlite":  # PostgreSQL's lists go through SQLAlchemy
        assert executed == [] and added.rowcount == 2
    with pytest.raises(Conflict, match="a person with that name already exists"):
        async with store.transaction() as tx:
            await tx.connection.execute(_ADD_PLAIN, [person("cy"), person("ada")])
    async with store.transaction() as tx:  # the failed list kept nothing, cy included
        assert (await tx.connection.execute(_COUNT)).scalar_one() == 2


async def test_sqlite_writes_a_statements_constants_into_its_sql(store: Store) -> None:
    """SQLite plans a statement again at each run when its plan hangs on a bound value (a
    partial index's condition): the constants are written in, the caller's values bound."""
    sent: list[tuple[str, Any]] = []
    engine = getattr(store.engine, "sync_engine", store.engine)
    event.listen(engine, "before_cursor_execute", lambda c, cur, sql, p, *a: sent.append((sql, p)))
    async with store.transaction() as tx:
        for name, role in [("bob", "member"), ("o'hara", "member"), ("cy", "member")]:
            await tx.connection.execute(_ADD, person(name, role))
        await tx.connection.execute(_ADD, person("ada", "owner"))
        since = {"since": datetime(2026, 1, 1, tzinfo=UTC)}
        found = (await tx.connection.execute(_MEMBERS, since)).scalars().all()
        later = {"since": datetime(2027, 1, 1, tzinfo=UTC)}
        none = (await tx.connection.execute(_MEMBERS, later)).scalars().all()
    assert found == ["bob", "o'hara"] and none == []
    sql, parameters = sent[-1]
    if store.dialect == "sqlite":
        assert "people.role = 'member'" in sql and "('bob', 'o''hara')" in sql
        assert len(parameters) == 1


async def test_a_marked_insert_of_many_rows_returns_theirs_in_order(store: Store) -> None:
    names = ["cy", "ada", "bob"]
    async with store.transaction() as tx:
        added = (await tx.connection.execute(_ADD_ORDERED, [person(n) for n in names])).all()
        rows = (await tx.connection.execute(_NAMED, {"names": names})).all()
    by_name = {row.who: row.id for row in rows}
    assert [row.id for row in added] == [by_name[name] for name in names]
    assert all(row.created_at == datetime(2026, 1, 2, 3, 0, tzinfo=UTC) for row in added)
