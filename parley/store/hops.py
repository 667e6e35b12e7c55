"""Hop counters: how much work agents set off for one origin in its current window."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, case, null, update
from sqlalchemy.dialects import postgresql, sqlite

from parley.store.connection import Connection
from parley.store.shapes import once
from parley.store.tables import hop_counts
from parley.store.types import UTCDateTime


def _spend(dialect: Any) -> Any:
    """Count one hop in one statement: a window that began at or before ``since`` is over, and
    the hop starts a new one (forgetting that it was noticed)."""
    now = bindparam("now", type_=UTCDateTime)
    over = hop_counts.c.window_started_at <= bindparam("since", type_=UTCDateTime)
    statement = dialect.insert(hop_counts).values(
        origin_topic_id=bindparam("origin_id"), window_started_at=now, hops=1
    )
    return statement.on_conflict_do_update(
        index_elements=[hop_counts.c.origin_topic_id],
        set_={
            "hops": case((over, 1), else_=hop_counts.c.hops + 1),
            "window_started_at": case((over, now), else_=hop_counts.c.window_started_at),
            "noticed_at": case((over, null()), else_=hop_counts.c.noticed_at),
        },
    ).returning(hop_counts.c.hops)


# Built once: this runs on every hop.
_SPEND = {"sqlite": once(_spend(sqlite)), "postgresql": once(_spend(postgresql))}
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
        parameters = {"origin_id": origin_id, "now": now, "since": since}
        result = await self._c.execute(_SPEND[self._c.dialect.name], parameters)
        return int(result.scalar_one())

    async def mark_noticed(self, origin_id: int, now: datetime) -> bool:
        """True once per window: the first caller tells the origin that its budget is spent."""
        result = await self._c.execute(_NOTICE, {"origin_id": origin_id, "now": now})
        return result.rowcount == 1
