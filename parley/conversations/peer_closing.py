"""Telling peers that threads closed here (their root was deleted): each gets a close frame in
the outbox, after the thread's text, so the peer closes its side too and later text in it is
refused there as well. The reason on the wire says only that: nothing about the root crosses."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from parley.conversations.model import LOCAL, Topic
from parley.federation.model import ConnectionState, OutboundClose
from parley.store import Tx

ROOT_DELETED = "its root was deleted"


async def tell_peers_closed(tx: Tx, now: datetime, closed: Sequence[Topic]) -> None:
    """A close frame for each of ``closed`` that is a thread with a peer still connected."""
    for topic in closed:
        if topic.connection in (None, LOCAL) or topic.thread_id is None:
            continue
        assert topic.connection is not None
        connection = await tx.connections.by_name(topic.connection)
        if connection is None or connection.state is ConnectionState.REVOKED:
            continue  # nobody to tell, ever (a paused one is told once unpaused)
        frame = OutboundClose(
            connection=topic.connection,
            thread_id=topic.thread_id,
            seq=await tx.topics.next_seq(topic.id),
            reason=ROOT_DELETED,
            topic_id=topic.id,
        )
        await tx.frames.put(frame, now)
        tx.effects.frames.add(topic.connection)
