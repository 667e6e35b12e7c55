"""Topic rows: conversations, tasks, agent conversations and node exchanges."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    bindparam,
    func,
    insert,
    literal_column,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite

from parley.conversations.model import LOCAL, ThreadEnd, Topic, TopicKind
from parley.people.model import Person
from parley.reads.model import Slice, Window
from parley.store.connection import Connection
from parley.store.keyset import sliced
from parley.store.rows import RowReader, member_of
from parley.store.shapes import once, returned_beside
from parley.store.tables import agents, people, runs, topics
from parley.store.visibility import readable_topic

_worker = agents.alias("worker")
_addressed = agents.alias("addressed")
_sender = agents.alias("sender")


def _query() -> Select[Any]:
    return (
        select(
            topics,
            _worker.c.name.label("agent_name"),
            _addressed.c.name.label("addressed_name"),
            _sender.c.name.label("sender_name"),
            people.c.name.label("person_name"),
        )
        .join(_worker, _worker.c.id == topics.c.agent_id)
        .outerjoin(_addressed, _addressed.c.id == topics.c.addressed_agent_id)
        .outerjoin(_sender, _sender.c.id == topics.c.sender_agent_id)
        .outerjoin(people, people.c.id == topics.c.person_id)
    )


# A topic's row, read by position (``rows``): every read of topics.
_TOPICS = RowReader(Topic, convert={"kind": member_of(TopicKind), "thread": bool})
# One row alone, as the batch reads read each.
_topic = _TOPICS.one

# Statements on the hot path are built once: building a select costs ~100 µs here, running a
# prebuilt one ~15 µs.
_BY_ID = once(_query().where(topics.c.id == bindparam("topic_id")))
_OPEN_AGENT_CONVERSATION = once(
    _query().where(
        topics.c.kind == TopicKind.AGENT_CONVERSATION.value,
        topics.c.connection == bindparam("connection"),
        topics.c.root_topic_id == bindparam("root_id"),
        topics.c.pair_key == bindparam("pair"),
        topics.c.closed_at.is_(None),
    )
)
_BY_IDS = once(_query().where(topics.c.id.in_(bindparam("topic_ids", expanding=True))))
_A2A_CONTEXT = once(
    _query().where(
        topics.c.a2a_client_id == bindparam("client_id"),
        topics.c.addressed_agent_id == bindparam("agent_id"),
        topics.c.a2a_context == bindparam("context"),
    )
)
_of = topics.alias("of")
_WITH_ROOTS = once(
    _query()
    .join(_of, topics.c.id.in_([_of.c.id, _of.c.root_topic_id]))
    .where(_of.c.id.in_(bindparam("topic_ids", expanding=True)))
)
# A topic's lock is FOR NO KEY UPDATE on PostgreSQL (``key_share``): it orders text joining the
# topic, stops and closes, which all take it, but a foreign key's check (a message, a run in the
# topic) passes it. With FOR UPDATE, a turn's reply recorded while its topic was being closed
# deadlocked: the run ended, its message waiting on the topic; the close waiting on the run.
_CLOSED_LOCKED = once(
    select(topics.c.id, topics.c.closed_at, topics.c.closed_reason)
    .where(topics.c.id == bindparam("topic_id"))
    .with_for_update(key_share=True)
)
_INSERT = insert(topics).returning(topics.c.id)


def _insert_unless_taken(dialect: Any) -> Any:
    # No conflict target: every unique index of topics is one a concurrent insert may take.
    # The new row comes back as ``_query`` reads one, names and all: no read after the insert.
    return once(
        dialect.insert(topics)
        .on_conflict_do_nothing()
        .returning(
            *topics.c,
            _named(agents, "agent_id").label("agent_name"),
            _named(agents, "addressed_agent_id").label("addressed_name"),
            _named(agents, "sender_agent_id").label("sender_name"),
            _named(people, "person_id").label("person_name"),
        )
    )


def _named(table: Any, column: str) -> Any:
    """The name of the row of ``table`` the new topic's ``column`` points to."""
    return returned_beside(table.c.name, table.c.id == literal_column(f"topics.{column}"))


