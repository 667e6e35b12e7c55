"""Keyset pagination: a page is the rows after the previous page's last key in the list's order,
read as one index range (no OFFSET), so rows added meanwhile never shift a page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Select, bindparam, func, select

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


def newest_of_each(
    query: Select[Any], group: ColumnElement[Any], key: ColumnElement[Any]
) -> Select[Any]:
    """``query``'s newest rows (by the unique ``key``) of each ``group`` in the bound
    ``topic_ids``, at most the bound ``each`` per group, by group then newest first: one
    statement for a page that shows many topics (a root's tree), not one per topic."""
    ranked = (
        query.add_columns(
            func.row_number().over(partition_by=group, order_by=key.desc()).label("rank")
        )
        .where(group.in_(bindparam("topic_ids", expanding=True)))
        .order_by(None)
        .subquery("ranked")
    )
    return (
        select(ranked)
        .where(ranked.c.rank <= bindparam("each"))
        .order_by(ranked.c[group.name], ranked.c[key.name].desc())
    )


async def first_slices(
    connection: Connection,
    statement: Any,
    topic_ids: list[int],
    each: int,
    convert: Callable[[Any], T],
    key: Callable[[T], int],
) -> dict[int, Slice[T]]:
    """Each asked topic's first slice of ``each`` (one with none: empty), from a statement of
    ``newest_of_each``; one row more of each is read to know whether it continues."""
    rows = await connection.execute(statement, {"topic_ids": topic_ids, "each": each + 1})
    found: dict[int, list[T]] = {topic_id: [] for topic_id in topic_ids}
    for row in rows:
        found[row.topic_id].append(convert(row))
    return {
        topic_id: Slice(items[:each], key(items[each - 1]) if len(items) > each else None)
        for topic_id, items in found.items()
    }
