"""Run and session rows: queueing, claiming, finishing; a run's token is stored hashed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    String,
    and_,
    bindparam,
    exists,
    func,
    insert,
    literal,
    literal_column,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite

from parley.agents.model import HELD_TOPIC_STATES, Modality
from parley.conversations.model import TopicKind
from parley.people.model import Person
from parley.reads.model import Slice, Window
from parley.runs.model import OPEN_STATES, Run, RunState, Session, Waiting
from parley.store.connection import Connection
from parley.store.keyset import first_slices, newest_of_each, sliced
from parley.store.rows import RowReader, member_of
from parley.store.shapes import once, returned_beside
from parley.store.tables import agents, nodes, runs, sessions, topics
from parley.store.types import UTCDateTime
from parley.store.unnest import unnested
from parley.store.visibility import readable_topic_id

_OPEN = [state.value for state in OPEN_STATES]


def _query() -> Select[Any]:
    return (
        select(
            # A run's stderr can be 64 KiB: read only where one run is shown (``stderr_of``).
            *(column for column in runs.c if column.key != "stderr"),
            agents.c.name.label("agent_name"),
            agents.c.kind.label("agent_kind"),
            nodes.c.name.label("node_name"),
            topics.c.kind.label("topic_kind"),
        )
        .join(agents, agents.c.id == runs.c.agent_id)
        .join(nodes, nodes.c.id == agents.c.node_id)
        .join(topics, topics.c.id == runs.c.topic_id)
    )


# A run's row, read by position (``rows``): every read of runs.
_RUNS = RowReader(
    Run,
    convert={
        "topic_kind": member_of(TopicKind),
        "state": member_of(RunState),
        "by_node_session": lambda kind: kind == "node",
    },
    sources={"by_node_session": "agent_kind"},
)
# One row alone, as the batch reads read each.
_run = _RUNS.one


def _session(row: Any) -> Session:
    return Session(
        id=row.id,
        agent_id=row.agent_id,
        topic_id=row.topic_id,
        brain_session_id=row.brain_session_id,
        was_stopped=bool(row.was_stopped),
    )


def _startable() -> Select[Any]:
    """Queued runs that may start, in arrival order: at most one per session (the first) and,
    per agent, no more than its free slots. A backlog behind an agent with one free slot (one
    run per conversation waiting for a busy agent) is ranked and cut in SQL, not read whole at
    every start: reading it made each start cost as much as the backlog."""
    running = runs.alias("running")
    session_busy = exists().where(
        running.c.session_id == runs.c.session_id,
        running.c.state == RunState.RUNNING.value,
    )
    # Agents with every slot taken: their backlog is left out before it is ranked, so that
    # a busy agent's queue costs each pass one look per run, not a sort of the whole of it
    # (10,000 waiting behind a busy agent, bench/backlog.py: 1.4 ms a read against 31 on
    # SQLite, 3.3 against 35 on PostgreSQL). It groups the running runs itself: made from
    # ``load`` as a shared CTE, the read ran slower on SQLite (busy 1.5-2.8 ms against 1.1-2.1).
    taken, full_agent = runs.alias("taken"), agents.alias("full_agent")
    full = (
        select(taken.c.agent_id)
        .join(full_agent, full_agent.c.id == taken.c.agent_id)
        .where(taken.c.state == RunState.RUNNING.value)
        .group_by(taken.c.agent_id, full_agent.c.max_sessions)
        .having(func.count() >= full_agent.c.max_sessions)
    )
    # Each agent's running runs, counted once for the query (not once per queued run).
    load = (
        select(running.c.agent_id, func.count().label("running"))
        .where(running.c.state == RunState.RUNNING.value)
        .group_by(running.c.agent_id)
        .subquery("load")
    )
    waiting = (
        select(
            runs.c.id,
            runs.c.agent_id,
            runs.c.session_id,
            (agents.c.max_sessions - func.coalesce(load.c.running, 0)).label("free"),
            func.row_number()
            .over(partition_by=runs.c.session_id, order_by=runs.c.id)
            .label("in_session"),
        )
        .join(agents, agents.c.id == runs.c.agent_id)
        .join(topics, topics.c.id == runs.c.topic_id)
        .outerjoin(load, load.c.agent_id == agents.c.id)
        .where(
            runs.c.state == RunState.QUEUED.value,
            topics.c.closed_at.is_(None),
            agents.c.lifecycle.in_([state.value for state in HELD_TOPIC_STATES]),
            agents.c.is_template.is_(False),
            agents.c.workspace.is_not(None) | (agents.c.kind == "node"),
            runs.c.agent_id.not_in(full),
            ~session_busy,
        )
        .subquery("waiting")
    )
    firsts = (
        select(
            waiting.c.id,
            waiting.c.agent_id,
            waiting.c.session_id,
            waiting.c.free,
            func.row_number()
            .over(partition_by=waiting.c.agent_id, order_by=waiting.c.id)
            .label("in_agent"),
        )
        .where(waiting.c.in_session == 1)
        .subquery("firsts")
    )
    return (
        select(firsts.c.id, firsts.c.agent_id, firsts.c.session_id)
        .where(firsts.c.in_agent <= firsts.c.free)
        .order_by(firsts.c.id)
        .limit(bindparam("limit"))
    )


# Statements on the hot path are built once (building one costs more than running it).
_SESSION = once(
    select(sessions).where(
        sessions.c.agent_id == bindparam("agent_id"), sessions.c.topic_id == bindparam("topic_id")
    )
)
_SESSIONS_BY_IDS = once(
    select(sessions).where(sessions.c.id.in_(bindparam("session_ids", expanding=True)))
)
_CLEAR_STOPPED = once(
    update(sessions)
    .where(sessions.c.id.in_(bindparam("session_ids", expanding=True)))
    .values(was_stopped=False)
)
_INSERT_SESSION = {
    "sqlite": once(sqlite.insert(sessions).on_conflict_do_nothing().returning(*sessions.c)),
    "postgresql": once(postgresql.insert(sessions).on_conflict_do_nothing().returning(*sessions.c)),
}
_QUEUED_IN_SESSION = once(
    select(runs.c.id)
    .where(runs.c.session_id == bindparam("session_id"), runs.c.state == RunState.QUEUED.value)
    .order_by(runs.c.id)
    .limit(1)
    .with_for_update()
)
_ENQUEUE = once(insert(runs).returning(runs.c.id))


def _waiting_or_new(by_session: bool) -> Any:
    """PostgreSQL: a session's waiting run (locked), else a new one, in one statement. The
    session is given by id, or (``by_session`` False) found by agent and topic: no row then
    means the session is not made yet."""
    if by_session:
        session = select(bindparam("session_id", type_=Integer).label("id")).cte("session")
    else:
        session = (
            select(sessions.c.id)
            .where(
                sessions.c.agent_id == bindparam("agent_id"),
                sessions.c.topic_id == bindparam("topic_id"),
            )
            .cte("session")
        )
    waiting = (
        select(runs.c.id)
        .join(session, runs.c.session_id == session.c.id)
        .where(runs.c.state == RunState.QUEUED.value)
        .order_by(runs.c.id)
        .limit(1)
        .with_for_update(of=runs)
        .cte("waiting")
    )
    values = select(
        bindparam("agent_id", type_=Integer),
        bindparam("topic_id", type_=Integer),
        session.c.id,
        literal(RunState.QUEUED.value, String),
        bindparam("now", type_=UTCDateTime),
    ).where(~exists(select(waiting.c.id)))
    columns = ["agent_id", "topic_id", "session_id", "state", "created_at"]
    made = insert(runs).from_select(columns, values).returning(runs.c.id).cte("made")
    return select(waiting.c.id).union_all(select(made.c.id))


_WAITING_OR_NEW = once(_waiting_or_new(by_session=True))
_RUN_FOR_TEXT = once(_waiting_or_new(by_session=False))
_ENQUEUE_MANY = once(insert(runs).returning(runs.c.id, sort_by_parameter_order=True))
_SESSIONS_IN_TOPICS = once(
    select(sessions).where(sessions.c.topic_id.in_(bindparam("topic_ids", expanding=True)))
)
_QUEUED_IN_SESSIONS = once(
    select(runs.c.id, runs.c.session_id)
    .where(
        runs.c.session_id.in_(bindparam("session_ids", expanding=True)),
        runs.c.state == RunState.QUEUED.value,
    )
    .order_by(runs.c.id)
    .with_for_update()
)
_STARTABLE = once(_startable())
_ANY_QUEUED = once(select(runs.c.id).where(runs.c.state == RunState.QUEUED.value).limit(1))
# A batch starts in one statement: each run with its own token's hash ...
_GIVEN = unnested(run_id=("run_ids", Integer), hash=("hashes", String))
# ... and returns them as ``_query`` reads them: the scheduler needs no read of its own. Its
# names come from subqueries: SQLite's RETURNING reads only the table it updates.
_RUNS_AGENT: ColumnElement[int] = literal_column("runs.agent_id")
_START_MANY = once(
    update(runs)
    .where(runs.c.id == _GIVEN.c.run_id, runs.c.state == RunState.QUEUED.value)
    .values(state=RunState.RUNNING.value, token_hash=_GIVEN.c.hash, started_at=bindparam("now"))
    .returning(
        *(column for column in runs.c if column.key != "stderr"),
        returned_beside(agents.c.name, agents.c.id == _RUNS_AGENT).label("agent_name"),
        returned_beside(agents.c.kind, agents.c.id == _RUNS_AGENT).label("agent_kind"),
        returned_beside(
            nodes.c.name,
            nodes.c.id == returned_beside(agents.c.node_id, agents.c.id == _RUNS_AGENT),
        ).label("node_name"),
        returned_beside(topics.c.kind, topics.c.id == literal_column("runs.topic_id")).label(
            "topic_kind"
        ),
    )
)
_FINISH = once(
    update(runs)
    .where(runs.c.id == bindparam("run_id"), runs.c.state.in_(_OPEN))
    .values(
        state=bindparam("final"),
        finished_at=bindparam("now"),
        reason=bindparam("why"),
        # A stopped turn's stderr, and what it had said, may have been kept before a late end
        # (the node's stop came first): never unset them.
        output=func.coalesce(bindparam("text"), runs.c.output),
        stderr=func.coalesce(bindparam("stderr"), runs.c.stderr),
    )
)
# PostgreSQL stops a run and marks its session in one statement: a stop's answer waits for
# each round trip, behind whatever else the hub's loop has to do meanwhile (bench/mesh.py).
_STOPPED = (
    update(runs)
    .where(runs.c.id == bindparam("run_id"), runs.c.state.in_(_OPEN))
    .values(state=RunState.STOPPED.value, finished_at=bindparam("now"), reason=bindparam("why"))
    .returning(runs.c.id, runs.c.session_id)
    .cte("stopped")
)
_STOP = once(
    select(_STOPPED.c.id).add_cte(
        update(sessions)
        .where(sessions.c.id == _STOPPED.c.session_id)
        .values(was_stopped=True)
        .cte("told")
    )
)
# A batch finishes in one statement: each run with its own output and stderr.
_ENDING = unnested(
    run_id=("run_ids", Integer), output=("outputs", String), stderr=("stderrs", String)
)
_FINISH_MANY = once(
    update(runs)
    .where(runs.c.id == _ENDING.c.run_id, runs.c.state.in_(_OPEN))
    .values(
        state=RunState.FINISHED.value,
        finished_at=bindparam("now"),
        reason=None,
        output=_ENDING.c.output,
        stderr=func.coalesce(_ENDING.c.stderr, runs.c.stderr),
    )
    .returning(runs.c.id)
)
_KEEP_STDERR = (
    update(runs).where(runs.c.id == bindparam("run_id")).values(stderr=bindparam("stderr"))
)
_STDERR = select(runs.c.stderr).where(runs.c.id == bindparam("run_id"))
# What a turn had said when it was cut short: kept once, never over a finished reply.
_KEEP_SAID = (
    update(runs)
    .where(
        runs.c.id == bindparam("run_id"),
        runs.c.output.is_(None),
        runs.c.state != RunState.FINISHED.value,
    )
    .values(output=bindparam("said"))
)
_BY_ID = once(_query().where(runs.c.id == bindparam("run_id")))
_STATE = once(select(runs.c.state).where(runs.c.id == bindparam("run_id")))
_BY_IDS = once(_query().where(runs.c.id.in_(bindparam("run_ids", expanding=True))))
_BY_TOKEN = once(
    _query().where(runs.c.token_hash == bindparam("hash"), runs.c.state == RunState.RUNNING.value)
)
_RUNNING_LOAD = once(
    select(runs.c.agent_id, runs.c.session_id).where(
        runs.c.state == RunState.RUNNING.value,
        runs.c.agent_id.in_(bindparam("agent_ids", expanding=True)),
    )
)

_OPEN_COUNTS = once(
    select(runs.c.agent_id, runs.c.state, func.count().label("runs"))
    .where(runs.c.state.in_(_OPEN), runs.c.agent_id.in_(bindparam("agent_ids", expanding=True)))
    .group_by(runs.c.agent_id, runs.c.state)
)


# A root's tree: the newest of each of its conversations, in one statement.
_NEWEST_IN_TOPICS = once(newest_of_each(_query(), runs.c.topic_id, runs.c.id))


class RunsRepo:
    def __init__(self, connection: Connection, new_topics: set[int] | None = None) -> None:
        self._c = connection
        # Topics this transaction made (``TopicsRepo``'s): none has a session it did not make.
        self._new_topics = set() if new_topics is None else new_topics
        # Sessions this transaction made and queued no run in yet: none has a waiting run.
        self._runless: set[int] = set()

    # sessions

    async def session(self, agent_id: int, topic_id: int, now: datetime) -> Session:
        """The agent's session for the topic, made on first use."""
        key = {"agent_id": agent_id, "topic_id": topic_id}
        row = None
        if topic_id not in self._new_topics:
            row = (await self._c.execute(_SESSION, key)).first()
        if row is None:  # a concurrent first text may make the same session: that one stands
            statement = _INSERT_SESSION[self._c.dialect.name]
            made = (await self._c.execute(statement, {**key, "created_at": now})).first()
            if made is not None:
                self._runless.add(made.id)
            row = made or (await self._c.execute(_SESSION, key)).one()
        return _session(row)

    async def sessions_of(
        self, pairs: Iterable[tuple[int, int]], now: datetime
    ) -> dict[tuple[int, int], Session]:
        """The sessions of these (agent, topic) pairs, read in one statement; those missing
        are made, one by one, as ``session`` makes them."""
        wanted = set(pairs)
        topic_ids = sorted({topic_id for _, topic_id in wanted})
        found: dict[tuple[int, int], Session] = {}
        if topic_ids:
            for row in await self._c.execute(_SESSIONS_IN_TOPICS, {"topic_ids": topic_ids}):
                if (row.agent_id, row.topic_id) in wanted:
                    found[(row.agent_id, row.topic_id)] = _session(row)
        for agent_id, topic_id in sorted(wanted - found.keys()):
            found[(agent_id, topic_id)] = await self.session(agent_id, topic_id, now)
        return found

    async def sessions_by_ids(self, session_ids: Sequence[int]) -> dict[int, Session]:
        rows = await self._c.execute(_SESSIONS_BY_IDS, {"session_ids": list(session_ids)})
        return {row.id: _session(row) for row in rows}

    async def clear_stopped(self, session_ids: Sequence[int]) -> None:
        if session_ids:
            await self._c.execute(_CLEAR_STOPPED, {"session_ids": list(session_ids)})

    async def update_session(self, session_id: int, **values: Any) -> None:
        await self._c.execute(update(sessions).where(sessions.c.id == session_id).values(**values))

    # queueing and claiming

    async def queued_in_session(self, session_id: int) -> int | None:
        """The session's waiting run, locked until commit so that the scheduler cannot start
        it (and read its input) before text joining it is written. SQLite has one writer."""
        found = await self._c.execute(_QUEUED_IN_SESSION, {"session_id": session_id})
        return found.scalar_one_or_none()

    async def run_for_text(self, agent_id: int, topic_id: int, now: datetime) -> int:
        """The run that takes text for the agent in the topic: its session's waiting run, else
        a new one (the session made on first use). On PostgreSQL one statement once the
        session exists."""
        if self._c.dialect.name == "postgresql" and topic_id not in self._new_topics:
            values = {"agent_id": agent_id, "topic_id": topic_id, "now": now}
            found = (await self._c.execute(_RUN_FOR_TEXT, values)).scalar_one_or_none()
            if found is not None:
                return int(found)
        session = await self.session(agent_id, topic_id, now)
        return await self.waiting_or_new(agent_id, topic_id, session.id, now)

    async def waiting_or_new(
        self, agent_id: int, topic_id: int, session_id: int, now: datetime
    ) -> int:
        """The session's waiting run, locked as ``queued_in_session`` locks it, else a new one:
        text for the session joins it. One statement on PostgreSQL, where each is a round trip."""
        if session_id in self._runless:
            return await self.enqueue(agent_id, topic_id, session_id, now)
        if self._c.dialect.name == "postgresql":
            values = {"agent_id": agent_id, "topic_id": topic_id, "session_id": session_id,
                      "now": now}  # fmt: skip
            return int((await self._c.execute(_WAITING_OR_NEW, values)).scalar_one())
        waiting = await self.queued_in_session(session_id)
        return (
            waiting
            if waiting is not None
            else await self.enqueue(agent_id, topic_id, session_id, now)
        )

    async def queued_in_sessions(self, session_ids: Iterable[int]) -> dict[int, int]:
        """``queued_in_session`` for several sessions in one statement: session → run."""
        wanted = sorted(set(session_ids) - self._runless)
        if not wanted:
            return {}
        found: dict[int, int] = {}
        for row in await self._c.execute(_QUEUED_IN_SESSIONS, {"session_ids": wanted}):
            found.setdefault(row.session_id, row.id)
        return found

    async def enqueue_many(
        self, waiting: Sequence[tuple[int, int, int]], now: datetime
    ) -> list[int]:
        """Queue a run for each (agent, topic, session), in one statement; their ids, in
        that order."""
        if not waiting:
            return []
        rows = [
            {"agent_id": agent_id, "topic_id": topic_id, "session_id": session_id,
             "state": RunState.QUEUED.value, "created_at": now}
            for agent_id, topic_id, session_id in waiting
        ]  # fmt: skip
        self._runless.difference_update(session_id for _, _, session_id in waiting)
        return [int(row.id) for row in await self._c.execute(_ENQUEUE_MANY, rows)]

    async def enqueue(self, agent_id: int, topic_id: int, session_id: int, now: datetime) -> int:
        self._runless.discard(session_id)
        values = {
            "agent_id": agent_id,
            "topic_id": topic_id,
            "session_id": session_id,
            "state": RunState.QUEUED.value,
            "created_at": now,
        }
        return int((await self._c.execute(_ENQUEUE, values)).scalar_one())

    async def startable(self, limit: int) -> list[Waiting]:
        """Queued runs in arrival order that may start now: the agent takes work and has a free
        session slot, and the session has nothing running. The caller counts within a batch."""
        rows = await self._c.execute(_STARTABLE, {"limit": limit})
        return [Waiting(row.id, row.agent_id, row.session_id) for row in rows]

    async def any_queued(self) -> bool:
        """Whether any run waits queued, startable or not."""
        return (await self._c.execute(_ANY_QUEUED)).first() is not None

    async def running_load(self, agent_ids: Sequence[int]) -> tuple[dict[int, int], set[int]]:
        """Running runs per agent, and the sessions that have one."""
        per_agent: dict[int, int] = {}
        busy: set[int] = set()
        if not agent_ids:
            return per_agent, busy
        for row in await self._c.execute(_RUNNING_LOAD, {"agent_ids": list(agent_ids)}):
            per_agent[row.agent_id] = per_agent.get(row.agent_id, 0) + 1
            busy.add(row.session_id)
        return per_agent, busy

    async def open_counts(self, agent_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
        """Per agent, its runs (running, queued), in one grouped query for a list's page of
        agents (rather than two counts per row); agents with none open are left out."""
        counts: dict[int, tuple[int, int]] = {}
        if not agent_ids:
            return counts
        for row in await self._c.execute(_OPEN_COUNTS, {"agent_ids": list(agent_ids)}):
            running, queued = counts.get(row.agent_id, (0, 0))
            if row.state == RunState.RUNNING.value:
                running = int(row.runs)
            else:
                queued = int(row.runs)
            counts[row.agent_id] = (running, queued)
        return counts

    async def start_many(self, token_hashes: Mapping[int, str], now: datetime) -> dict[int, Run]:
        """Start these runs, each with its token's hash; those that were still queued, as they
        are now (running)."""
        if not token_hashes:
            return {}
        given = {"run_ids": list(token_hashes), "hashes": list(token_hashes.values())}
        rows = await self._c.execute(_START_MANY, {**given, "now": now})
        return {run.id: run for run in _RUNS.all(rows)}

    async def requeue(self, run_id: int) -> None:
        """A run its node did not take goes back to waiting, as if never started."""
        await self._c.execute(
            update(runs)
            .where(runs.c.id == run_id, runs.c.state == RunState.RUNNING.value)
            .values(state=RunState.QUEUED.value, token_hash=None, started_at=None)
        )

    async def finish(
        self,
        run_id: int,
        state: RunState,
        now: datetime,
        reason: str | None = None,
        output: str | None = None,
        stderr: str | None = None,
    ) -> bool:
        """Move an open run to a final state; a run already final stays as it is."""
        parameters = {
            "run_id": run_id,
            "final": state.value,
            "now": now,
            "why": reason,
            "text": output,
            "stderr": stderr,
        }
        return (await self._c.execute(_FINISH, parameters)).rowcount == 1

    async def stop(self, run_id: int, session_id: int, now: datetime, reason: str) -> bool:
        """Stop the run if still open, and mark its session as told of a stop at its next
        turn; False if the run was already final (nothing changes then)."""
        if self._c.dialect.name == "postgresql":  # one round trip
            values = {"run_id": run_id, "now": now, "why": reason}
            return (await self._c.execute(_STOP, values)).first() is not None
        if not await self.finish(run_id, RunState.STOPPED, now, reason=reason):
            return False
        await self.update_session(session_id, was_stopped=True)
        return True

    async def finish_many(
        self, endings: Mapping[int, tuple[str, str | None]], now: datetime
    ) -> set[int]:
        """``finish`` as finished for several runs, each with its (output, stderr); those that
        were still open."""
        if not endings:
            return set()
        given = {
            "run_ids": list(endings),
            "outputs": [output for output, _ in endings.values()],
            "stderrs": [stderr for _, stderr in endings.values()],
        }
        return {row.id for row in await self._c.execute(_FINISH_MANY, {**given, "now": now})}

    async def keep_stderr(self, run_id: int, stderr: str) -> None:
        """Keep what a turn's process wrote on stderr, whatever state its run is in."""
        await self._c.execute(_KEEP_STDERR, {"run_id": run_id, "stderr": stderr})

    async def keep_said(self, run_id: int, said: str) -> bool:
        """Keep what a turn had said when it was stopped, failed or interrupted as the run's
        output; False if the run already has an output (kept before, or a finished reply)."""
        kept = await self._c.execute(_KEEP_SAID, {"run_id": run_id, "said": said})
        return kept.rowcount == 1

    async def stderr_of(self, run_id: int) -> str | None:
        found = await self._c.execute(_STDERR, {"run_id": run_id})
        stderr: str | None = found.scalar_one_or_none()
        return stderr

    # reading

    async def by_id(self, run_id: int) -> Run | None:
        row = (await self._c.execute(_BY_ID, {"run_id": run_id})).first()
        return _run(row) if row else None

    async def state_of(self, run_id: int) -> RunState | None:
        state = (await self._c.execute(_STATE, {"run_id": run_id})).scalar_one_or_none()
        return None if state is None else RunState(state)

    async def by_ids(self, run_ids: Sequence[int]) -> dict[int, Run]:
        rows = await self._c.execute(_BY_IDS, {"run_ids": list(run_ids)})
        return {run.id: run for run in _RUNS.all(rows)}

    async def running_by_token_hash(self, token_hash: str) -> Run | None:
        row = (await self._c.execute(_BY_TOKEN, {"hash": token_hash})).first()
        return _run(row) if row else None

    async def readable(self, reader: Person, run_id: int) -> Run | None:
        """The run if ``reader`` may read its topic; else None, as if absent."""
        query = _query().where(runs.c.id == run_id, readable_topic_id(reader, runs.c.topic_id))
        row = (await self._c.execute(query)).first()
        return _run(row) if row else None

    async def readable_page(
        self,
        reader: Person,
        window: Window,
        agent_id: int | None = None,
        states: Sequence[RunState] | None = None,
        topic_id: int | None = None,
    ) -> Slice[Run]:
        """Runs whose topic ``reader`` may read, newest first, optionally of one agent, in some
        states, or in one topic."""
        conditions: list[ColumnElement[bool]] = [readable_topic_id(reader, runs.c.topic_id)]
        if agent_id is not None:
            conditions.append(runs.c.agent_id == agent_id)
        if states:
            conditions.append(runs.c.state.in_([state.value for state in states]))
        if topic_id is not None:
            conditions.append(runs.c.topic_id == topic_id)
        return await sliced(self._c, _query().where(and_(*conditions)), runs.c.id, window, _run)

    async def set_off_by(self, run_id: int, limit: int) -> list[Run]:
        """The runs of the subtasks ``run`` spawned, oldest first (as readable as ``run``: a
        subtask works for its spawner's root)."""
        query = _query().where(topics.c.spawned_by_run_id == run_id)  # the run's own topic
        query = query.order_by(runs.c.id).limit(limit)
        return [_run(row) for row in await self._c.execute(query)]

    async def newest_in_topics(self, topic_ids: Sequence[int], each: int) -> dict[int, Slice[Run]]:
        """Each topic's newest ``each`` runs, newest first, as a first page of ``each`` would
        give them; by topic id, every asked topic there. No reader: the caller read the topics
        as the reader may (runs are as readable as their topic)."""
        return await first_slices(
            self._c, _NEWEST_IN_TOPICS, list(topic_ids), each, _run, lambda item: item.id
        )

    async def turns_page(self, person_id: int, window: Window) -> Slice[Run]:
        """Running turns of the human agents that are this person, oldest first (the order
        they wait in)."""
        query = _query().where(
            runs.c.state == RunState.RUNNING.value,
            agents.c.modality == Modality.HUMAN.value,
            agents.c.human_person_id == person_id,
        )
        return await sliced(self._c, query, runs.c.id, window, _run, newest_first=False)

    async def open_in_topics(self, topic_ids: Sequence[int]) -> list[Run]:
        query = _query().where(runs.c.topic_id.in_(list(topic_ids)), runs.c.state.in_(_OPEN))
        return [_run(row) for row in await self._c.execute(query.order_by(runs.c.id))]

    async def open_of_agent(self, agent_id: int) -> list[Run]:
        query = _query().where(runs.c.agent_id == agent_id, runs.c.state.in_(_OPEN))
        return [_run(row) for row in await self._c.execute(query.order_by(runs.c.id))]

    async def running(self, node: str | None = None) -> list[Run]:
        """Running runs, of every node or of the one named."""
        query = _query().where(runs.c.state == RunState.RUNNING.value).order_by(runs.c.id)
        if node is not None:
            query = query.where(nodes.c.name == node)
        return [_run(row) for row in await self._c.execute(query)]

    async def count_running(self, agent_id: int) -> int:
        query = (
            select(func.count())
            .select_from(runs)
            .where(runs.c.agent_id == agent_id, runs.c.state == RunState.RUNNING.value)
        )
        return int((await self._c.execute(query)).scalar_one())

    async def count_open(self, agent_id: int) -> int:
        query = (
            select(func.count())
            .select_from(runs)
            .where(runs.c.agent_id == agent_id, runs.c.state.in_(_OPEN))
        )
        return int((await self._c.execute(query)).scalar_one())
