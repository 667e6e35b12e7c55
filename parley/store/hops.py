"""Hop counters: how much work agents set off for one origin in its current window."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, bindparam, case, null, select, true, update
from sqlalchemy.dialects import postgresql, sqlite

from parley.store.connection import Connection
from parley.store.shapes import once
from parley.store.tables import hop_counts
from parley.store.types import UTCDateTime
from parley.store.unnest import unnested


def _counted(statement: Any) -> Any:
    """An insert of counters made a counting upsert: a counter there already adds the hops."""
    over = hop_counts.c.window_started_at <= bindparam("since", type_=UTCDateTime)
    new = statement.excluded
    return statement.on_conflict_do_update(
        index_elements=[hop_counts.c.origin_topic_id],
        set_={
            "hops": case((over, new.hops), else_=hop_counts.c.hops + new.hops),
            "window_started_at": case(
                (over, new.window_started_at), else_=hop_counts.c.window_started_at
            ),
            "noticed_at": case((over, null()), else_=hop_counts.c.noticed_at),
        },
    ).returning(hop_counts.c.origin_topic_id, hop_counts.c.hops)


def _spend_many(dialect: Any) -> Any:
    """Count the hops of several origins in one statement (each origin once): a window that
    began at or before ``since`` is over, and the hops start a new one (forgetting that it was
    noticed)."""
    given = unnested(origin_id=("origin_ids", Integer), count=("counts", Integer))
    now = bindparam("now", type_=UTCDateTime)
    # ``WHERE true``: SQLite reads an upsert's ``ON CONFLICT`` after a bare FROM as a join's ON.
    rows = select(given.c.origin_id, now, given.c.count).where(true())
    columns = ["origin_topic_id", "window_started_at", "hops"]
    return _counted(dialect.insert(hop_counts).from_select(columns, rows))


# Built once: this runs on every hop. The upsert is a construct of each dialect's own.
_SPEND_MANY = {
    "sqlite": once(_spend_many(sqlite)),
    "postgresql": once(_spend_many(postgresql)),
}
_NOTICE = once(
    update(hop_counts)
    .where(
        hop_counts.c.origin_topic_id == bindparam("origin_id"),
        hop_counts.c.noticed_at.is_(None),
    )
    .values(noticed_at=bindparam("now"))
)


class HopsRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def spend(self, origin_id: int, now: datetime, since: datetime) -> int:
        """Count a hop for ``origin_id``; how many its window holds, this one included. The
        counter's row stays locked until commit: the hops of one origin are counted in turn."""
        return (await self.spend_many({origin_id: 1}, now, since))[origin_id]

    async def spend_many(
        self, counts: Mapping[int, int], now: datetime, since: datetime
    ) -> dict[int, int]:
        """Count ``counts[origin]`` hops for each origin, in the origins' order (a counter stays
        locked until commit: two batches lock theirs in one order); how many each window holds,
        these included."""
        origin_ids = sorted(counts)
        given = {"origin_ids": origin_ids, "counts": [counts[o] for o in origin_ids]}
        statement = _SPEND_MANY[self._c.dialect.name]
        rows = await self._c.execute(statement, {**given, "now": now, "since": since})
        return {row.origin_topic_id: int(row.hops) for row in rows}

    async def mark_noticed(self, origin_id: int, now: datetime) -> bool:
        """True once per window: the first caller tells the origin that its budget is spent."""
        result = await self._c.execute(_NOTICE, {"origin_id": origin_id, "now": now})
        return result.rowcount == 1
