"""Every engine of the process compiles a statement once: a store opened after another (a test
after the one before it) runs what the first compiled, and reads its own rows with it."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import bindparam, insert, select

from parley.store import Store
from parley.store.tables import people

# Built here, not marked ``once``: it runs through SQLAlchemy, and its compiled cache.
_NAMED = select(people.c.id, people.c.name).where(people.c.name == bindparam("name"))


async def _named(store: Store, name: str) -> tuple[object, list[tuple[int, str]]]:
    async with store.transaction() as tx:
        result = await tx.connection.execute(_NAMED, {"name": name})
        return result.context.compiled, [tuple(row) for row in result]


async def test_a_store_opened_after_another_runs_what_the_other_compiled(
    database_url: str,
) -> None:
    first = await Store.open(database_url)
    try:
        async with first.transaction() as tx:
            await tx.connection.execute(
                insert(people).values(
                    name="ada", role="owner", token_hash="a" * 64, created_at=datetime.now(UTC)
                )
            )
        compiled, rows = await _named(first, "ada")
        assert [name for _, name in rows] == ["ada"]
    finally:
        await first.close()
    second = await Store.open(database_url)
    try:
        again, rows = await _named(second, "grace")
        assert again is compiled
        assert rows == []  # its own answer: the parameters are the second call's
        again, rows = await _named(second, "ada")
        assert [name for _, name in rows] == ["ada"]
    finally:
        await second.close()
