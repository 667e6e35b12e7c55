"""Text for an agent in a topic waits for that agent's session there. Text arriving while the
session already has a run waiting joins that run, so the next turn gets it all together; a node
session answers each caller in a turn of its own."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from parley.agents.model import Agent
from parley.conversations.model import Topic
from parley.errors import Conflict
from parley.store import Tx
from parley.text import MAX_TEXT, check_length, refuse_nul


@dataclass(frozen=True)
class Queued:
    topic_id: int
    message_id: int
    run_id: int


def check_text(text: str, what: str = "text") -> str:
    return refuse_nul(check_length(text, MAX_TEXT, what), what)


async def queue_text(
    tx: Tx,
    now: datetime,
    topic: Topic,
    recipient: Agent,
    body: str,
    *,
    root_locked: bool = False,
    **author: Any,
) -> Queued:
    """Record ``body`` in ``topic`` for ``recipient`` and give it to the run that will take it.

    The topic's row is locked against a concurrent closing, unless the caller holds its root's
    lock already (``root_locked``): a topic is only ever closed together with its root."""
    closed = None if root_locked else await tx.topics.closed_reason_locked(topic.id)
    if closed is not None:
        raise Conflict(
            f"{topic.kind.value.replace('_', ' ')} {topic.id} is closed ({closed})", reason="thread"
        )
    if recipient.is_node_session:  # each caller in a turn of its own
        session = await tx.runs.session(recipient.id, topic.id, now)
        run_id = await tx.runs.enqueue(recipient.id, topic.id, session.id, now)
    else:
        run_id = await tx.runs.run_for_text(recipient.id, topic.id, now)
    message_id = await tx.messages.add(
        topic.id, "text", body, now, recipient_agent_id=recipient.id, run_id=run_id, **author
    )
    tx.effects.wake = True
    return Queued(topic.id, message_id, run_id)


@dataclass(frozen=True)
class Waiting:
    """A text to queue with ``queue_texts``: ``body`` for ``recipient`` in ``topic_id``, from
    a peer's role (``author_role``) or from a local agent's run."""

    topic_id: int
    recipient: Agent
    body: str
    author_role: str | None = None
    author_agent_id: int | None = None
    from_run_id: int | None = None


async def queue_texts(tx: Tx, now: datetime, texts: Sequence[Waiting]) -> None:
    """``queue_text`` for many texts at once, in their order, in a few statements: for topics
    the caller holds locked and knows open."""
    if not texts:
        return
    sessions = await tx.runs.sessions_of({_pair(text) for text in texts}, now)
    shared = {_pair(t) for t in texts if not t.recipient.is_node_session}
    waiting = await tx.runs.queued_in_sessions(sessions[pair].id for pair in shared)
    # Each text's run: the one waiting in its session, else a new one (shared by the
    # session's later texts; a node session's text has one of its own), by its place.
    places: list[int] = []
    wanted: list[tuple[int, int, int]] = []
    for text in texts:
        session = sessions[_pair(text)]
        if not text.recipient.is_node_session and session.id in waiting:
            places.append(waiting[session.id])
            continue
        wanted.append((text.recipient.id, text.topic_id, session.id))
        places.append(-len(wanted))
        if not text.recipient.is_node_session:
            waiting[session.id] = -len(wanted)
    made = await tx.runs.enqueue_many(wanted, now)
    rows = [
        {"topic_id": text.topic_id, "kind": "text", "body": text.body, "created_at": now,
         "recipient_agent_id": text.recipient.id, "author_role": text.author_role,
         "author_agent_id": text.author_agent_id, "from_run_id": text.from_run_id,
         "run_id": place if place > 0 else made[-place - 1]}
        for text, place in zip(texts, places, strict=True)
    ]  # fmt: skip
    await tx.messages.add_many(rows)
    tx.effects.wake = True


def _pair(text: Waiting) -> tuple[int, int]:
    return text.recipient.id, text.topic_id
