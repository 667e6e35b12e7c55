"""Text a peer sent that this side had taken, then dropped: pausing a connection stops the runs
of its conversations, and the peer's text they held (queued, or in a turn cancelled) is never
answered. It is never silently gone: each side's person reads it in the root of its thread,
and the peer learns it by a ``dropped`` frame (sent once the connection is unpaused), whose
sending role then hears of it at its next turn there, as of a refused text."""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from parley.conversations.agent_conversations import Refusal
from parley.conversations.refusals import tell_root
from parley.federation.model import OutboundDropped
from parley.reasons import with_code
from parley.runs.model import Run
from parley.store import Tx


async def report_dropped(tx: Tx, now: datetime, connection: str, stopped: Sequence[Run]) -> None:
    """The peer's text that the ``stopped`` runs (of ``connection``'s conversations, stopped
    by its pause) had taken: told here, and reported to the peer."""
    if not stopped:
        return
    inputs = await tx.messages.inputs_of([run.id for run in stopped])
    counts = Counter(
        message.topic_id
        for run_inputs in inputs.values()
        for message in run_inputs
        if message.kind == "text"
        and message.author_agent_id is None
        and message.author.endswith(f"@{connection}")
    )
    topics = await tx.topics.by_ids(counts)
    why = with_code(Refusal.PAUSED.value, f"the connection to {connection} was paused here")
    for topic_id, count in sorted(counts.items()):
        topic = topics[topic_id]
        assert topic.thread_id is not None
        said = (
            f"{_texts(count)} from {topic.peer_role}@{connection} to {topic.agent_name} taken"
            f" here, dropped unanswered: {why}"
        )
        await tell_root(tx, now, topic.id, None, said)
        report = OutboundDropped(
            connection=connection,
            thread_id=topic.thread_id,
            seq=topic.seq_sent,
            count=count,
            reason=Refusal.PAUSED.value,
            topic_id=topic.id,
            key=secrets.token_hex(8),
        )
        await tx.frames.put(report, now)


async def told_dropped(tx: Tx, now: datetime, connection: str, thread_id: str, count: int) -> None:
    """The peer dropped ``count`` texts of ``thread_id`` it had taken: told in the thread and
    in its root, to the role that sent them."""
    conversation = await tx.topics.by_thread(connection, thread_id)
    if conversation is None:
        return
    why = with_code(Refusal.PAUSED.value, f"{connection} paused the connection")
    where = f"{conversation.peer_role}@{connection}"
    if conversation.root_id != conversation.id:
        notice = f"{_texts(count)} of yours to {where} taken there, dropped unanswered: {why}"
        await tx.messages.add(conversation.id, "notice", notice, now)
    said = (
        f"{_texts(count)} from {conversation.agent_name} to {where} taken there, dropped"
        f" unanswered: {why}"
    )
    await tell_root(tx, now, conversation.id, conversation.agent_id, said)


def _texts(count: int) -> str:
    return "1 text" if count == 1 else f"{count} texts"
