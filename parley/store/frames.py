"""Frames on the wire, as the store keeps them: outbound text frames are outbox items of kind
``frame`` with their connection, conversation and seq (claimed per connection, in order); the
frames received are kept by message_id with their verdict, for dedup."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, exists, func, insert, select, true, update
from sqlalchemy.dialects import postgresql, sqlite

from parley.deliveries.model import Delivery, DeliveryState
from parley.federation.model import TEXT_KEY, Outbound, OutboundText, outbound_of
from parley.runs.model import RunState
from parley.store.connection import Connection
from parley.store.outbox import PENDING, claiming, delivery_of
from parley.store.shapes import once
from parley.store.tables import messages, outbox, received_frames, runs, topics

_EARLIER = outbox.alias("earlier")
# A connection's due frames in (thread, seq) order, leaving out every frame behind an earlier
# one of its thread that is not due (waiting for its retry, or claimed and unsettled): a thread
# whose text waits holds up only its own later text.
_DUE_FRAME_IDS = (
    select(outbox.c.id)
    .where(
        outbox.c.connection == bindparam("frames_of"),
        PENDING,
        outbox.c.next_attempt_at <= bindparam("now"),
        ~exists().where(
            _EARLIER.c.connection == outbox.c.connection,
            _EARLIER.c.thread_topic_id == outbox.c.thread_topic_id,
            _EARLIER.c.state == DeliveryState.PENDING.value,
            _EARLIER.c.seq < outbox.c.seq,
            _EARLIER.c.next_attempt_at > bindparam("now"),
        ),
    )
    .order_by(outbox.c.thread_topic_id, outbox.c.seq)
    .limit(bindparam("limit"))
)
_DUE_FRAMES = _DUE_FRAME_IDS.with_for_update(skip_locked=True)
_COUNT_DUE = once(select(func.count()).select_from(_DUE_FRAME_IDS.subquery()))
_CLAIM_FRAMES = once(claiming(_DUE_FRAMES))
_PUT = once(insert(outbox))
_NEXT_DUE = once(
    select(func.min(outbox.c.next_attempt_at)).where(
        outbox.c.connection == bindparam("connection"), PENDING
    )
)
_RESENT = once(
    update(outbox)
    .where(outbox.c.id == bindparam("item"), PENDING, outbox.c.claimed_by == bindparam("worker"))
    .values(resends=outbox.c.resends + 1)
    .returning(outbox.c.resends)
)
_EXTEND = once(
    update(outbox)
    .where(
        outbox.c.id.in_(bindparam("ids", expanding=True)),
        PENDING,
        outbox.c.claimed_by == bindparam("worker"),
    )
    .values(claimed_until=bindparam("until"), next_attempt_at=bindparam("until"))
)
# Text waiting here for a run: from the queued runs (few, found by their state's index) to
# their texts, not from the connection's threads to every text they ever had.
_QUEUED_RUNS_OF_CONNECTION = (
    select(runs.c.id)
    .join(topics, runs.c.topic_id == topics.c.id)
    .where(runs.c.state == RunState.QUEUED.value, topics.c.connection == bindparam("connection"))
)
_WAITING_TEXT = (
    select(messages.c.id)
    .where(messages.c.run_id.in_(_QUEUED_RUNS_OF_CONNECTION), messages.c.kind == "text")
    .limit(bindparam("up_to"))
    .subquery()
)
_BACKLOG = once(select(func.count()).select_from(_WAITING_TEXT))
_VERDICTS = once(
    select(received_frames.c.message_id, received_frames.c.verdict, received_frames.c.reason,
           received_frames.c.detail).where(
        received_frames.c.connection_id == bindparam("connection_id"),
        received_frames.c.message_id.in_(bindparam("message_ids", expanding=True)),
    )
)  # fmt: skip


def _record(dialect: Any) -> Any:
    """A verdict kept unless one is kept for the frame already: two copies of a batch may
    both refuse a new thread, with no thread's lock to order them."""
    return dialect.insert(received_frames).on_conflict_do_nothing(
        index_elements=[received_frames.c.connection_id, received_frames.c.message_id]
    )


