"""Store transactions: SQLite's run one at a time, inline; a nested one is a clear error."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import text

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
