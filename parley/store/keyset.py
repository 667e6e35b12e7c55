"""Keyset pagination: a page is the rows after the previous page's last key in the list's order,
read as one index range (no OFFSET), so rows added meanwhile never shift a page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Select

from parley.reads.model import Slice, Window
from parley.store.connection import Connection

T = TypeVar("T")


async def sliced(
    connection: Connection,
    query: Select[Any],
    key: ColumnElement[Any],
    window: Window,
    convert: Callable[[Any], T],
    newest_first: bool = True,
) -> Slice[T]:
    """``query``'s rows in the window, ordered by the unique column ``key`` (descending when
    ``newest_first``); one row more is read to know whether a next page exists."""
    if window.after is not None:
        query = query.where(key < window.after if newest_first else key > window.after)
    ordered = query.order_by(None).order_by(key.desc() if newest_first else key.asc())
    rows = list(await connection.execute(ordered.limit(window.limit + 1)))
    kept = rows[: window.limit]
    if len(rows) <= window.limit:
        return Slice([convert(row) for row in kept], None)
    assert key.key is not None
    return Slice([convert(row) for row in kept], getattr(kept[-1], key.key))