_RECORD = {"sqlite": once(_record(sqlite)), "postgresql": once(_record(postgresql))}


class FramesRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def put(self, frame: Outbound, now: datetime) -> None:
        await self.put_many([frame], now)

    async def put_many(self, frames: Sequence[Outbound], now: datetime) -> None:
        """Frames in one statement, in this order."""
        rows = [_outbox_row(frame, now) for frame in frames]
        if len(rows) == 1:
            await self._c.execute(_PUT, rows[0])
        elif rows:
            await self._c.execute(_PUT, rows)  # one executemany

    async def claim(
        self, connection: str, worker: str, now: datetime, until: datetime, limit: int
    ) -> list[Delivery]:
        """Up to ``limit`` due frames of ``connection`` for ``worker`` until ``until``, in
        (thread, seq) order."""
        params = {"frames_of": connection, "worker": worker, "now": now, "until": until,
                  "limit": limit}  # fmt: skip
        rows = list(await self._c.execute(_CLAIM_FRAMES, params))
        rows.sort(key=lambda row: (row.thread_topic_id, row.seq))
        return [delivery_of(row) for row in rows]

    async def count_due(self, connection: str, now: datetime, up_to: int) -> int:
        """How many frames of ``connection`` ``claim`` would find due now, up to ``up_to``."""
        params = {"frames_of": connection, "now": now, "limit": up_to}
        return int((await self._c.execute(_COUNT_DUE, params)).scalar_one())

    async def fail_pending(
        self, connection: str, error: str, texts_only: bool = False
    ) -> list[OutboundText]:
        """Fail every frame of ``connection`` still waiting to be sent (claimed ones too: their
        settling then changes nothing), or with ``texts_only`` its text frames only (a close
        goes once the connection can carry it); the text frames, for their notices."""
        texts = outbox.c.idempotency_key.startswith(TEXT_KEY) if texts_only else true()
        result = await self._c.execute(
            update(outbox)
            .where(outbox.c.connection == connection, PENDING, texts)
            .values(state=DeliveryState.FAILED.value, last_error=error, claimed_by=None,
                    claimed_until=None)
            .returning(outbox.c.payload, outbox.c.seq, outbox.c.thread_topic_id)
        )  # fmt: skip
        rows = sorted(result, key=lambda row: (row.thread_topic_id, row.seq))
        frames = [outbound_of(row.payload) for row in rows]
        return [frame for frame in frames if isinstance(frame, OutboundText)]

    async def send_again(
        self, connection: str, topic_id: int, first_seq: int, before_seq: int, at: datetime
    ) -> bool:
        """Make the thread's frames from ``first_seq`` up to ``before_seq`` due again ``at``,
        those delivered included; False (and nothing changed) if one of them failed."""
        thread = (
            outbox.c.connection == connection,
            outbox.c.thread_topic_id == topic_id,
            outbox.c.seq >= first_seq,
            outbox.c.seq < before_seq,
        )
        failed = select(outbox.c.id).where(*thread, outbox.c.state == DeliveryState.FAILED.value)
        if (await self._c.execute(failed.limit(1))).first() is not None:
            return False
        delivered = outbox.c.state == DeliveryState.DELIVERED.value
        await self._c.execute(
            update(outbox)
            .where(*thread, delivered)
            .values(state=DeliveryState.PENDING.value, next_attempt_at=at, delivered_at=None)
        )
        return True

    async def resent(self, item_id: int, worker: str) -> int | None:
        """Count one more resend of ``worker``'s claimed frame: how many it has had now (None:
        the claim is no longer ``worker``'s)."""
        result = await self._c.execute(_RESENT, {"item": item_id, "worker": worker})
        resends: int | None = result.scalar_one_or_none()
        return resends

    async def extend(self, item_ids: Sequence[int], worker: str, until: datetime) -> None:
        """Extend ``worker``'s lease on these claimed frames (their batch is still out)."""
        if item_ids:
            params = {"ids": list(item_ids), "worker": worker, "until": until}
            await self._c.execute(_EXTEND, params)

    async def parked(self, min_resends: int) -> dict[str, list[str]]:
        """Threads held after ``min_resends`` resends, by connection: each its thread ID and
        the reason its frame holds."""
        query = (
            select(outbox.c.connection, outbox.c.payload, outbox.c.last_error)
            .where(outbox.c.connection.is_not(None), PENDING, outbox.c.resends >= min_resends)
            .order_by(outbox.c.connection, outbox.c.thread_topic_id, outbox.c.seq)
        )
        found: dict[str, list[str]] = {}
        for row in await self._c.execute(query):
            thread = outbound_of(row.payload).thread_id
            found.setdefault(row.connection, []).append(f"thread {thread}: {row.last_error}")
        return found

    async def waiting(self, connection: str) -> int:
        """Frames of ``connection`` waiting to be sent."""
        query = select(func.count()).where(outbox.c.connection == connection, PENDING)
        return int((await self._c.execute(query)).scalar_one())

    async def backlog(self, connection: str, up_to: int) -> int:
        """Text the peer of ``connection`` sent that waits for a run here to take it up,
        counted up to ``up_to`` (the limit it is held to: a long backlog is not counted whole
        for each batch)."""
        return int(
            (
                await self._c.execute(_BACKLOG, {"connection": connection, "up_to": up_to})
            ).scalar_one()
        )

    async def connections_pending(self) -> list[str]:
        """Connections with a frame pending (due or not), for a sender starting up."""
        query = select(outbox.c.connection).where(outbox.c.connection.is_not(None), PENDING)
        return sorted(set((await self._c.execute(query.distinct())).scalars()))

    async def next_due(self, connection: str) -> datetime | None:
        """When the connection's earliest pending frame falls due (a claimed one: at the end of
        its lease)."""
        found = await self._c.execute(_NEXT_DUE, {"connection": connection})
        due: datetime | None = found.scalar_one_or_none()
        return due

    async def received(self, connection_id: int, message_id: str) -> Any | None:
        """The verdict a frame with this message_id got (verdict, reason, detail), if any."""
        return (await self.received_many(connection_id, [message_id])).get(message_id)

    async def received_many(self, connection_id: int, message_ids: Sequence[str]) -> dict[str, Any]:
        """The verdicts frames with these message_ids got (verdict, reason, detail), by id."""
        if not message_ids:
            return {}
        found = await self._c.execute(
            _VERDICTS, {"connection_id": connection_id, "message_ids": list(message_ids)}
        )
        return {row.message_id: row for row in found}

    async def record(
        self,
        connection_id: int,
        message_id: str,
        verdict: str,
        reason: str | None,
        detail: str | None,
        now: datetime,
    ) -> bool:
        """Keep a frame's verdict; False (nothing changed) if one is kept for it already."""
        row = _verdict_row(connection_id, now, message_id, verdict, reason, detail)
        result = await self._c.execute(_RECORD[self._c.dialect.name], row)
        return bool(result.rowcount)

    async def record_many(
        self,
        connection_id: int,
        verdicts: Sequence[tuple[str, str, str | None, str | None]],
        now: datetime,
    ) -> None:
        """Keep frames' verdicts: (message_id, verdict, reason, detail) each."""
        if verdicts:
            rows = [_verdict_row(connection_id, now, *verdict) for verdict in verdicts]
            await self._c.execute(_RECORD[self._c.dialect.name], rows)


def _outbox_row(frame: Outbound, now: datetime) -> dict[str, Any]:
    return {
        "idempotency_key": frame.outbox_key(),
        "kind": frame.kind,
        "payload": frame.model_dump_json(),
        "created_at": now,
        "next_attempt_at": now,
        "connection": frame.connection,
        "thread_topic_id": frame.topic_id,
        "seq": frame.seq,
    }


def _verdict_row(
    connection_id: int,
    now: datetime,
    message_id: str,
    verdict: str,
    reason: str | None,
    detail: str | None,
) -> dict[str, Any]:
    return {
        "connection_id": connection_id,
        "message_id": message_id,
        "verdict": verdict,
        "reason": reason,
        "detail": detail,
        "received_at": now,
    }
