"""Message rows: the text of every topic, and which run took each as its input."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Select, bindparam, insert, literal, or_, select, union, update

from parley.conversations.model import Message, NewText
from parley.reads.model import Slice, Window
from parley.store.connection import Connection
from parley.store.keyset import first_slices, newest_of_each, sliced
from parley.store.shapes import once
from parley.store.tables import agents, given_inputs, messages, people

_author = agents.alias("author")
_recipient = agents.alias("recipient")


def _query() -> Select[Any]:
    return (
        select(
            messages,
            _author.c.name.label("author_agent"),
            people.c.name.label("author_person"),
            _recipient.c.name.label("recipient_name"),
        )
        .outerjoin(_author, _author.c.id == messages.c.author_agent_id)
        .outerjoin(people, people.c.id == messages.c.author_person_id)
        .outerjoin(_recipient, _recipient.c.id == messages.c.recipient_agent_id)
        .order_by(messages.c.id)
    )


def _message(row: Any) -> Message:
    author = row.author_agent or row.author_person or row.author_role or "parley"
    return Message(
        id=row.id,
        topic_id=row.topic_id,
        kind=row.kind,
        author=author,
        author_agent_id=row.author_agent_id,
        recipient=row.recipient_name,
        run_id=row.run_id,
        from_run_id=row.from_run_id,
        body=row.body,
        created_at=row.created_at,
        cut_short=bool(row.cut_short),
    )


_INSERT = once(insert(messages).returning(messages.c.id))
_ADD_TEXTS = once(insert(messages).returning(messages.c.id, sort_by_parameter_order=True))
_INPUTS = once(_query().where(messages.c.run_id == bindparam("run_id")))
# One id list from two indexes: as ``run_id = ? OR id IN (…)``, PostgreSQL read every message
# (216 ms at a million, for the run inspector and ``parley run show``).
_GIVEN = once(
    _query().where(
        messages.c.id.in_(
            union(
                select(messages.c.id).where(messages.c.run_id == bindparam("run_id")),
                select(given_inputs.c.message_id).where(
                    given_inputs.c.run_id == bindparam("run_id")
                ),
            )
        )
    )
)
_INPUTS_OF = once(_query().where(messages.c.run_id.in_(bindparam("run_ids", expanding=True))))
_RECENT = (
    _query()
    .where(
        messages.c.topic_id == bindparam("topic_id"),
        or_(messages.c.run_id.is_(None), messages.c.run_id != bindparam("run_id")),
    )
    .order_by(None)
    .order_by(messages.c.id.desc())
    .limit(bindparam("limit"))
)


_UNCLAIMED = once(
    select(messages.c.id, messages.c.topic_id, messages.c.recipient_agent_id).where(
        messages.c.topic_id.in_(bindparam("topic_ids", expanding=True)),
        messages.c.run_id.is_(None),
        messages.c.recipient_agent_id.is_not(None),
    )
)

# A root's tree: the newest of each of its conversations, in one statement.
_NEWEST_IN_TOPICS = once(newest_of_each(_query(), messages.c.topic_id, messages.c.id))


_CHANNEL_REF_OF_RUN = once(
    select(messages.c.channel_ref)
    .where(messages.c.run_id == bindparam("run_id"), messages.c.channel_ref.is_not(None))
    .order_by(messages.c.id.desc())
    .limit(1)
)


class MessagesRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def add(self, topic_id: int, kind: str, body: str, now: datetime, **values: Any) -> int:
        row = {"topic_id": topic_id, "kind": kind, "body": body, "created_at": now, **values}
        return int((await self._c.execute(_INSERT, row)).scalar_one())

    async def add_texts(self, texts: Sequence[NewText], now: datetime) -> list[int]:
        """Text queued for runs, in one statement; their ids, in that order."""
        rows = [
            {"topic_id": t.topic_id, "kind": "text", "body": t.body, "created_at": now,
             "recipient_agent_id": t.recipient_agent_id, "run_id": t.run_id,
             "author_agent_id": t.author_agent_id, "author_person_id": t.author_person_id,
             "author_role": t.author_role, "from_run_id": t.from_run_id,
             "channel_ref": t.channel_ref, "reply_agent_id": t.reply_agent_id,
             "reply_topic_id": t.reply_topic_id, "a2a_sent_as": t.a2a_sent_as}
            for t in texts
        ]  # fmt: skip
        if len(rows) == 1:
            return [int((await self._c.execute(_INSERT, rows[0])).scalar_one())]
        return [int(row.id) for row in await self._c.execute(_ADD_TEXTS, rows)] if rows else []

    async def page(self, topic_id: int, window: Window) -> Slice[Message]:
        """A topic's messages, newest first."""
        query = _query().where(messages.c.topic_id == topic_id)
        return await sliced(self._c, query, messages.c.id, window, _message)

    async def newest_in_topics(
        self, topic_ids: Sequence[int], each: int
    ) -> dict[int, Slice[Message]]:
        """Each topic's newest ``each`` messages, newest first, as ``page`` gives a first page
        of ``each``; by topic id, every asked topic there (one with none: an empty slice)."""
        return await first_slices(
            self._c, _NEWEST_IN_TOPICS, list(topic_ids), each, _message, lambda item: item.id
        )

    async def inputs(self, run_id: int) -> list[Message]:
        rows = await self._c.execute(_INPUTS, {"run_id": run_id})
        return [_message(row) for row in rows]

    async def given_to(self, run_id: int) -> list[Message]:
        """What a run was given: its input, or what it had when it ended without answering it
        and its text moved on (``move_inputs``)."""
        rows = await self._c.execute(_GIVEN, {"run_id": run_id})
        return [_message(row) for row in rows]

    async def inputs_of(self, run_ids: Sequence[int]) -> dict[int, list[Message]]:
        """Each run's input, in order, for a batch of runs."""
        found: dict[int, list[Message]] = {}
        for row in await self._c.execute(_INPUTS_OF, {"run_ids": list(run_ids)}):
            message = _message(row)
            assert message.run_id is not None
            found.setdefault(message.run_id, []).append(message)
        return found

    async def claim_notices(self, runs: Sequence[tuple[int, int, int]]) -> None:
        """Make the notices addressed to an agent in a topic that no run took yet part of the
        input of ``runs`` (run id, agent id, topic id). One statement when there are none."""
        by_pair = {(agent_id, topic_id): run_id for run_id, agent_id, topic_id in runs}
        topic_ids = sorted({topic_id for _, _, topic_id in runs})
        found = await self._c.execute(_UNCLAIMED, {"topic_ids": topic_ids})
        for row in list(found):
            run_id = by_pair.get((row.recipient_agent_id, row.topic_id))
            if run_id is not None:
                await self._c.execute(
                    update(messages).where(messages.c.id == row.id).values(run_id=run_id)
                )

    async def history(self, topic_id: int, run_id: int, limit: int) -> list[Message]:
        """The latest ``limit`` messages of a topic, not ``run_id``'s input; oldest first."""
        parameters = {"topic_id": topic_id, "run_id": run_id, "limit": limit}
        rows = await self._c.execute(_RECENT, parameters)
        return [_message(row) for row in reversed(list(rows))]

    async def reply_route(self, run_id: int) -> tuple[int | None, int | None]:
        """For a node session's run: where its answer goes (agent, topic), if a run asked."""
        row = (
            await self._c.execute(
                select(messages.c.reply_agent_id, messages.c.reply_topic_id)
                .where(messages.c.run_id == run_id)
                .order_by(messages.c.id)
            )
        ).first()
        if row is None:
            return None, None
        return row.reply_agent_id, row.reply_topic_id

    async def channel_ref_of_run(self, run_id: int) -> str | None:
        """The channel conversation the latest of a run's input came in from, if any."""
        found = await self._c.execute(_CHANNEL_REF_OF_RUN, {"run_id": run_id})
        ref: str | None = found.scalar_one_or_none()
        return ref

    async def move_inputs(self, from_run_id: int, to_run_id: int) -> None:
        """The text of a run that ended without answering it waits for ``to_run_id``; the ended
        run keeps a record of what it was given."""
        given = select(literal(from_run_id), messages.c.id).where(messages.c.run_id == from_run_id)
        await self._c.execute(insert(given_inputs).from_select(["run_id", "message_id"], given))
        await self._c.execute(
            update(messages).where(messages.c.run_id == from_run_id).values(run_id=to_run_id)
        )
