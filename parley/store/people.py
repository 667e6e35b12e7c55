"""People rows."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, insert, select, update

from parley.people.model import Person, Role
from parley.reads.model import Slice, Window
from parley.store.connection import Connection
from parley.store.keyset import sliced
from parley.store.shapes import once
from parley.store.tables import people

# Every API call's first statement: run on the driver directly (shapes.py).
_BY_TOKEN_HASH = once(select(people).where(people.c.token_hash == bindparam("token_hash")))


def person_of_row(row: Any) -> Person:
    return Person(id=row.id, name=row.name, role=Role(row.role), created_at=row.created_at)


class PeopleRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def add(self, name: str, role: Role, token_hash: str, now: datetime) -> Person:
        result = await self._c.execute(
            insert(people)
            .values(name=name, role=role.value, token_hash=token_hash, created_at=now)
            .returning(*people.c)
        )
        return person_of_row(result.one())

    async def by_name(self, name: str) -> Person | None:
        row = (await self._c.execute(select(people).where(people.c.name == name))).first()
        return person_of_row(row) if row else None

    async def by_id(self, person_id: int) -> Person | None:
        row = (await self._c.execute(select(people).where(people.c.id == person_id))).first()
        return person_of_row(row) if row else None

    async def by_token_hash(self, token_hash: str) -> Person | None:
        row = (await self._c.execute(_BY_TOKEN_HASH, {"token_hash": token_hash})).first()
        return person_of_row(row) if row else None

    async def replace_token_hash(self, person_id: int, token_hash: str) -> None:
        await self._c.execute(
            update(people).where(people.c.id == person_id).values(token_hash=token_hash)
        )

    async def page(self, window: Window) -> Slice[Person]:
        """People by name."""
        return await sliced(
            self._c, select(people), people.c.name, window, person_of_row, newest_first=False
        )

    async def count(self) -> int:
        return int((await self._c.execute(select(func.count()).select_from(people))).scalar_one())
