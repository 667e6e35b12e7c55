"""What becomes of text that will not reach the peer: its sending role is told in the
conversation, the person in its root (``conversations/refusals.py``), and our side of its
thread is closed. A failed frame leaves a gap in its thread's seq, so the peer would refuse
every later frame of it as "from the future"; closed, the thread takes no more text, and the
next send from its root opens a new one (which the peer sees as a thread it did not know).

Every reason is worded from this side, naming who did what ("two paused the connection",
"the connection to two was paused here"), its code first: a peer words its refusals for
itself, and "this side paused" read on the other side says the opposite of what happened."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from parley.clock import Clock
from parley.conversations.agent_conversations import Refusal
from parley.conversations.refusals import tell_root
from parley.federation.frames import FrameVerdict
from parley.federation.model import Outbound, OutboundText
from parley.reasons import with_code
from parley.runs.stop import stop_topics
from parley.store import Tx

log = logging.getLogger(__name__)

REVOKED_CODE = "revoked"
QUOTED = 60  # characters of a refused text its notice quotes


def paused_here(connection: str) -> str:
    return with_code(Refusal.PAUSED.value, f"the connection to {connection} was paused here")


def revoked_here(connection: str) -> str:
    return with_code(REVOKED_CODE, f"the connection to {connection} was revoked here, for good")


def revoked_by_peer(connection: str) -> str:
    return with_code(REVOKED_CODE, f"{connection} revoked the connection, for good")


def refused_by_peer(frame: OutboundText, verdict: FrameVerdict) -> str:
    """The peer's verdict on ``frame``, its code kept, in words naming the peer."""
    peer, code = frame.connection, verdict.reason or "rejected"
    words = {
        Refusal.PAUSED.value: f"{peer} paused the connection: the text was not taken",
        Refusal.QUEUE_FULL.value: f"{peer} has as much text from here waiting as the"
        " connection allows: send again once it has taken some",
        Refusal.UNKNOWN_ROLE.value: f"{peer} has no agent {frame.to_role} that takes text"
        " from here",
    }.get(code) or f"{peer} refused it: {verdict.detail or 'no reason given'}"
    return with_code(code, words)


async def notify_failed(tx: Tx, now: datetime, frame: OutboundText, reason: str) -> None:
    topic = await tx.topics.by_id(frame.topic_id)
    if topic is not None and topic.root_id != topic.id:
        notice = f"Your text to {frame.to_role}@{frame.connection} was refused: {reason}"
        await tx.messages.add(frame.topic_id, "notice", notice, now)
    quoted = frame.body if len(frame.body) <= QUOTED else frame.body[:QUOTED] + "…"
    told = (
        f"{frame.from_role}'s text to {frame.to_role}@{frame.connection} ({quoted!r}) was not"
        f" delivered: {reason}"
    )
    await tell_root(tx, now, frame.topic_id, frame.sender_agent_id, told)
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


class FrameFate:
    """What becomes of a frame that failed for good (the frame kind's entry in the deliveries
    registry): a text's sender is told, in its conversation and at its root; a close's thread
    is closed already, and a report of dropped text ends nothing."""

    async def undeliverable(self, tx: Tx, clock: Clock, payload: Outbound, reason: str) -> None:
        if isinstance(payload, OutboundText):
            await notify_failed(tx, clock.now(), payload, reason)
