"""Tasks of A2A agents that our roles' texts started: recorded when the agent took the text,
followed until they end, cancelled when the work they were for is stopped here."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from parley.federation.model import OutboundText, PeerEndpoint, RemoteTask, SentBefore
from parley.store.connection import Connection
from parley.store.shapes import once
from parley.store.tables import a2a_remote_tasks, a2a_sent_texts, connections

_OPEN = (
    select(
        a2a_remote_tasks,
        connections.c.name,
        connections.c.url,
        connections.c.peer_token,
        connections.c.kind,
        connections.c.card,
    )
    .join(connections, connections.c.id == a2a_remote_tasks.c.connection_id)
    .where(a2a_remote_tasks.c.settled_at.is_(None))
)


_CANCEL_IN_TOPICS = once(
    update(a2a_remote_tasks)
    .where(
        a2a_remote_tasks.c.topic_id.in_(bindparam("topic_ids", expanding=True)),
        a2a_remote_tasks.c.settled_at.is_(None),
        a2a_remote_tasks.c.cancel_asked.is_(False),
    )
    .values(cancel_asked=True)
)


def _keep_sent(dialect: Any) -> Any:
    return once(
        dialect.insert(a2a_sent_texts)
        .on_conflict_do_nothing()
        .returning(a2a_sent_texts.c.message_id)
    )


_KEEP_SENT = {"sqlite": _keep_sent(sqlite), "postgresql": _keep_sent(postgresql)}
_THIS_SENT = (
    a2a_sent_texts.c.connection_id == bindparam("sent_to"),
    a2a_sent_texts.c.message_id == bindparam("sent_id"),
)
_SENT_BEFORE = once(select(a2a_sent_texts.c.remote_task_id).where(*_THIS_SENT))
_SENT_AS = once(
    update(a2a_sent_texts).where(*_THIS_SENT).values(remote_task_id=bindparam("task_there"))
)


def _remote(row: Any) -> RemoteTask:
    peer = PeerEndpoint(row.connection_id, row.name, row.url, row.peer_token, row.kind, row.card)
    return RemoteTask(
        id=row.id,
        peer=peer,
        topic_id=row.topic_id,
        remote_task_id=row.remote_task_id,
        frame=OutboundText.model_validate_json(row.frame),
        state=row.state,
        cancel_asked=row.cancel_asked,
        replies=row.replies,
        created_at=row.created_at,
        deadline=row.deadline,
    )


class RemoteTasksRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def sending(
        self, connection_id: int, frame: OutboundText, now: datetime
    ) -> SentBefore | None:
        """``frame`` kept as being sent to the agent; None the first time, else what an earlier
        attempt left of it."""
        values = {"connection_id": connection_id, "message_id": frame.message_id,
                  "topic_id": frame.topic_id, "sent_at": now}  # fmt: skip
        if (await self._c.execute(_KEEP_SENT[self._c.dialect.name], values)).first():
            return None
        this = {"sent_to": connection_id, "sent_id": frame.message_id}
        return SentBefore((await self._c.execute(_SENT_BEFORE, this)).scalar_one())

    async def started(
        self,
        connection_id: int,
        frame: OutboundText,
        remote_task_id: str,
        state: str,
        now: datetime,
        deadline: datetime,
    ) -> int:
        """The agent took ``frame`` as ``remote_task_id`` (a new task, or one that asked for
        more and goes on: followed again, until a new deadline)."""
        existing = (
            await self._c.execute(
                select(a2a_remote_tasks.c.id).where(
                    a2a_remote_tasks.c.connection_id == connection_id,
                    a2a_remote_tasks.c.remote_task_id == remote_task_id,
                )
            )
        ).scalar_one_or_none()
        sent_as = {"sent_to": connection_id, "sent_id": frame.message_id}
        await self._c.execute(_SENT_AS, {**sent_as, "task_there": remote_task_id})
        values = {"frame": frame.model_dump_json(), "state": state, "deadline": deadline}
        if existing is not None:
            await self._c.execute(
                update(a2a_remote_tasks)
                .where(a2a_remote_tasks.c.id == existing)
                .values(**values, settled_at=None)
            )
            return int(existing)
        result = await self._c.execute(
            insert(a2a_remote_tasks)
            .values(
                connection_id=connection_id,
                topic_id=frame.topic_id,
                remote_task_id=remote_task_id,
                created_at=now,
                **values,
            )
            .returning(a2a_remote_tasks.c.id)
        )
        return int(result.scalar_one())

    async def open(self, limit: int = 500) -> list[RemoteTask]:
        rows = await self._c.execute(_OPEN.order_by(a2a_remote_tasks.c.id).limit(limit))
        return [_remote(row) for row in rows]

    async def waiting_for_us(self, connection_id: int, topic_id: int) -> str | None:
        """The thread's task that asked us for more (input required), if any: our next text in
        the thread answers it."""
        query = select(a2a_remote_tasks.c.remote_task_id).where(
            a2a_remote_tasks.c.connection_id == connection_id,
            a2a_remote_tasks.c.topic_id == topic_id,
            a2a_remote_tasks.c.state == "TASK_STATE_INPUT_REQUIRED",
            a2a_remote_tasks.c.settled_at.is_(None),
        )
        return (await self._c.execute(query.limit(1))).scalar_one_or_none()

    async def cancel_in_topics(self, topic_ids: Sequence[int]) -> int:
        """The open tasks started from these topics are to be cancelled (on every stop: built
        once)."""
        if not topic_ids:
            return 0
        result = await self._c.execute(_CANCEL_IN_TOPICS, {"topic_ids": list(topic_ids)})
        return int(result.rowcount or 0)

    async def moved(self, task_id: int, state: str, replies: int) -> None:
        await self._c.execute(
            update(a2a_remote_tasks)
            .where(a2a_remote_tasks.c.id == task_id)
            .values(state=state, replies=replies)
        )

    async def settled(self, task_id: int, state: str, replies: int, now: datetime) -> None:
        await self._c.execute(
            update(a2a_remote_tasks)
            .where(a2a_remote_tasks.c.id == task_id)
            .values(state=state, replies=replies, settled_at=now)
        )
