"""Text for an agent in a topic waits for that agent's session there. Text arriving while the
session already has a run waiting joins that run, so the next turn gets it all together; a node
session answers each caller in a turn of its own."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from parley.agents.model import Agent
from parley.conversations.model import NewText, Topic
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
    """Record ``body`` in ``topic`` for ``recipient`` and give it to the run that will take it:
    ``queue_texts`` for one text. ``author``: ``Waiting``'s fields of who wrote it.

    The topic's row is locked against a concurrent closing, unless the caller holds its root's
    lock already (``root_locked``): a topic is only ever closed together with its root."""
    closed = None if root_locked else await tx.topics.closed_reason_locked(topic.id)
    if closed is not None:
        raise Conflict(
            f"{topic.kind.value.replace('_', ' ')} {topic.id} is closed ({closed})", reason="thread"
        )
    [queued] = await queue_texts(tx, now, [Waiting(topic.id, recipient, body, **author)])
    return queued


@dataclass(frozen=True)
class Waiting:
    """A text to queue: ``body`` for ``recipient`` in ``topic_id``, from a peer's role
    (``author_role``), a local agent's run or a person."""

    topic_id: int
    recipient: Agent
    body: str
    author_role: str | None = None
    author_agent_id: int | None = None
    from_run_id: int | None = None
    author_person_id: int | None = None
    channel_ref: str | None = None
    reply_agent_id: int | None = None
    reply_topic_id: int | None = None
    a2a_sent_as: str | None = None


async def queue_texts(tx: Tx, now: datetime, texts: Sequence[Waiting]) -> list[Queued]:
    """Queue ``texts``, in their order, in a few statements whatever their number: for
    topics the caller holds locked and knows open (``queue_text`` checks one)."""
    if not texts:
        return []
    runs = await _runs_for(tx, now, texts)
    written = [
        NewText(
            text.topic_id, text.recipient.id, run_id, text.body,
            author_agent_id=text.author_agent_id, author_person_id=text.author_person_id,
            author_role=text.author_role, from_run_id=text.from_run_id,
            channel_ref=text.channel_ref, reply_agent_id=text.reply_agent_id,
            reply_topic_id=text.reply_topic_id, a2a_sent_as=text.a2a_sent_as,
        )
        for text, run_id in zip(texts, runs, strict=True)
    ]  # fmt: skip
    message_ids = await tx.messages.add_texts(written, now)
    tx.effects.wake = True
    return [
        Queued(text.topic_id, message_id, run_id)
        for text, message_id, run_id in zip(texts, message_ids, runs, strict=True)
    ]


async def _runs_for(tx: Tx, now: datetime, texts: Sequence[Waiting]) -> list[int]:
    """Each text's run: the one waiting in its session, else a new one, which the session's
    later texts join; a node session's text has one of its own (each caller in a turn of its
    own). One text for a shared session takes its run in one statement on PostgreSQL."""
    if len(texts) == 1 and not texts[0].recipient.is_node_session:
        text = texts[0]
        return [await tx.runs.run_for_text(text.recipient.id, text.topic_id, now)]
    sessions = await tx.runs.sessions_of({_pair(text) for text in texts}, now)
    shared = {_pair(t) for t in texts if not t.recipient.is_node_session}
    waiting = await tx.runs.queued_in_sessions(sessions[pair].id for pair in shared)
    # By its place: a run waiting already (> 0), or the n-th new one (-n).
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
    return [place if place > 0 else made[-place - 1] for place in places]


def _pair(text: Waiting) -> tuple[int, int]:
    return text.recipient.id, text.topic_id
