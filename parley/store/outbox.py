"""Outbox rows: written in the deciding transaction, claimed by a worker for a lease, settled
once. Every settling statement names the claim it settles, so a worker whose lease passed and
whose item another worker took meanwhile settles nothing."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Select, Update, bindparam, func, insert, select, update

from parley.deliveries.model import Delivery, DeliveryState, Payload, RouteNote
from parley.store.connection import Connection
from parley.store.shapes import once
from parley.store.tables import outbox

PENDING = outbox.c.state == DeliveryState.PENDING.value
# Frames for peers are the federation sender's (store/frames.py), claimed per connection.
_GENERAL = outbox.c.connection.is_(None)
# Kinds whose sends are still out in this worker: left until they return, so that one kind's
# items go in order and a hanging destination holds up only its own kind.
_NOT_BUSY = outbox.c.kind.not_in(bindparam("busy", expanding=True))
# Due items, oldest due first; on PostgreSQL rows another worker is claiming are skipped, not
# waited for (SQLite has one writer: the clause is left out there).
_DUE = (
    select(outbox.c.id)
    .where(PENDING, _GENERAL, _NOT_BUSY, outbox.c.next_attempt_at <= bindparam("now"))
    .order_by(outbox.c.next_attempt_at, outbox.c.id)
    .limit(bindparam("limit"))
    .with_for_update(skip_locked=True)
)


def claiming(due: Select[Any]) -> Update:
    """The claim of the items ``due`` selects: a lease for ``worker`` until ``until``, one more
    attempt begun at ``now``, every claimed row returned."""
    return (
        update(outbox)
        .where(outbox.c.id.in_(due.scalar_subquery()))
        .values(
            claimed_by=bindparam("worker"),
            claimed_until=bindparam("until"),
            # Should this attempt die unsettled, the item is due again when its lease has passed.
            next_attempt_at=bindparam("until"),
            last_attempt_at=bindparam("now"),
            attempts=outbox.c.attempts + 1,
        )
        .returning(*outbox.c)
    )


_CLAIM = once(claiming(_DUE))
_NEXT_DUE = once(
    select(func.min(outbox.c.next_attempt_at)).where(
        PENDING,
        _GENERAL,
        _NOT_BUSY,
        outbox.c.id.not_in(bindparam("excluding", expanding=True)),
    )
)

_DELIVERED_MANY = once(
    update(outbox)
    .where(
        outbox.c.id.in_(bindparam("ids", expanding=True)),
        PENDING,
        outbox.c.claimed_by == bindparam("worker"),
    )
    .values(
        claimed_by=None,
        claimed_until=None,
        state=DeliveryState.DELIVERED.value,
        delivered_at=bindparam("now"),
    )
)


def delivery_of(row: Any) -> Delivery:
    return Delivery(
        id=row.id,
        key=row.idempotency_key,
        kind=row.kind,
        payload=row.payload,
        state=DeliveryState(row.state),
        attempts=row.attempts,
        next_attempt_at=row.next_attempt_at,
        claimed_by=row.claimed_by,
        claimed_until=row.claimed_until,
        last_attempt_at=row.last_attempt_at,
        last_error=row.last_error,
        created_at=row.created_at,
        delivered_at=row.delivered_at,
        route=None
        if row.route_reason is None
        else RouteNote(row.route_mode, row.route_reason, row.route_destination),
    )


class OutboxRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def put(
        self, key: str, payload: Payload, now: datetime, route: RouteNote | None = None
    ) -> bool:
        """Add an item unless one with this key exists (a replayed decision adds nothing);
        ``route``: where a routed item goes and why."""
        exists = await self._c.execute(select(outbox.c.id).where(outbox.c.idempotency_key == key))
        if exists.first() is not None:
            return False
        await self._c.execute(
            insert(outbox).values(
                idempotency_key=key,
                kind=payload.kind,
                payload=payload.model_dump_json(),
                created_at=now,
                next_attempt_at=now,
                **_route_values(route),
            )
        )
        return True

    async def note_route(self, key: str, route: RouteNote) -> None:
        """Record where the item ``key`` was routed (decided as it is delivered)."""
        await self._c.execute(
            update(outbox).where(outbox.c.idempotency_key == key).values(**_route_values(route))
        )

    async def claim_due(
        self,
        worker: str,
        now: datetime,
        until: datetime,
        limit: int,
        busy: Sequence[str] = (),
    ) -> list[Delivery]:
        """Take up to ``limit`` due items for ``worker`` until ``until``, none of a kind in
        ``busy``; each claim is an attempt begun."""
        params = {"worker": worker, "now": now, "until": until, "limit": limit, "busy": list(busy)}
        rows = await self._c.execute(_CLAIM, params)
        return sorted((delivery_of(row) for row in rows), key=lambda item: item.id)

    async def next_due(
        self, excluding: Sequence[int] = (), busy: Sequence[str] = ()
    ) -> datetime | None:
        """When the earliest pending item but ``excluding`` and those of a kind in ``busy`` is
        due (a claimed one: when its lease passes)."""
        params = {"excluding": list(excluding), "busy": list(busy)}
        due: datetime | None = (await self._c.execute(_NEXT_DUE, params)).scalar_one_or_none()
        return due

    async def delivered(self, item_id: int, worker: str, now: datetime) -> bool:
        """Delivered; ``last_error`` stays, showing what an item that needed retries met."""
        return await self._settle(
            item_id, worker, state=DeliveryState.DELIVERED.value, delivered_at=now
        )

    async def delivered_many(self, item_ids: Sequence[int], worker: str, now: datetime) -> None:
        """``delivered`` for several items in one statement."""
        if item_ids:
            await self._c.execute(
                _DELIVERED_MANY,
                {"ids": list(item_ids), "worker": worker, "now": now},
            )

    async def failed(self, item_id: int, worker: str, error: str) -> bool:
        return await self._settle(
            item_id, worker, state=DeliveryState.FAILED.value, last_error=error
        )

    async def retry_at(self, item_id: int, worker: str, at: datetime, error: str) -> bool:
        """Leave the item pending, due again ``at``."""
        return await self._settle(item_id, worker, next_attempt_at=at, last_error=error)

    async def _settle(self, item_id: int, worker: str, **values: Any) -> bool:
        """End ``worker``'s claim on a pending item; False if it no longer holds one (another
        worker took the item after this claim's lease passed, or settled it)."""
        result = await self._c.execute(
            update(outbox)
            .where(outbox.c.id == item_id, PENDING, outbox.c.claimed_by == worker)
            .values(claimed_by=None, claimed_until=None, **values)
        )
        return result.rowcount == 1

    async def listed(
        self, states: Sequence[DeliveryState], before_id: int | None, limit: int
    ) -> list[Delivery]:
        """Newest first; only ``states`` if given; only items older than ``before_id``."""
        query = select(outbox).order_by(outbox.c.id.desc()).limit(limit)
        if states:
            query = query.where(outbox.c.state.in_([state.value for state in states]))
        if before_id is not None:
            query = query.where(outbox.c.id < before_id)
        return [delivery_of(row) for row in await self._c.execute(query)]


def _route_values(route: RouteNote | None) -> dict[str, str | None]:
    if route is None:
        return {}
    return {
        "route_mode": route.mode,
        "route_reason": route.reason,
        "route_destination": route.destination,
    }
