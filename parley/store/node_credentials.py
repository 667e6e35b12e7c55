"""Node credential rows: the public key issued to each node name, live or revoked."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update

from parley.mesh.model import NodeCredential
from parley.store.connection import Connection
from parley.store.tables import node_credentials


def _credential(row: Any) -> NodeCredential:
    return NodeCredential(
        node=row.node,
        public_key=row.public_key,
        issued_at=row.issued_at,
        revoked_at=row.revoked_at,
    )


class NodeCredentialsRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def live(self, node: str) -> NodeCredential | None:
        """The node name's credentials not revoked, if it has some."""
        query = select(node_credentials).where(
            node_credentials.c.node == node, node_credentials.c.revoked_at.is_(None)
        )
        row = (await self._c.execute(query)).first()
        return _credential(row) if row else None

    async def add(self, node: str, public_key: str, now: datetime) -> NodeCredential:
        """Live from now; the store refuses a second live key for a name."""
        await self._c.execute(
            insert(node_credentials).values(node=node, public_key=public_key, issued_at=now)
        )
        return NodeCredential(node, public_key, now, None)

    async def revoke(self, node: str, now: datetime) -> NodeCredential | None:
        """Revoke the name's live credentials; those revoked (None: it had none)."""
        live = await self.live(node)
        if live is None:
            return None
        await self._c.execute(
            update(node_credentials)
            .where(node_credentials.c.public_key == live.public_key)
            .values(revoked_at=now)
        )
        return NodeCredential(live.node, live.public_key, live.issued_at, now)

    async def revoked(self) -> list[NodeCredential]:
        """Every revoked key, oldest revocation first (the broker's list is all of them)."""
        query = (
            select(node_credentials)
            .where(node_credentials.c.revoked_at.is_not(None))
            .order_by(node_credentials.c.revoked_at, node_credentials.c.id)
        )
        return [_credential(row) for row in await self._c.execute(query)]
