"""Invite rows: a one-time secret (its hash) with an expiry, used at most once."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update

from parley.federation.model import Invite
from parley.store.connection import Connection
from parley.store.tables import invites

_COLUMNS = [invites.c.id, invites.c.name, invites.c.created_at, invites.c.expires_at,
            invites.c.used_at]  # fmt: skip


def _invite(row: Any) -> Invite:
    return Invite(row.id, row.name, row.created_at, row.expires_at, row.used_at)


class InvitesRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def add(
        self, name: str, secret_hash: str, now: datetime, expires_at: datetime, person_id: int
    ) -> Invite:
        result = await self._c.execute(
            insert(invites)
            .values(
                name=name,
                secret_hash=secret_hash,
                created_by_person_id=person_id,
                created_at=now,
                expires_at=expires_at,
            )
            .returning(*_COLUMNS)
        )
        return _invite(result.one())

    async def by_secret_hash_locked(self, secret_hash: str) -> Invite | None:
        """The invite, its row locked until commit: two accepts of one secret do not both pass."""
        query = select(*_COLUMNS).where(invites.c.secret_hash == secret_hash).with_for_update()
        row = (await self._c.execute(query)).first()
        return _invite(row) if row else None

    async def use(self, invite_id: int, now: datetime) -> bool:
        result = await self._c.execute(
            update(invites)
            .where(invites.c.id == invite_id, invites.c.used_at.is_(None))
            .values(used_at=now)
        )
        return result.rowcount == 1
