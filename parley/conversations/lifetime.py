"""Deleting a root closes everything that answers for it: its agent conversations close (history
kept, later text refused with reason 'thread'), and every run in them or in it ends."""

from __future__ import annotations

from datetime import datetime

from parley.conversations.model import Topic
from parley.runs.stop import stop_topics
from parley.store import Tx


async def close_root(tx: Tx, now: datetime, root: Topic, reason: str) -> None:
    # The root's row first, as a send from a run under it does: one lock order, no deadlock.
    await tx.topics.closed_reason_locked(root.id)
    rooted = [topic.id for topic in await tx.topics.rooted_in(root.id) if not topic.is_closed]
    closing = [root.id, *rooted]
    await tx.topics.close(closing, reason, now)
    await stop_topics(tx, closing, now, reason)
