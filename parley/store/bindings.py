"""Channel binding rows: at most one live (active or ending) binding per conversation, ended
with a reason and kept afterwards."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, insert, select, update

from parley.channels.model import (
    BindingStatus,
    BindingTargetKind,
    BindRequest,
    ConversationRef,
    SessionBindingRecord,
)
from parley.store.connection import Connection
from parley.store.shapes import once
from parley.store.tables import channel_bindings as b

_LIVE = b.c.status != BindingStatus.ENDED.value
# Read by the channels' sweeper at each pass: built once (see shapes.py).
_ACTIVE = once(select(b).where(b.c.status == BindingStatus.ACTIVE.value).order_by(b.c.id))


def _seconds(value: int | None) -> timedelta | None:
    return None if value is None else timedelta(seconds=value)


def _whole(value: timedelta | None) -> int | None:
    return None if value is None else max(1, round(value.total_seconds()))


def _record(row: Any) -> SessionBindingRecord:
    return SessionBindingRecord(
        binding_id=row.id,
        target_session_key=row.target_session_key,
        target_kind=BindingTargetKind(row.target_kind),
        conversation=ConversationRef(
            row.channel, row.account_id, row.conversation_id, row.parent_conversation_id
        ),
        status=BindingStatus(row.status),
        bound_at=row.bound_at,
        expires_at=row.expires_at,
        bound_by=row.bound_by,
        last_activity_at=row.last_activity_at,
        idle_timeout=_seconds(row.idle_timeout_seconds),
        max_age=_seconds(row.max_age_seconds),
        ended_reason=row.ended_reason,
        ended_at=row.ended_at,
        metadata=json.loads(row.metadata_json),
    )


def _at(ref: ConversationRef) -> Any:
    return (
        (b.c.channel == ref.channel)
        & (b.c.account_id == ref.account_id)
        & (b.c.conversation_id == ref.conversation_id)
    )


class BindingsRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def insert(
        self, request: BindRequest, now: datetime, expires_at: datetime | None, metadata: str
    ) -> SessionBindingRecord:
        ref = request.conversation
        result = await self._c.execute(
            insert(b)
            .values(
                target_session_key=request.target_session_key,
                target_kind=request.target_kind.value,
                channel=ref.channel,
                account_id=ref.account_id,
                conversation_id=ref.conversation_id,
                parent_conversation_id=ref.parent_conversation_id,
                bound_at=now,
                expires_at=expires_at,
                bound_by=request.bound_by,
                last_activity_at=now,
                idle_timeout_seconds=_whole(request.idle_timeout),
                max_age_seconds=_whole(request.max_age),
                metadata_json=metadata,
            )
            .returning(*b.c)
        )
        return _record(result.one())

    async def by_id(self, binding_id: int) -> SessionBindingRecord | None:
        row = (await self._c.execute(select(b).where(b.c.id == binding_id))).first()
        return _record(row) if row else None

    async def live_by_session(self, key: str) -> list[SessionBindingRecord]:
        query = select(b).where(b.c.target_session_key == key, _LIVE).order_by(b.c.id)
        return [_record(row) for row in await self._c.execute(query)]

    async def live_by_conversation(self, ref: ConversationRef) -> SessionBindingRecord | None:
        row = (await self._c.execute(select(b).where(_at(ref), _LIVE))).first()
        return _record(row) if row else None

    async def active(self) -> list[SessionBindingRecord]:
        return [_record(row) for row in await self._c.execute(_ACTIVE)]

    async def listed(
        self, statuses: Sequence[BindingStatus], session: str | None, before_id: int | None,
        limit: int,
    ) -> list[SessionBindingRecord]:  # fmt: skip
        """Newest first; only ``statuses`` and ``session`` if given; older than ``before_id``."""
        query = select(b).order_by(b.c.id.desc()).limit(limit)
        if statuses:
            query = query.where(b.c.status.in_([status.value for status in statuses]))
        if session is not None:
            query = query.where(b.c.target_session_key == session)
        if before_id is not None:
            query = query.where(b.c.id < before_id)
        return [_record(row) for row in await self._c.execute(query)]

    async def touch(self, binding_id: int, at: datetime) -> None:
        await self._c.execute(
            update(b)
            .where(b.c.id == binding_id, _LIVE, b.c.last_activity_at < at)
            .values(last_activity_at=at)
        )

    async def end(
        self,
        now: datetime,
        reason: str,
        ids: Sequence[int] | None = None,
        session: str | None = None,
        sessions: Sequence[str] | None = None,
    ) -> list[SessionBindingRecord]:
        """End the live bindings named (by id, by session or sessions); the ones ended."""
        which: list[ColumnElement[bool]] = []
        if ids is not None:
            which.append(b.c.id.in_(list(ids)))
        if session is not None:
            which.append(b.c.target_session_key == session)
        if sessions is not None:
            which.append(b.c.target_session_key.in_(list(sessions)))
        rows = await self._c.execute(
            update(b)
            .where(_LIVE, *which)
            .values(status=BindingStatus.ENDED.value, ended_at=now, ended_reason=reason)
            .returning(*b.c)
        )
        return sorted((_record(row) for row in rows), key=lambda r: r.binding_id)
