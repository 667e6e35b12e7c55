"""Applying a peer's batch of frames, in ONE transaction, with a verdict per frame in frame
order. A text frame seen before (by message_id) changes nothing and gets its first verdict
again, as a duplicate; one whose seq is not the next of its thread is refused and not kept
(``NotApplied``; one from the future says the seq expected, from which the sender sends
again); every other verdict — accepted, or refused for good — is kept for dedup.

Text in threads known here goes the batch's fast path (``KnownThreads``: read, checked and
written together); a new thread's first text and a close go one by one, here, after what
the frames before them changed is written."""

from __future__ import annotations

from collections.abc import Sequence

from parley.clock import Clock
from parley.conversations.agent_conversations import TextRefused
from parley.conversations.lifetime import close_root
from parley.conversations.peer_conversations import (
    NotApplied,
    PeerText,
    SeqTaken,
    receive_from_peer,
)
from parley.errors import Unauthorized
from parley.federation.backlogs import Backlogs
from parley.federation.dropping import told_dropped
from parley.federation.frames import (
    CloseFrame,
    DroppedFrame,
    FrameVerdict,
    TextFrame,
    Verdict,
    WireFrame,
)
from parley.federation.known_threads import KnownThreads
from parley.federation.model import REVOKED, Connection, ConnectionState, queue_limit
from parley.federation.verdicts import accepted, duplicate_of, not_applied, refused
from parley.runs.stop import stop_topics
from parley.store import Store, Tx


async def receive_batch(
    store: Store,
    clock: Clock,
    connection: Connection,
    frames: Sequence[WireFrame],
    default_limit: int,
    backlogs: Backlogs,
) -> list[FrameVerdict]:
    """``default_limit``: the text waiting here for our agents that a connection may hold,
    unless it has a limit of its own; past it, text is refused as ``queue_full``.
    ``backlogs``: what each connection may have waiting at most, counted when it matters."""
    async with store.transaction() as tx:
        # Read again under a shared lock: a pause or a revoke since the token was checked (maybe
        # against a remembered connection, see KnownPeers) counts, and it must be the same one.
        current = await tx.connections.by_name(connection.name, shared_lock=True)
        if current is None or current.id != connection.id:
            raise Unauthorized("this peer token is not known here")
        if current.state is ConnectionState.REVOKED:
            raise revoked_here()
        limit = queue_limit(current, default_limit)
        incoming = sum(1 for frame in frames if isinstance(frame, TextFrame))
        room = backlogs.room(current.id, limit, incoming)
        if room is None:
            backlog = await tx.frames.backlog(current.name, up_to=limit)
            backlogs.counted(current.id, backlog)
            room = limit - backlog
        room_before = room
        known = KnownThreads(tx, clock.now(), current)
        await known.read(frames)
        verdicts = []
        for frame in frames:
            verdict = known.take(frame, room <= 0)
            if verdict is None:
                await known.write()
                verdict = await _receive(tx, clock, current, frame, room <= 0)
            if isinstance(frame, TextFrame) and verdict.verdict is Verdict.ACCEPTED:
                room -= 1
            verdicts.append(verdict)
        await known.write()
        # Before the commit: should it fail, the bound is too high, never too low.
        backlogs.accepted(current.id, room_before - room)
        return verdicts


def revoked_here() -> Unauthorized:
    """The peer's token of a connection revoked here: the peer revokes its side when told."""
    return Unauthorized("this connection was revoked here, for good", reason=REVOKED)


async def _receive(
    tx: Tx, clock: Clock, connection: Connection, frame: WireFrame, full: bool
) -> FrameVerdict:
    if isinstance(frame, CloseFrame):
        return await _close(tx, clock, connection, frame)
    if isinstance(frame, DroppedFrame):
        await told_dropped(tx, clock.now(), connection.name, frame.thread_id, frame.count)
        return FrameVerdict(thread_id=frame.thread_id, verdict=Verdict.ACCEPTED)
    seen = await _seen(tx, connection, frame)
    if seen is not None:
        return seen
    text = PeerText(frame.thread_id, frame.seq, frame.from_role, frame.to_role, frame.body)
    try:
        await receive_from_peer(tx, clock, connection, text, backlog_full=full)
    except SeqTaken as exc:
        # Looked up again under the thread's lock: a concurrent copy of this same batch (the
        # sender retried a batch still being applied) took the seq and committed meanwhile.
        return await _seen(tx, connection, frame) or not_applied(frame, exc)
    except NotApplied as exc:
        return not_applied(frame, exc)
    except TextRefused as exc:
        verdict = refused(frame, exc)
    else:
        verdict = accepted(frame)
    kept = await tx.frames.record(
        connection.id,
        frame.message_id,
        verdict.verdict.value,
        verdict.reason,
        verdict.detail,
        clock.now(),
    )
    # Not kept: a concurrent copy of the batch refused this new thread too and came first.
    return verdict if kept else (await _seen(tx, connection, frame) or verdict)


async def _seen(tx: Tx, connection: Connection, frame: TextFrame) -> FrameVerdict | None:
    """The verdict ``frame`` got when it first came, as a duplicate; None if it is new."""
    seen = await tx.frames.received(connection.id, frame.message_id)
    return None if seen is None else duplicate_of(frame, seen)


async def _close(tx: Tx, clock: Clock, connection: Connection, frame: CloseFrame) -> FrameVerdict:
    """The peer closed its end: so is ours (its runs end, its history stays, later text in it
    is refused with reason ``thread``). Closing an unknown or closed thread changes nothing."""
    conversation = await tx.topics.by_thread(connection.name, frame.thread_id)
    if conversation is not None and not conversation.is_closed:
        now = clock.now()
        reason = f"closed by {connection.name}: {frame.reason}" if frame.reason else "closed"
        if conversation.root_id == conversation.id:  # the peer's own: what is rooted in it too
            await close_root(tx, now, conversation, reason, closed_by_peer=True)
        else:
            await tx.topics.close([conversation.id], reason, now)
            tx.effects.ended_topics.append(conversation.id)
            await stop_topics(tx, [conversation.id], now, reason)
    return FrameVerdict(thread_id=frame.thread_id, verdict=Verdict.ACCEPTED)