_INSERT_UNLESS_TAKEN = {
    "sqlite": _insert_unless_taken(sqlite),
    "postgresql": _insert_unless_taken(postgresql),
}
_BY_THREADS_LOCKED = once(
    select(
        topics.c.id,
        topics.c.thread_id,
        _worker.c.name.label("agent_name"),
        topics.c.peer_role,
        topics.c.seq_received,
        topics.c.closed_at,
        topics.c.closed_reason,
    )
    .join(_worker, _worker.c.id == topics.c.agent_id)
    .where(
        topics.c.connection == bindparam("connection"),
        topics.c.thread_id.in_(bindparam("thread_ids", expanding=True)),
    )
    .order_by(topics.c.id)
    .with_for_update(of=topics, key_share=True)
)
_RECEIVED_SEQ = once(
    update(topics).where(topics.c.id == bindparam("topic")).values(seq_received=bindparam("seq"))
)
_LOCK = once(
    select(topics.c.id, topics.c.closed_at, topics.c.closed_reason)
    .where(topics.c.id.in_(bindparam("topic_ids", expanding=True)))
    .order_by(topics.c.id)
    .with_for_update(key_share=True)
)

_OF = topics.alias("of_topic")
# A topic's root, found and locked in one statement (a stop waits for each round trip).
_LOCK_ROOT_OF = once(
    select(topics.c.id, topics.c.closed_at, topics.c.closed_reason)
    .where(
        topics.c.id
        == select(func.coalesce(_OF.c.root_topic_id, _OF.c.id))
        .where(_OF.c.id == bindparam("topic_id"))
        .scalar_subquery()
    )
    .with_for_update(of=topics, key_share=True)
)

_LOCK_ROOTS_OF_RUNS = once(
    select(topics.c.id, topics.c.closed_at, topics.c.closed_reason)
    .where(
        topics.c.id.in_(
            select(func.coalesce(_OF.c.root_topic_id, _OF.c.id))
            .join(runs, runs.c.topic_id == _OF.c.id)
            .where(runs.c.id.in_(bindparam("run_ids", expanding=True)))
        )
    )
    .order_by(topics.c.id)
    .with_for_update(of=topics, key_share=True)
)


