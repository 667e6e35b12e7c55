"""Outbox rows: written in the deciding transaction, delivered later, exactly once by key."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import insert, select, update

from parley.store.connection import Connection
from parley.store.tables import outbox


@dataclass(frozen=True)
class OutboxItem:
    id: int
    key: str
    kind: str
    payload: str
    attempts: int


class OutboxRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def put(self, key: str, kind: str, payload: str, now: datetime) -> bool:
        """Add an item unless one with this key exists (a replayed decision adds nothing)."""
        exists = await self._c.execute(select(outbox.c.id).where(outbox.c.idempotency_key == key))
        if exists.first() is not None:
            return False
        await self._c.execute(
            insert(outbox).values(idempotency_key=key, kind=kind, payload=payload, created_at=now)
        )
        return True

    async def pending(self, limit: int) -> list[OutboxItem]:
        query = select(outbox).where(outbox.c.state == "pending").order_by(outbox.c.id).limit(limit)
        return [
            OutboxItem(row.id, row.idempotency_key, row.kind, row.payload, row.attempts)
            for row in await self._c.execute(query)
        ]

    async def settle(self, item_id: int, state: str, now: datetime, error: str | None) -> bool:
        """Mark a pending item delivered or failed; False if another worker settled it first."""
        result = await self._c.execute(
            update(outbox)
            .where(outbox.c.id == item_id, outbox.c.state == "pending")
            .values(
                state=state,
                delivered_at=now if state == "delivered" else None,
                last_error=error,
                attempts=outbox.c.attempts + 1,
            )
        )
        return result.rowcount == 1

    async def state_of(self, key: str) -> str | None:
        query = select(outbox.c.state).where(outbox.c.idempotency_key == key)
        return (await self._c.execute(query)).scalar_one_or_none()
