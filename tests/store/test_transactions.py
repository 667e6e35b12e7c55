"""Store transactions: SQLite's run one at a time, inline; a nested one is a clear error. A
single read (outside any transaction on PostgreSQL) leaves its connection as it found it."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text

from parley.errors import Conflict, Contended
from parley.people.model import Role
from parley.store import Store


async def test_a_transaction_opened_inside_another_is_refused_not_hung(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite:///{tmp_path}/nested.db")
    try:
        async with store.transaction():
            with pytest.raises(RuntimeError, match="opened inside another one"):
                async with store.transaction():
                    pass
    finally:
        await store.close()


async def test_concurrent_sqlite_transactions_take_turns(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite:///{tmp_path}/turns.db")
    inside = 0
    most = 0

    async def one(n: int) -> None:
        nonlocal inside, most
        async with store.transaction() as tx:
            inside += 1
            most = max(most, inside)
            await asyncio.sleep(0.001)  # another task runs meanwhile, but cannot enter
            await tx.connection.execute(text("SELECT 1"))
            inside -= 1

    try:
        await asyncio.gather(*(one(n) for n in range(20)))
    finally:
        await store.close()
    assert most == 1


async def test_a_single_read_leaves_the_next_transaction_on_its_connection_whole(
    database_url: str,
) -> None:
    """On PostgreSQL a single read runs in autocommit, on a connection of the pool: the
    transaction that takes that connection next must still roll back as a whole."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    store = await Store.open(database_url)
    try:
        async with store.transaction() as tx:
            await tx.people.add("ann", Role.OWNER, "hash-ann", now)
        async with store.single_read() as tx:
            ann = await tx.people.by_token_hash("hash-ann")
        assert ann is not None and ann.name == "ann"
        with pytest.raises(RuntimeError, match="undone"):
            async with store.transaction() as tx:
                await tx.people.add("bob", Role.MEMBER, "hash-bob", now)
                raise RuntimeError("undone")
        async with store.single_read() as tx:
            assert await tx.people.by_token_hash("hash-bob") is None
    finally:
        await store.close()


async def test_a_commit_sqlite_refused_leaves_the_kept_connection_ready(tmp_path: Path) -> None:
    """SQLite's transactions take turns on one kept connection. A deferred rule broken at
    COMMIT leaves SQLite's transaction open there: it is rolled back, nothing of it kept, and
    the next transaction begins as any other."""
    store = await Store.open(f"sqlite:///{tmp_path}/refused.db")
    now = datetime(2026, 1, 1, tzinfo=UTC)
    orphan = "INSERT INTO agent_memory (agent_id, note, written_at) VALUES (9999, 'orphan', :at)"
    try:
        with pytest.raises(Conflict):
            async with store.transaction() as tx:
                await tx.people.add("ann", Role.OWNER, "hash-ann", now)
                await tx.connection.execute(text("PRAGMA defer_foreign_keys = ON"))
                await tx.connection.execute(text(orphan), {"at": now})
        async with store.transaction() as tx:
            assert await tx.people.by_token_hash("hash-ann") is None
            await tx.people.add("bob", Role.OWNER, "hash-bob", now)
        async with store.transaction() as tx:
            assert await tx.people.by_token_hash("hash-bob") is not None
    finally:
        await store.close()


async def test_a_lost_sqlite_connection_is_opened_again(tmp_path: Path) -> None:
    """The kept connection closed under the store (as a lost file handle would leave it): the
    transaction on it fails as the store's failure, and the next one opens another."""
    store = await Store.open(f"sqlite:///{tmp_path}/lost.db")
    now = datetime(2026, 1, 1, tzinfo=UTC)
    try:
        async with store.transaction() as tx:
            await tx.people.add("ann", Role.OWNER, "hash-ann", now)
            driver = await tx.connection.run_sync(lambda sync: sync.connection.dbapi_connection)
        assert driver is not None
        driver.close()
        with pytest.raises(Exception, match="closed database"):
            async with store.transaction() as tx:
                await tx.people.by_token_hash("hash-ann")
        async with store.transaction() as tx:
            ann = await tx.people.by_token_hash("hash-ann")
        assert ann is not None and ann.name == "ann"
    finally:
        await store.close()


@pytest.mark.parametrize("direct", [True, False], ids=["driver", "sqlalchemy"])
async def test_a_single_read_on_sqlite_takes_no_write_lock(tmp_path: Path, direct: bool) -> None:
    """A single read on SQLite is one statement outside any transaction: it answers while
    another connection holds SQLite's write lock, where a transaction (BEGIN IMMEDIATE) waits
    for it, through the driver or through SQLAlchemy alike."""
    path = tmp_path / "alone.db"
    store = await Store.open(f"sqlite:///{path}", direct_driver=direct)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        async with store.transaction() as tx:
            await tx.people.add("ann", Role.OWNER, "hash-ann", now)
        await store.run_sync(lambda sync: sync.exec_driver_sql("PRAGMA busy_timeout = 50"))
        writer.execute("BEGIN IMMEDIATE")
        async with store.single_read() as tx:
            ann = await tx.people.by_token_hash("hash-ann")
        assert ann is not None and ann.name == "ann"
        with pytest.raises(Contended, match="locked"):
            async with store.transaction() as tx:
                await tx.people.by_token_hash("hash-ann")
        writer.execute("ROLLBACK")
        async with store.transaction() as tx:  # the kept connection is whole after both
            assert await tx.people.by_token_hash("hash-ann") is not None
    finally:
        writer.close()
        await store.close()
