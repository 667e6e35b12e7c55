"""The direct paths probe the SQLAlchemy internals they read at their first statement: one
missing, the store says which once and runs everything through SQLAlchemy's own execution,
with the same results (parley/store/internals.py)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from sqlalchemy import Engine, event
from sqlalchemy.dialects.postgresql.asyncpg import AsyncAdapt_asyncpg_connection
from sqlalchemy.ext.asyncio import AsyncEngine

from parley.settings import Settings
from parley.store import Store
from parley.store.internals import DirectDriver
from tests.conftest import empty_tables
from tests.store.test_driver import _ADD, _NAMED, _RENAME, person
from tests.support import ManualClock, started

Hide = Callable[[Store], Awaitable[None]]


def _missing(name: str) -> property:
    """An attribute read as a SQLAlchemy without it would answer: AttributeError."""

    def absent(self: object) -> Any:
        raise AttributeError(name)

    return property(absent)


async def hide_construct_expanded_state(store: Store) -> None:
    """The dialect's compiler without ``construct_expanded_state``, which shapes.py reads for
    a list's parameters and SQLAlchemy's own execution does not."""
    dialect = store.engine.dialect
    compiler = type(
        "CompilerWithout",
        (dialect.statement_compiler,),
        {"construct_expanded_state": _missing("construct_expanded_state")},
    )
    dialect.statement_compiler = compiler


async def hide_handle_exception(store: Store) -> None:
    """SQLAlchemy's asyncpg adapter without ``_handle_exception`` (which SQLAlchemy reads on
    an error only), on every connection the pool opens from now on."""
    assert isinstance(store.engine, AsyncEngine)
    adapter = type(
        "AdapterWithout",
        (AsyncAdapt_asyncpg_connection,),
        {"__slots__": (), "_handle_exception": _missing("_handle_exception")},
    )
    await store.engine.dispose()  # the migration's connection: not one of these

    def hide(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.__class__ = adapter

    event.listen(store.engine.sync_engine, "connect", hide)


async def exercise(store: Store) -> list[Any]:
    """Marked statements of each kind, in two transactions: what they gave back."""
    async with store.transaction() as tx:
        added = (await tx.connection.execute(_ADD, person("ada"))).one()
        await tx.connection.execute(_ADD, person("bob", "member"))
    async with store.transaction() as tx:
        rows = (await tx.connection.execute(_NAMED, {"names": ["bob", "ada", "cy"]})).all()
        renamed = await tx.connection.execute(_RENAME, {"was": "owner"})
    return [tuple(added), [tuple(row) for row in rows], renamed.rowcount]


async def exercise_again(store: Store) -> bool:
    """A later transaction: the store stays on the path it took."""
    async with store.transaction() as tx:
        rows = (await tx.connection.execute(_NAMED, {"names": ["ada"]})).all()
    return len(rows) == 1


def sqlalchemy_runs(store: Store) -> list[str]:
    """Statements that went through SQLAlchemy's own execution, as they come."""
    executed: list[str] = []
    engine = store.engine.sync_engine if isinstance(store.engine, AsyncEngine) else store.engine
    assert isinstance(engine, Engine)
    event.listen(engine, "before_execute", lambda _c, clause, *_: executed.append(str(clause)))
    return executed


@pytest.fixture
async def reference(database_url: str) -> list[Any]:
    """What the direct path gives, on a store of its own."""
    url = database_url.replace("parley.db", "reference.db")
    store = await Store.open(url)
    try:
        return await exercise(store)
    finally:
        await store.close()
        if url.startswith("postgresql"):
            await empty_tables(url)


@asynccontextmanager
async def opened(url: str, hide: Hide) -> AsyncIterator[Store]:
    store = await Store.open(url)
    await hide(store)
    yield store
    await store.close()


async def test_a_missing_compiler_internal_runs_everything_through_sqlalchemy_once_said(
    database_url: str, reference: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    async with opened(database_url, hide_construct_expanded_state) as store:
        executed = sqlalchemy_runs(store)
        with caplog.at_level(logging.WARNING, "parley.store.internals"):
            assert await exercise(store) == reference
            assert await exercise_again(store)
        warned = [r.getMessage() for r in caplog.records if r.name == "parley.store.internals"]
        assert len(warned) == 1 and "CompilerWithout.construct_expanded_state" in warned[0]
        assert sum(s.startswith(("INSERT", "SELECT", "UPDATE")) for s in executed) == 5
        assert not store.direct.enabled


async def test_a_missing_adapter_internal_runs_everything_through_sqlalchemy_once_said(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    await empty_tables(postgres_url)
    direct = await Store.open(postgres_url)
    try:
        expected = await exercise(direct)
    finally:
        await direct.close()
    await empty_tables(postgres_url)
    async with opened(postgres_url, hide_handle_exception) as store:
        executed = sqlalchemy_runs(store)
        with caplog.at_level(logging.WARNING, "parley.store.internals"):
            assert await exercise(store) == expected
            assert await exercise_again(store)
        warned = [r.getMessage() for r in caplog.records if r.name == "parley.store.internals"]
        assert len(warned) == 1 and "AdapterWithout._handle_exception" in warned[0]
        assert sum(s.startswith(("INSERT", "SELECT", "UPDATE")) for s in executed) == 5


async def test_the_setting_runs_everything_through_sqlalchemy_without_a_warning(
    database_url: str, reference: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    store = await Store.open(database_url, direct_driver=False)
    try:
        executed = sqlalchemy_runs(store)
        with caplog.at_level(logging.WARNING, "parley.store.internals"):
            assert await exercise(store) == reference
        assert not [r for r in caplog.records if r.name == "parley.store.internals"]
        assert sum(s.startswith(("INSERT", "SELECT", "UPDATE")) for s in executed) == 4
    finally:
        await store.close()


def test_the_probe_runs_once_and_a_store_on_this_sqlalchemy_lacks_nothing() -> None:
    probes: list[str] = []

    def probe() -> None:
        probes.append("probed")

    direct = DirectDriver()
    assert direct.usable(probe) and direct.usable(probe)
    assert probes == ["probed"]


async def test_a_server_s_store_takes_the_path_its_settings_say(
    settings: Settings, clock: ManualClock
) -> None:
    """The direct paths tell their statements to listeners without a cursor: none here."""
    async with started(settings.model_copy(update={"direct_driver": False}), clock) as parley:
        store = parley.context.store
        engine = store.engine.sync_engine if isinstance(store.engine, AsyncEngine) else store.engine
        cursors: list[object] = []
        event.listen(engine, "before_cursor_execute", lambda _c, cursor, *_: cursors.append(cursor))
        await parley.hire("scribe")
        assert not store.direct.enabled
        assert cursors and None not in cursors
