"""A transaction PostgreSQL gives up to break a deadlock is a ``Contended`` error — transient,
an ``Unavailable``, so that what retries through an outage (the outcome recorder, the
scheduler, a peer's sender, a client) retries it — and keeps nothing; the other one commits.
Work that must not fail for it (a hub's reconciliation at start) runs again (``retried``)."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from parley.errors import Contended, Unavailable
from parley.store import Store, Tx
from parley.store.contention import retried


async def _crossing(store: Store) -> list[BaseException | None]:
    """Two transactions each updating a row, then the other's: one deadlock."""
    first, second = asyncio.Event(), asyncio.Event()

    async def update(mine: int, theirs: int, done: asyncio.Event, other: asyncio.Event) -> None:
        async with store.transaction() as tx:
            await tx.connection.execute(text(f"UPDATE crossing SET n = n + 1 WHERE id = {mine}"))
            done.set()
            await other.wait()
            await tx.connection.execute(text(f"UPDATE crossing SET n = n + 1 WHERE id = {theirs}"))

    outcomes = await asyncio.gather(
        update(1, 2, first, second), update(2, 1, second, first), return_exceptions=True
    )
    return list(outcomes)


async def test_a_deadlocked_transaction_is_contended_and_keeps_nothing(database_url: str) -> None:
    store = await Store.open(database_url)
    if store.dialect == "sqlite":
        await store.close()
        pytest.skip("SQLite takes its write lock at a transaction's start: it cannot deadlock")
    try:
        async with store.transaction() as tx:
            await tx.connection.execute(text("CREATE TABLE crossing (id int PRIMARY KEY, n int)"))
            await tx.connection.execute(text("INSERT INTO crossing VALUES (1, 0), (2, 0)"))
        outcomes = await _crossing(store)
        given_up = [error for error in outcomes if error is not None]
        assert len(given_up) == 1, outcomes
        assert isinstance(given_up[0], Contended) and isinstance(given_up[0], Unavailable)
        assert "try again" in given_up[0].message
        async with store.transaction() as tx:
            counts = (await tx.connection.execute(text("SELECT n FROM crossing"))).scalars()
            assert sorted(counts) == [1, 1]  # the one that passed, both its rows; none of the other
    finally:
        async with store.transaction() as tx:
            await tx.connection.execute(text("DROP TABLE IF EXISTS crossing"))
        await store.close()


async def test_work_given_up_runs_again_in_a_new_transaction_and_is_kept_once(
    database_url: str,
) -> None:
    """``retried``: a try the store gave up kept nothing, the next one is kept; past the tries,
    the error is the caller's."""
    store = await Store.open(database_url)
    tries: list[int] = []

    async def add_then_give_way(tx: Tx) -> int:
        await tx.connection.execute(text("INSERT INTO tried (n) VALUES (:n)"), {"n": len(tries)})
        tries.append(len(tries))
        if len(tries) < 3:  # as the store raises it for a deadlock: after the work's writes
            raise Contended("gave way")
        return len(tries)

    try:
        async with store.transaction() as tx:
            await tx.connection.execute(text("CREATE TABLE tried (n int)"))
        assert await retried(store, add_then_give_way) == 3
        async with store.transaction() as tx:
            kept = list((await tx.connection.execute(text("SELECT n FROM tried"))).scalars())
        assert kept == [2]  # the first two tries rolled back
        tries.clear()
        with pytest.raises(Contended):
            await retried(store, add_then_give_way, tries=2)
        assert len(tries) == 2
    finally:
        async with store.transaction() as tx:
            await tx.connection.execute(text("DROP TABLE IF EXISTS tried"))
        await store.close()
