"""Sign-in rows: the web page's sign-ins, found by their secret's hash while unexpired."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, insert, select

from parley.people.model import Person
from parley.store.connection import Connection
from parley.store.people import person_of_row
from parley.store.tables import people, sign_ins


class SignInsRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def add(
        self, person_id: int, secret_hash: str, now: datetime, expires_at: datetime
    ) -> None:
        """A new sign-in; the person's expired ones go (so that the rows stay few)."""
        await self._c.execute(
            delete(sign_ins).where(sign_ins.c.person_id == person_id, sign_ins.c.expires_at <= now)
        )
        await self._c.execute(
            insert(sign_ins).values(
                person_id=person_id,
                secret_hash=secret_hash,
                signed_in_at=now,
                expires_at=expires_at,
            )
        )

    async def person(self, secret_hash: str, now: datetime) -> Person | None:
        """Whose unexpired sign-in this is, if it still is one."""
        query = (
            select(people)
            .join(sign_ins, sign_ins.c.person_id == people.c.id)
            .where(sign_ins.c.secret_hash == secret_hash, sign_ins.c.expires_at > now)
        )
        row = (await self._c.execute(query)).first()
        return person_of_row(row) if row else None

    async def end(self, secret_hash: str) -> None:
        await self._c.execute(delete(sign_ins).where(sign_ins.c.secret_hash == secret_hash))

    async def end_all(self, person_id: int) -> None:
        await self._c.execute(delete(sign_ins).where(sign_ins.c.person_id == person_id))
