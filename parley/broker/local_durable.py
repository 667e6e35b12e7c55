"""The in-process broker's durable subjects: a store-and-forward queue per consumer's subject
(wildcards allowed), emptied by its consumer batch by batch, each batch removed only once the
handler returned. What is sent before any consumer's subject matches it waits apart, and goes
to the first whose does. As on JetStream's work queue, a message goes to one consumer only:
consumers whose subjects overlap are refused; and a message id is remembered whatever its
subject.

It lives as long as the process, which is as long as the hub and the local node it serves."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict, deque

from parley.broker.gathering import gathered
from parley.broker.port import (
    DEDUP_WINDOW,
    DURABLE_BATCH,
    Delivered,
    DurableHandler,
    Gathering,
)
from parley.broker.redelivery import hand_over
from parley.broker.subjects import matches, overlap
from parley.errors import Conflict, Invalid

log = logging.getLogger(__name__)


class LocalDurable:
    """Every durable subject of one in-process broker."""

    def __init__(self) -> None:
        self._queues: dict[str, DurableQueue] = {}  # by their consumers' subject
        self._unclaimed: deque[Delivered] = deque()  # sent where no consumer's subject matched
        self._seen: OrderedDict[str, float] = OrderedDict()  # message id -> when first stored

    def store(self, subject: str, data: bytes, message_id: str) -> None:
        now = asyncio.get_running_loop().time()
        self._forget_before(now - DEDUP_WINDOW)
        if message_id in self._seen:
            log.debug("dropped a duplicate of %s on %s", message_id, subject)
            return
        self._seen[message_id] = now
        message = Delivered(subject, data)
        for queue in self._queues.values():
            if matches(queue.subject, subject):
                queue.put(message)
                return
        self._unclaimed.append(message)

    def queue(self, subject: str) -> DurableQueue:
        """The queue of the consumers of ``subject``, which takes over what waited for it."""
        if subject in self._queues:
            return self._queues[subject]
        for other in self._queues:
            if overlap(other, subject):
                raise Invalid(f"{subject} overlaps {other}, which has a consumer already")
        queue = self._queues[subject] = DurableQueue(subject)
        waiting, self._unclaimed = self._unclaimed, deque()
        for message in waiting:
            (queue.put if matches(subject, message.subject) else self._unclaimed.append)(message)
        return queue

    async def close(self) -> None:
        for queue in self._queues.values():
            if queue.active is not None:
                await queue.active.unsubscribe()

    def _forget_before(self, moment: float) -> None:
        while self._seen and next(iter(self._seen.values())) < moment:
            self._seen.popitem(last=False)


class DurableQueue:
    def __init__(self, subject: str) -> None:
        self.subject = subject
        self.consumer_name: str | None = None
        self.active: LocalConsumer | None = None
        self._stored: deque[Delivered] = deque()
        self._arrived = asyncio.Event()
        # Counted since the start: what was stored, and what its consumers acknowledged.
        self._stored_count = self._acknowledged_count = 0
        self._acknowledged = asyncio.Event()

    def put(self, message: Delivered) -> None:
        self._stored.append(message)
        self._stored_count += 1
        self._arrived.set()

    def attach(self, consumer: LocalConsumer) -> None:
        if self.consumer_name not in (None, consumer.name):
            raise Invalid(
                f"{self.subject} is consumed as {self.consumer_name!r}, not {consumer.name!r}"
            )
        if self.active is not None:
            raise Conflict(f"{self.subject} already has a running consumer")
        self.consumer_name, self.active = consumer.name, consumer

    def detach(self, consumer: LocalConsumer) -> None:
        if self.active is consumer:
            self.active = None

    async def next_batch(self) -> list[Delivered]:
        while not self._stored:
            self._arrived.clear()
            await self._arrived.wait()
        return self._behind(0)

    async def arrivals(self, held: int, within: float) -> list[Delivered]:
        """What is stored behind the first ``held`` messages, once there is any (within
        ``within`` seconds; nothing if none came)."""
        if len(self._stored) <= held:
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), within)
        return self._behind(held)

    def _behind(self, held: int) -> list[Delivered]:
        return [self._stored[n] for n in range(held, min(len(self._stored), DURABLE_BATCH))]

    def acknowledge(self, count: int) -> None:
        for _ in range(count):
            self._stored.popleft()
        self._acknowledged_count += count
        self._acknowledged.set()

    async def caught_up(self) -> None:
        """Once what was stored before this call is acknowledged."""
        target = self._stored_count
        while self._acknowledged_count < target:
            self._acknowledged.clear()
            await self._acknowledged.wait()


class LocalConsumer:
    def __init__(
        self,
        queue: DurableQueue,
        name: str,
        handler: DurableHandler,
        gathering: Gathering | None = None,
    ) -> None:
        self.name, self._queue, self._handler = name, queue, handler
        self._gathering = gathering
        self._pump: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._queue.attach(self)
        self._pump = asyncio.create_task(self._deliver())

    async def caught_up(self) -> None:
        await self._queue.caught_up()

    async def unsubscribe(self) -> None:
        if self._pump is not None:
            self._pump.cancel()  # a batch being handled stays stored: it comes again
            await asyncio.gather(self._pump, return_exceptions=True)
            self._pump = None
        self._queue.detach(self)

    async def _deliver(self) -> None:
        while True:
            batch = await self._queue.next_batch()
            batch = await gathered(batch, self._gathering, _data, self._queue.arrivals)
            await hand_over(self._handler, batch, self._queue.subject)
            self._queue.acknowledge(len(batch))


def _data(message: Delivered) -> bytes:
    return message.data
