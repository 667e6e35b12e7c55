"""The one MetaData every table of the store belongs to."""

from __future__ import annotations

from sqlalchemy import Index, MetaData, text

metadata = MetaData()


def partial_index(name: str, *columns: str, where: str, unique: bool = False) -> Index:
    """An index of the rows ``where`` holds, its condition written once: SQLite and PostgreSQL
    each take it under a keyword of their own, and a condition given to one only would make
    the other index every row."""
    condition = text(where)
    return Index(name, *columns, unique=unique, sqlite_where=condition, postgresql_where=condition)
