"""Delivering the outbox: each item is queued as new text for its session in the same
transaction that marks it delivered, so it arrives exactly once, after any restart too. A
destination that is gone (its topic closed, its agent retired) fails the item, with the reason."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging

from parley.agents.model import HELD_TOPIC_STATES
from parley.clock import Clock
from parley.errors import Conflict, Invalid, NotFound, Unavailable
from parley.runs.queueing import queue_text
from parley.store import Store, Tx
from parley.store.effects import Effects
from parley.store.outbox import OutboxItem

log = logging.getLogger(__name__)

BATCH = 100
RETRY_SECONDS = 2.0


class OutboxWorker:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store, self._clock = store, clock
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._loop())
        self.wake()  # what a previous process left pending

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def wake(self) -> None:
        self._wakeup.set()

    async def on_commit(self, effects: Effects) -> None:
        if effects.outbox:
            self.wake()

    async def _loop(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            try:
                await self.deliver_pending()
            except Unavailable as exc:  # the store is away: try again later
                log.warning("outbox delivery paused: %s", exc)
                await asyncio.sleep(RETRY_SECONDS)
                self.wake()

    async def deliver_pending(self) -> int:
        async with self._store.transaction() as tx:
            items = await tx.outbox.pending(BATCH)
        for item in items:
            await self._deliver(item)
        if len(items) == BATCH:
            self.wake()
        return len(items)

    async def _deliver(self, item: OutboxItem) -> None:
        async with self._store.transaction() as tx:
            try:
                await _queue(tx, self._clock, item)
            except (Conflict, Invalid, NotFound) as exc:  # a final verdict: not retried
                await tx.outbox.settle(item.id, "failed", self._clock.now(), str(exc))
                log.warning("outbox item %s not delivered: %s", item.key, exc)
            else:
                if not await tx.outbox.settle(item.id, "delivered", self._clock.now(), None):
                    raise _AlreadySettled()


class _AlreadySettled(Unavailable):
    """Another worker delivered it first: roll this delivery back."""

    def __init__(self) -> None:
        super().__init__("outbox item already settled")


async def _queue(tx: Tx, clock: Clock, item: OutboxItem) -> None:
    payload = json.loads(item.payload)
    topic = await tx.topics.by_id(int(payload["topic_id"]))
    agent = await tx.agents.by_id(int(payload["agent_id"]))
    if topic is None or topic.is_closed:
        reason = topic.closed_reason if topic else "gone"
        raise Conflict(f"thread: the topic it answers was closed ({reason})")
    if agent is None or agent.lifecycle not in HELD_TOPIC_STATES:
        raise Conflict(f"agent {agent.name if agent else '?'} takes no more work")
    author = payload.get("author_agent_id")
    await queue_text(tx, clock.now(), topic, agent, str(payload["text"]), author_agent_id=author)
