"""A batch's text frames in threads this side knows, taken together: the receiver's fast path.

Their threads are read and locked in one statement before their verdicts are looked up in
another (so a concurrent copy of the batch, waiting on those locks, then finds this one's
verdicts); each frame is checked in memory in frame order; what they change — seqs, the text
and the runs that take it, verdicts — waits in memory and is written in a few multi-row
statements by ``write``, which the receiver calls before anything else in the transaction
reads the store. A frame of a new thread, a close, and a message_id met twice in the batch go
the one-by-one path instead, and so does the rest of that thread's text (after a close: every
later frame, as a close may end other threads rooted in its own)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from parley.agents.model import Agent
from parley.conversations.agent_conversations import TextRefused
from parley.conversations.model import ThreadEnd
from parley.conversations.peer_conversations import (
    NotApplied,
    PeerText,
    check_known,
    check_seq,
)
from parley.federation.frames import CloseFrame, DroppedFrame, FrameVerdict, TextFrame, WireFrame
from parley.federation.model import Connection
from parley.federation.verdicts import accepted, duplicate_of, kept, not_applied, refused
from parley.runs.queueing import Waiting, queue_texts
from parley.store import Tx


class KnownThreads:
    def __init__(self, tx: Tx, now: datetime, connection: Connection) -> None:
        self._tx, self._now, self._connection = tx, now, connection
        self._threads: dict[str, ThreadEnd] = {}
        self._next_seq: dict[int, int] = {}  # by topic: the seq its next text must have
        self._seen: dict[str, Any] = {}  # by message_id: the verdict kept for it
        self._holders: dict[str, Agent | None] = {}  # by name
        self._repeated: set[str] = set()
        self._aside: set[str] = set()  # threads whose text goes one by one from here on
        self._all_aside = False
        # What waits to be written.
        self._seqs: dict[int, int] = {}
        self._texts: list[Waiting] = []
        self._verdicts: list[tuple[str, str, str | None, str | None]] = []

    async def read(self, frames: Sequence[WireFrame]) -> None:
        """Lock and read the known threads of ``frames``, then what the fast path needs."""
        texts = [frame for frame in frames if isinstance(frame, TextFrame)]
        counts = Counter(frame.message_id for frame in texts)
        self._repeated = {message_id for message_id, n in counts.items() if n > 1}
        threads = {frame.thread_id for frame in texts}
        known = await self._tx.topics.by_threads_locked(self._connection.name, threads)
        self._threads = {thread.thread_id: thread for thread in known}
        self._next_seq = {topic.id: topic.seq_received + 1 for topic in known}
        taken = [frame for frame in texts if self._takes(frame)]
        ids = [frame.message_id for frame in taken]
        self._seen = await self._tx.frames.received_many(self._connection.id, ids)
        for name in sorted({frame.to_role for frame in taken}):
            self._holders[name] = await self._tx.agents.by_name(name)

    def take(self, frame: WireFrame, backlog_full: bool) -> FrameVerdict | None:
        """``frame``'s verdict, what it changes waiting for ``write``; None if it goes the
        one-by-one path (and with it, from here on, the rest of its thread)."""
        if not isinstance(frame, TextFrame) or not self._takes(frame):
            self._set_aside(frame)
            return None
        seen = self._seen.get(frame.message_id)
        if seen is not None:
            return duplicate_of(frame, seen)
        topic = self._threads[frame.thread_id]
        try:
            check_seq(self._connection, self._next_seq[topic.id], frame.seq)
        except NotApplied as exc:  # a seq taken is another message's: this one's is in _seen
            return not_applied(frame, exc)
        except TextRefused as exc:  # paused: kept, as the one-by-one path keeps it
            verdict = refused(frame, exc)
            self._verdicts.append(kept(verdict))
            return verdict
        # Applied from here on, taken or refused: either way its seq is used.
        self._seqs[topic.id], self._next_seq[topic.id] = frame.seq, frame.seq + 1
        verdict = self._apply(frame, topic, backlog_full)
        self._verdicts.append(kept(verdict))
        return verdict

    async def write(self) -> None:
        """Write what the frames taken so far change."""
        await self._tx.topics.received_seqs(self._seqs)
        await queue_texts(self._tx, self._now, self._texts)
        await self._tx.frames.record_many(self._connection.id, self._verdicts, self._now)
        self._seqs, self._texts, self._verdicts = {}, [], []

    def _apply(self, frame: TextFrame, topic: ThreadEnd, backlog_full: bool) -> FrameVerdict:
        text = PeerText(frame.thread_id, frame.seq, frame.from_role, frame.to_role, frame.body)
        holder = self._holders.get(frame.to_role)
        try:
            body = check_known(self._connection, topic, text, holder, backlog_full)
        except TextRefused as exc:
            return refused(frame, exc)
        assert holder is not None
        author = f"{frame.from_role}@{self._connection.name}"
        self._texts.append(Waiting(topic.id, holder, body, author))
        return accepted(frame)

    def _takes(self, frame: TextFrame) -> bool:
        return (
            not self._all_aside
            and frame.thread_id in self._threads
            and frame.thread_id not in self._aside
            and frame.message_id not in self._repeated
        )

    def _set_aside(self, frame: CloseFrame | DroppedFrame | TextFrame) -> None:
        if isinstance(frame, CloseFrame):
            self._all_aside = True
        self._aside.add(frame.thread_id)
