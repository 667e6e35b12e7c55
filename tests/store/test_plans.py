"""PostgreSQL plans each of Parley's statements for the tables as they are (engine.py): a
generic plan, kept by a connection from its first executions, was planned for the tables as
they were then — on a new store, a seq scan of ``runs`` that cost 5 ms a statement once the
table had grown by thousands of runs, until the first ANALYZE."""

from __future__ import annotations

from sqlalchemy import text

from parley.store import Store


async def test_postgresql_connections_plan_every_statement_for_its_parameters(
    postgres_url: str,
) -> None:
    store = await Store.open(postgres_url)
    try:
        async with store.transaction() as tx:
            shown = (await tx.connection.execute(text("SHOW plan_cache_mode"))).scalar_one()
    finally:
        await store.close()
    assert shown == "force_custom_plan"
