"""The in-process broker's durable subjects: a store-and-forward queue per subject, emptied by
its consumer batch by batch, each batch removed only once the handler returned.

It lives as long as the process, which is as long as the hub and the local node it serves."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict, deque

from parley.errors import Conflict, Invalid
from parley.mesh.broker import DEDUP_WINDOW, DURABLE_BATCH, DurableHandler, Gathering
from parley.mesh.gathering import gathered
from parley.mesh.redelivery import hand_over

log = logging.getLogger(__name__)


class DurableQueue:
    def __init__(self, subject: str) -> None:
        self.subject = subject
        self.consumer_name: str | None = None
        self.active: LocalConsumer | None = None
        self._stored: deque[bytes] = deque()
        self._seen: OrderedDict[str, float] = OrderedDict()  # message id -> when first stored
        self._arrived = asyncio.Event()
        # Counted since the start: what was stored, and what its consumers acknowledged.
        self._stored_count = self._acknowledged_count = 0
        self._acknowledged = asyncio.Event()

    def store(self, data: bytes, message_id: str) -> None:
        now = asyncio.get_running_loop().time()
        self._forget_before(now - DEDUP_WINDOW)
        if message_id in self._seen:
            log.debug("dropped a duplicate of %s on %s", message_id, self.subject)
            return
        self._seen[message_id] = now
        self._stored.append(data)
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

    async def next_batch(self) -> list[bytes]:
        while not self._stored:
            self._arrived.clear()
            await self._arrived.wait()
        return self._behind(0)

    async def arrivals(self, held: int, within: float) -> list[bytes]:
        """What is stored behind the first ``held`` messages, once there is any (within
        ``within`` seconds; nothing if none came)."""
        if len(self._stored) <= held:
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), within)
        return self._behind(held)

    def _behind(self, held: int) -> list[bytes]:
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

    def _forget_before(self, moment: float) -> None:
        while self._seen and next(iter(self._seen.values())) < moment:
            self._seen.popitem(last=False)


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
            batch = await gathered(batch, self._gathering, bytes, self._queue.arrivals)
            await hand_over(self._handler, batch, self._queue.subject)
            self._queue.acknowledge(len(batch))
