"""What becomes of text that will not reach the peer: its sending role is told in the
conversation, and our side of its thread is closed. A failed frame leaves a gap in its thread's
seq, so the peer would refuse every later frame of it as "from the future"; closed, the thread
takes no more text, and the next send from its root opens a new one (which the peer sees as a
thread it did not know).

The notice does not start a turn: nothing the role could do changes the outcome, and a turn
there would send its reply straight back where it cannot go. The role reads the notice in the
conversation's history at its next turn there, and people read it in the conversation."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from parley.federation.model import OutboundText
from parley.runs.stop import stop_topics
from parley.store import Tx

log = logging.getLogger(__name__)


async def notify_failed(tx: Tx, now: datetime, frame: OutboundText, reason: str) -> None:
    notice = f"Your text to {frame.to_role}@{frame.connection} was refused: {reason}"
    await tx.messages.add(frame.topic_id, "notice", notice, now)
    log.warning("frame %s to %s refused: %s", frame.message_id, frame.connection, reason)


async def close_our_side(tx: Tx, now: datetime, topic_ids: Sequence[int], reason: str) -> None:
    """Close these agent conversations here and stop their runs."""
    closing = sorted(set(topic_ids))
    if not closing:
        return
    await tx.topics.close(closing, reason, now)
    tx.effects.ended_topics.extend(closing)
    await stop_topics(tx, closing, now, reason)


async def fail_waiting(
    tx: Tx, now: datetime, connection: str, reason: str, texts_only: bool = False
) -> None:
    """Every frame of ``connection`` still waiting to be sent fails (with ``texts_only``: its
    text frames), each text with its notice, and the threads they were in are closed on our
    side."""
    frames = await tx.frames.fail_pending(connection, reason, texts_only)
    for frame in frames:
        await notify_failed(tx, now, frame, reason)
    await close_our_side(tx, now, [f.topic_id for f in frames], f"not sent: {reason}")