class TopicsRepo:
    def __init__(self, connection: Connection, made: set[int] | None = None) -> None:
        self._c = connection
        # Topics this transaction holds locked, with why each is closed (None: open). Nobody
        # else can close them until commit, so what a later check asks is known: a hop's check
        # of its root, locked already by the run acting under it, costs no statement.
        self._held: dict[int, str | None] = {}
        # Topics this transaction made (shared with its runs' repository, see ``Tx``).
        self._made = set() if made is None else made

    async def insert(self, kind: TopicKind, agent_id: int, now: datetime, **values: Any) -> Topic:
        result = await self._c.execute(
            _INSERT, {"kind": kind.value, "agent_id": agent_id, "created_at": now, **values}
        )
        topic = await self.by_id(self._made_here(int(result.scalar_one())))
        assert topic is not None
        return topic

    async def insert_unless_raced(
        self, kind: TopicKind, agent_id: int, now: datetime, **values: Any
    ) -> Topic | None:
        """None when a concurrent transaction made the same one first (one open conversation
        per person and agent, per root and roles, per A2A context): the insert does nothing
        on a conflict, where a savepoint around it cost a third of a new conversation's."""
        statement = _INSERT_UNLESS_TAKEN[self._c.dialect.name]
        values = {"kind": kind.value, "agent_id": agent_id, "created_at": now, **values}
        row = (await self._c.execute(statement, values)).first()
        if row is None:
            return None
        self._made_here(int(row.id))
        return _topic(row)

    def _made_here(self, topic_id: int) -> int:
        """A topic this transaction made is held by it, and open: nobody else sees it before
        commit, so text joining it needs no check of its own (``closed_reason_locked``)."""
        self._held[topic_id] = None
        self._made.add(topic_id)
        return topic_id

    async def closed_reason_locked(self, topic_id: int) -> str | None:
        """Lock the topic's row until commit and say why it is closed (None: open). Text joins
        a topic under this lock, so closing it waits for that text and then stops its run."""
        if topic_id not in self._held:
            row = (await self._c.execute(_CLOSED_LOCKED, {"topic_id": topic_id})).one()
            self._hold(row)
        return self._held[topic_id]

    async def lock(self, topic_ids: Iterable[int]) -> None:
        """Lock these topics' rows until commit, in one order (by id), so that two
        transactions locking several never wait for each other in a circle."""
        wanted = sorted(set(topic_ids) - self._held.keys())
        if wanted:
            for row in await self._c.execute(_LOCK, {"topic_ids": wanted}):
                self._hold(row)

    async def lock_roots_of_runs(self, run_ids: Sequence[int]) -> None:
        """Lock the roots of the topics of these runs as ``lock`` does, in one statement."""
        if run_ids:
            for row in await self._c.execute(_LOCK_ROOTS_OF_RUNS, {"run_ids": list(run_ids)}):
                self._hold(row)

    async def lock_root_of(self, topic_id: int) -> None:
        """Lock the root of ``topic_id`` (itself, if it is a root) as ``lock`` does."""
        for row in await self._c.execute(_LOCK_ROOT_OF, {"topic_id": topic_id}):
            self._hold(row)

    def _hold(self, row: Any) -> None:
        self._held[row.id] = None if row.closed_at is None else (row.closed_reason or "closed")

    async def by_id(self, topic_id: int) -> Topic | None:
        row = (await self._c.execute(_BY_ID, {"topic_id": topic_id})).first()
        return _topic(row) if row else None

    async def a2a_context(self, client_id: int, agent_id: int, context: str) -> Topic | None:
        """The conversation that is an A2A client's context ``context`` with the agent."""
        parameters = {"client_id": client_id, "agent_id": agent_id, "context": context}
        row = (await self._c.execute(_A2A_CONTEXT, parameters)).first()
        return _topic(row) if row else None

    async def by_ids(self, topic_ids: Iterable[int]) -> dict[int, Topic]:
        return await self._by_id(_BY_IDS, topic_ids)

    async def with_roots(self, topic_ids: Iterable[int]) -> dict[int, Topic]:
        """These topics and their roots, in one statement."""
        return await self._by_id(_WITH_ROOTS, topic_ids)

    async def _by_id(self, query: Select[Any], topic_ids: Iterable[int]) -> dict[int, Topic]:
        wanted = list(topic_ids)
        if not wanted:
            return {}
        rows = await self._c.execute(query, {"topic_ids": wanted})
        return {topic.id: topic for topic in _TOPICS.all(rows)}

    async def open_conversation(self, person_id: int, addressed_id: int) -> Topic | None:
        query = _query().where(
            topics.c.kind == TopicKind.CONVERSATION.value,
            topics.c.person_id == person_id,
            topics.c.addressed_agent_id == addressed_id,
            topics.c.closed_at.is_(None),
            topics.c.a2a_client_id.is_(None),
        )
        row = (await self._c.execute(query)).first()
        return _topic(row) if row else None

    async def open_agent_conversation(
        self, connection: str, root_id: int, pair: str
    ) -> Topic | None:
        parameters = {"connection": connection, "root_id": root_id, "pair": pair}
        row = (await self._c.execute(_OPEN_AGENT_CONVERSATION, parameters)).first()
        return _topic(row) if row else None

    async def by_thread(self, connection: str, thread_id: str) -> Topic | None:
        query = _query().where(topics.c.connection == connection, topics.c.thread_id == thread_id)
        row = (await self._c.execute(query)).first()
        return _topic(row) if row else None

    async def by_threads_locked(
        self, connection: str, thread_ids: Iterable[str]
    ) -> list[ThreadEnd]:
        """The threads of ``connection`` known here among ``thread_ids``, their rows locked
        until commit in one order (by id), read in one statement."""
        wanted = sorted(set(thread_ids))
        if not wanted:
            return []
        parameters = {"connection": connection, "thread_ids": wanted}
        rows = list(await self._c.execute(_BY_THREADS_LOCKED, parameters))
        for row in rows:
            self._hold(row)
        return [
            ThreadEnd(
                row.id,
                row.thread_id,
                row.agent_name,
                row.peer_role,
                row.seq_received,
                row.closed_reason,
                row.closed_at is not None,
            )
            for row in rows
        ]

    async def on_connection(self, connection: str) -> list[int]:
        """The agent conversations with ``connection``'s peer, closed ones too."""
        query = select(topics.c.id).where(topics.c.connection == connection)
        return list((await self._c.execute(query)).scalars())

    async def node_topic(self, node_session_id: int) -> Topic | None:
        query = _query().where(
            topics.c.kind == TopicKind.NODE.value, topics.c.agent_id == node_session_id
        )
        row = (await self._c.execute(query)).first()
        return _topic(row) if row else None

    async def rooted_in(self, root_id: int) -> list[Topic]:
        query = _query().where(topics.c.root_topic_id == root_id).order_by(topics.c.id)
        return [_topic(row) for row in await self._c.execute(query)]

    async def rooted_in_any(self, root_ids: Sequence[int]) -> list[int]:
        """The agent conversations rooted in any of ``root_ids``, closed ones too."""
        query = select(topics.c.id).where(topics.c.root_topic_id.in_(list(root_ids)))
        return list((await self._c.execute(query)).scalars())

    async def subtask_ids(self, topic_ids: Sequence[int]) -> list[int]:
        """The subtasks spawned by runs working in any of ``topic_ids``."""
        query = select(topics.c.id).where(
            topics.c.kind == TopicKind.TASK.value, topics.c.reply_topic_id.in_(list(topic_ids))
        )
        return list((await self._c.execute(query)).scalars())

    # reading, as far as the reader may

    async def readable(
        self, reader: Person, topic_id: int, kind: TopicKind | None = None
    ) -> Topic | None:
        """The topic if ``reader`` may read it (and it is of ``kind``); else None, as if absent."""
        query = _query().where(topics.c.id == topic_id, readable_topic(reader))
        if kind is not None:
            query = query.where(topics.c.kind == kind.value)
        row = (await self._c.execute(query)).first()
        return _topic(row) if row else None

    async def readable_thread(
        self, reader: Person, thread_id: str, connection: str | None = None
    ) -> Topic | None:
        """By thread ID on ``connection``, or on any (a local one first: a peer names its own
        threads, and could name one as a local one is named)."""
        query = _query().where(topics.c.thread_id == thread_id, readable_topic(reader))
        if connection is not None:
            query = query.where(topics.c.connection == connection)
        query = query.order_by((topics.c.connection != LOCAL), topics.c.id).limit(1)
        row = (await self._c.execute(query)).first()
        return _topic(row) if row else None

    async def become_own_root(self, topic_id: int) -> None:
        """A conversation a peer started is its own root (its id is known once inserted)."""
        await self._c.execute(
            update(topics).where(topics.c.id == topic_id).values(root_topic_id=topic_id)
        )

    async def next_seq(self, topic_id: int) -> int:
        """The next seq of an outbound text frame in this conversation (its row stays locked)."""
        result = await self._c.execute(
            update(topics)
            .where(topics.c.id == topic_id)
            .values(seq_sent=topics.c.seq_sent + 1)
            .returning(topics.c.seq_sent)
        )
        return int(result.scalar_one())

    async def received_seq(self, topic_id: int, seq: int) -> None:
        await self._c.execute(
            update(topics).where(topics.c.id == topic_id).values(seq_received=seq)
        )

    async def received_seqs(self, seqs: dict[int, int]) -> None:
        """Each conversation's last seq received, by topic id, in one statement."""
        if seqs:
            rows = [{"topic": topic_id, "seq": seq} for topic_id, seq in seqs.items()]
            await self._c.execute(_RECEIVED_SEQ, rows)

    async def readable_page(
        self,
        reader: Person,
        window: Window,
        kind: TopicKind,
        *,
        include_closed: bool = False,
        status: str | None = None,
        parent_id: int | None = None,
        root_id: int | None = None,
        pair: str | None = None,
    ) -> Slice[Topic]:
        """Topics of ``kind`` that ``reader`` may read, newest first; closed ones only with
        ``include_closed``. Filters: ``status``; ``parent_id``, the topic a subtask reports to;
        ``root_id``, the root of agent conversations (the root itself left out); ``pair``,
        the two roles of agent conversations (see ``pair_key``)."""
        conditions: list[ColumnElement[bool]] = [
            topics.c.kind == kind.value,
            readable_topic(reader),
        ]
        if not include_closed:
            conditions.append(topics.c.closed_at.is_(None))
            if kind is TopicKind.CONVERSATION:
                # Implied by the rule (an open conversation is its person's alone); said here so
                # that the index on (person_id, kind, id) reads the page as one range.
                conditions.append(topics.c.person_id == reader.id)
        if status is not None:
            conditions.append(topics.c.status == status)
        if parent_id is not None:
            conditions.append(topics.c.reply_topic_id == parent_id)
        if root_id is not None:
            conditions += [topics.c.root_topic_id == root_id, topics.c.id != root_id]
        if pair is not None:
            conditions.append(topics.c.pair_key == pair)
        return await sliced(self._c, _query().where(*conditions), topics.c.id, window, _topic)

    async def set_status(
        self, topic_id: int, status: str, result: str | None, now: datetime
    ) -> bool:
        """End an open task; a task already ended keeps its first ending."""
        outcome = await self._c.execute(
            update(topics)
            .where(topics.c.id == topic_id, topics.c.status == "open")
            .values(status=status, result=result, finished_at=now)
        )
        return outcome.rowcount == 1

    async def close(self, topic_ids: Sequence[int], reason: str, now: datetime) -> None:
        await self._c.execute(
            update(topics)
            .where(topics.c.id.in_(list(topic_ids)), topics.c.closed_at.is_(None))
            .values(closed_at=now, closed_reason=reason)
        )
        for topic_id in topic_ids:  # those closed already keep their first reason
            if topic_id in self._held and self._held[topic_id] is None:
                self._held[topic_id] = reason
