"""An A2A task as the store reads it: a client's text (its id is the task's), the texts that
continue it (``messages.a2a_task_id``), and the run it follows now — the earliest of its texts'
runs still queued or running, else the newest. A task is read, listed and filtered by that
run; a text that continues a task is never a task of its own."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    and_,
    bindparam,
    case,
    exists,
    false,
    func,
    literal,
    or_,
    select,
)

from parley.a2a.model import TaskFilter
from parley.approvals.model import ApprovalState
from parley.runs.model import OPEN_STATES, RunState
from parley.store.shapes import once
from parley.store.tables import approvals, messages, runs, topics

# A task's state filter for a queued run that follows an ended run of the same task: to a
# client the task goes on (WORKING), it is not newly submitted.
CONTINUED = "continued"
PUSHED = "task_"  # a push config's query reads a task's columns under these names


@dataclass(frozen=True)
class TaskRow:
    """An A2A task as the store holds it: the client's text, its context, the run it follows
    now."""

    message_id: int
    context: str
    topic_id: int
    run_id: int | None
    body: str
    created_at: datetime


@dataclass(frozen=True)
class TaskText:
    """One of a task's texts (the first, or one that continues it) and the run that has it."""

    message_id: int
    body: str
    run_id: int | None
    sent_as: str | None = None  # the client's own id for it (``a2a/contexts.py``'s sent_key)


@dataclass(frozen=True)
class SentText:
    """A client's text found by its own id: what it said, and its task's (its own, or the one
    it continues)."""

    body: str
    task_message_id: int


_text = messages.alias("task_text")
_text_run = runs.alias("task_text_run")


def _texts_of(task_id: ColumnElement[int]) -> ColumnElement[bool]:
    return or_(_text.c.id == task_id, _text.c.a2a_task_id == task_id)


_EARLIEST_OPEN = (
    select(func.min(_text.c.run_id))
    .join(_text_run, _text_run.c.id == _text.c.run_id)
    .where(_texts_of(messages.c.id), or_(*(_text_run.c.state == s.value for s in OPEN_STATES)))
    .scalar_subquery()
)
_NEWEST = select(func.max(_text.c.run_id)).where(_texts_of(messages.c.id)).scalar_subquery()
_FIRST = select(func.min(_text.c.run_id)).where(_texts_of(messages.c.id)).scalar_subquery()
# The run the task of ``messages.id`` follows now (``tasks.py``'s ``Now.run`` alike).
CURRENT_RUN: ColumnElement[int] = func.coalesce(_EARLIEST_OPEN, _NEWEST)

# A task's columns, read by ``task_of``.
TASK_COLUMNS: tuple[ColumnElement[Any], ...] = (
    messages.c.id,
    topics.c.a2a_context,
    messages.c.topic_id,
    CURRENT_RUN.label("run_id"),
    messages.c.body,
    messages.c.created_at,
)
_IS_TASK = and_(
    messages.c.kind == "text",
    messages.c.author_role.is_not(None),
    messages.c.a2a_task_id.is_(None),
)
TASKS = select(*TASK_COLUMNS).join(topics, topics.c.id == messages.c.topic_id).where(_IS_TASK)
_TASK = bindparam("task_id", type_=Integer)
TASK_TEXTS = once(
    select(messages.c.id, messages.c.body, messages.c.run_id, messages.c.a2a_sent_as)
    .where(or_(messages.c.id == _TASK, messages.c.a2a_task_id == _TASK))
    .order_by(messages.c.id)
)
SENT_AS = once(
    select(messages.c.id, messages.c.body, messages.c.a2a_task_id).where(
        messages.c.a2a_sent_as == bindparam("sent_as")
    )
)


# When a task last changed: its run's end, start or making, else its text's.
UPDATED = func.coalesce(
    runs.c.finished_at, runs.c.started_at, runs.c.created_at, messages.c.created_at
)


def filtered(query: Select[Any], client_id: int, agent_id: int, given: TaskFilter) -> Select[Any]:
    """``query`` over the client's tasks with the agent that ``given`` lets through, each with
    the run it follows now joined as ``runs``."""
    query = (
        query.select_from(messages)
        .join(topics, topics.c.id == messages.c.topic_id)
        .outerjoin(runs, runs.c.id == CURRENT_RUN)
        .where(
            _IS_TASK,
            topics.c.a2a_client_id == client_id,
            topics.c.addressed_agent_id == agent_id,
        )
    )
    if given.context is not None:
        query = query.where(topics.c.a2a_context == given.context)
    if given.run_states is not None:
        states = [state for state in given.run_states if state != "none"]
        without_run = runs.c.id.is_(None) if "none" in given.run_states else false()
        query = query.where(or_(_phase().in_(states), without_run))
    if given.asking is not None:
        waits = exists().where(
            approvals.c.run_id == runs.c.id, approvals.c.state == ApprovalState.WAITING.value
        )
        query = query.where(waits if given.asking else ~waits)
    if given.updated_after is not None:
        query = query.where(given.updated_after < UPDATED)
    return query


def _phase() -> ColumnElement[str]:
    """The state of the run a task follows now, ``CONTINUED`` for a queued one after an ended
    run of the task (an earlier run of its texts: the earliest open one is this)."""
    continued = and_(runs.c.state == RunState.QUEUED.value, runs.c.id > _FIRST)
    return case((continued, literal(CONTINUED)), else_=runs.c.state)


def task_of(row: Any, prefix: str = "") -> TaskRow:
    """A task from ``TASK_COLUMNS``, read under their names (with ``prefix`` before each)."""
    values = row._mapping
    return TaskRow(*(values[f"{prefix}{c.name}"] for c in TASK_COLUMNS))
