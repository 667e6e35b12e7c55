"""Connection rows (links to peer installations) and what each exposes to its peer."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, select, update

from parley.deliveries.model import DeliveryState
from parley.federation.model import Connection, ConnectionState, PeerEndpoint
from parley.store.connection import Connection as StoreConnection
from parley.store.shapes import once
from parley.store.tables import agents, connections, exposures, outbox

_PUBLIC = [column for column in connections.c if column.name not in {"peer_token"}]


def _connection(row: Any) -> Connection:
    return Connection(
        id=row.id,
        name=row.name,
        url=row.url,
        state=ConnectionState(row.state),
        queue_limit=row.queue_limit,
        created_at=row.created_at,
        last_contact_at=row.last_contact_at,
        failures=row.failures,
        retry_at=row.retry_at,
        last_error=row.last_error,
        kind=row.kind,
        card=row.card,
    )


# Read for every batch sent and received: built once (see shapes.py).
_BY_NAME = once(select(*_PUBLIC).where(connections.c.name == bindparam("name")))
_BY_NAME_SHARED = once(_BY_NAME.with_for_update(read=True))
_ENDPOINT = once(
    select(
        connections.c.id,
        connections.c.name,
        connections.c.url,
        connections.c.peer_token,
        connections.c.kind,
        connections.c.card,
    ).where(connections.c.name == bindparam("name"))
)
# Written at the settling of every batch a peer answered.
_CONTACTED = once(
    update(connections)
    .where(connections.c.id == bindparam("connection_id"))
    .values(last_contact_at=bindparam("now"), failures=0, retry_at=None, last_error=None)
)


class ConnectionsRepo:
    def __init__(self, connection: StoreConnection) -> None:
        self._c = connection

    async def add(
        self,
        name: str,
        url: str,
        issued_token_hash: str,
        peer_token: str,
        now: datetime,
        person_id: int | None,
        kind: str = "parley",
        card: str | None = None,
    ) -> Connection:
        result = await self._c.execute(
            insert(connections)
            .values(
                name=name,
                url=url,
                issued_token_hash=issued_token_hash,
                peer_token=peer_token,
                created_by_person_id=person_id,
                created_at=now,
                kind=kind,
                card=card,
            )
            .returning(*_PUBLIC)
        )
        return _connection(result.one())

    async def by_name(self, name: str, shared_lock: bool = False) -> Connection | None:
        """The connection ``name``; with ``shared_lock``, its state cannot change (pause,
        revoke) until the transaction ends, while other sends on it go on."""
        query = _BY_NAME_SHARED if shared_lock else _BY_NAME
        row = (await self._c.execute(query, {"name": name})).first()
        return _connection(row) if row else None

    async def by_issued_token_hash(self, token_hash: str) -> Connection | None:
        query = select(*_PUBLIC).where(connections.c.issued_token_hash == token_hash)
        row = (await self._c.execute(query)).first()
        return _connection(row) if row else None

    async def listed(self) -> list[Connection]:
        rows = await self._c.execute(select(*_PUBLIC).order_by(connections.c.name))
        return [_connection(row) for row in rows]

    async def endpoint(self, name: str) -> PeerEndpoint | None:
        row = (await self._c.execute(_ENDPOINT, {"name": name})).first()
        if row is None:
            return None
        return PeerEndpoint(row.id, row.name, row.url, row.peer_token, row.kind, row.card)

    async def expose(self, connection_id: int, agent_ids: Sequence[int]) -> None:
        """Exactly ``agent_ids`` are exposed from now on."""
        await self._c.execute(delete(exposures).where(exposures.c.connection_id == connection_id))
        if agent_ids:
            rows = [{"connection_id": connection_id, "agent_id": a} for a in set(agent_ids)]
            await self._c.execute(insert(exposures), rows)

    async def exposed(self, connection_id: int) -> list[str]:
        query = (
            select(agents.c.name)
            .join(exposures, exposures.c.agent_id == agents.c.id)
            .where(exposures.c.connection_id == connection_id)
            .order_by(agents.c.name)
        )
        return list((await self._c.execute(query)).scalars())

    async def is_exposed(self, connection_id: int, agent_id: int) -> bool:
        query = select(exposures.c.agent_id).where(
            exposures.c.connection_id == connection_id, exposures.c.agent_id == agent_id
        )
        return (await self._c.execute(query)).first() is not None

    async def queued(self) -> dict[str, int]:
        """Frames waiting to be sent, per connection name."""
        query = (
            select(outbox.c.connection, func.count().label("frames"))
            .where(
                outbox.c.connection.is_not(None),
                outbox.c.state == DeliveryState.PENDING.value,
            )
            .group_by(outbox.c.connection)
        )
        return {row.connection: int(row.frames) for row in await self._c.execute(query)}

    async def contacted(self, connection_id: int, now: datetime) -> None:
        """The peer answered: no backoff any more."""
        await self._c.execute(_CONTACTED, {"connection_id": connection_id, "now": now})

    async def unreachable(self, connection_id: int, retry_at: datetime, error: str) -> None:
        await self._c.execute(
            update(connections)
            .where(connections.c.id == connection_id)
            .values(failures=connections.c.failures + 1, retry_at=retry_at, last_error=error)
        )

    async def set_state(self, connection_id: int, state: ConnectionState) -> None:
        values: dict[str, Any] = {"state": state.value}
        if state is ConnectionState.REVOKED:
            values["peer_token"] = ""  # never used again: forget it
        await self._c.execute(
            update(connections).where(connections.c.id == connection_id).values(**values)
        )

    async def set_queue_limit(self, connection_id: int, limit: int | None) -> None:
        await self._c.execute(
            update(connections).where(connections.c.id == connection_id).values(queue_limit=limit)
        )

    async def lock(self, connection_id: int) -> Connection | None:
        """The connection, locked until the transaction ends (a state change against a send)."""
        query = select(*_PUBLIC).where(connections.c.id == connection_id).with_for_update()
        row = (await self._c.execute(query)).first()
        return _connection(row) if row else None
