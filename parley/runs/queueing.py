"""Text for an agent in a topic waits for that agent's session there. Text arriving while the
session already has a run waiting joins that run, so the next turn gets it all together; a node
session answers each caller in a turn of its own."""

from __future__ import annotations

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
