"""The in-process broker: one machine, no network, the same contract as NATS."""

from __future__ import annotations

import asyncio
import logging
import random
from collections import defaultdict

from parley.errors import Unavailable
from parley.mesh.broker import (
    BrokerState,
    DurableHandler,
    Gathering,
    Handler,
    SubjectHandler,
    subject_matches,
)
from parley.mesh.local_durable import DurableQueue, LocalConsumer

log = logging.getLogger(__name__)


class LocalSubscription:
    """Delivers published messages to its handler one at a time, in publishing order (as a NATS
    subscription does), from a task of its own so that publishers never wait for handlers."""

    def __init__(self, broker: LocalBroker, subject: str, handler: SubjectHandler) -> None:
        self._broker = broker
        self.subject = subject
        self.handler = handler
        self._inbox: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None

    def put(self, subject: str, data: bytes) -> None:
        self._inbox.put_nowait((subject, data))
        if self._pump is None:
            self._pump = asyncio.create_task(self._deliver_in_order())

    async def unsubscribe(self) -> None:
        self._broker._remove(self)
        await self.close()

    async def close(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
            await asyncio.gather(self._pump, return_exceptions=True)
            self._pump = None

    async def _deliver_in_order(self) -> None:
        while True:
            subject, data = await self._inbox.get()
            try:
                await self.handler(subject, data)
            except Exception:  # a subscriber's failure must not reach the publisher
                log.exception("handler on %s failed", self.subject)


class LocalBroker:
    def __init__(self) -> None:
        # By subject; those to a wildcard by their pattern too, looked through on each message.
        self._subscriptions: dict[str, list[LocalSubscription]] = defaultdict(list)
        self._wildcards: list[LocalSubscription] = []
        self._durable: dict[str, DurableQueue] = {}
        self._closed = False

    async def publish(self, subject: str, data: bytes) -> None:
        self._ensure_open()
        log.debug("publish %s bytes=%d", subject, len(data))
        for subscription in self._listeners(subject):
            subscription.put(subject, data)

    def _listeners(self, subject: str) -> list[LocalSubscription]:
        exact = list(self._subscriptions.get(subject, ()))
        return exact + [s for s in self._wildcards if subject_matches(s.subject, subject)]

    async def request(self, subject: str, data: bytes, timeout: float) -> bytes:
        self._ensure_open()
        listeners = self._listeners(subject)
        if not listeners:
            raise Unavailable(f"nobody listens on {subject}", subject=subject)
        # Like a NATS queue group: one listener answers.
        subscription = random.choice(listeners)
        log.debug("request %s bytes=%d", subject, len(data))
        try:
            reply = await asyncio.wait_for(subscription.handler(subject, data), timeout)
        except TimeoutError as exc:
            raise Unavailable(
                f"no answer on {subject} within {timeout:g}s", subject=subject
            ) from exc
        if reply is None:
            raise Unavailable(f"the listener on {subject} sent no reply", subject=subject)
        log.debug("reply %s bytes=%d", subject, len(reply))
        return reply

    async def subscribe(self, subject: str, handler: Handler) -> LocalSubscription:
        async def without_subject(_subject: str, data: bytes) -> bytes | None:
            return await handler(data)

        return await self.subscribe_with_subject(subject, without_subject)

    async def subscribe_with_subject(
        self, subject: str, handler: SubjectHandler
    ) -> LocalSubscription:
        self._ensure_open()
        subscription = LocalSubscription(self, subject, handler)
        wildcard = "*" in subject.split(".") or ">" in subject.split(".")
        (self._wildcards if wildcard else self._subscriptions[subject]).append(subscription)
        return subscription

    async def send_durable(self, subject: str, data: bytes, message_id: str) -> None:
        self._ensure_open()
        log.debug("send_durable %s id=%s bytes=%d", subject, message_id, len(data))
        self._queue(subject).store(data, message_id)

    async def consume(
        self,
        subject: str,
        consumer: str,
        handler: DurableHandler,
        gathering: Gathering | None = None,
    ) -> LocalConsumer:
        self._ensure_open()
        subscription = LocalConsumer(self._queue(subject), consumer, handler, gathering)
        subscription.start()
        return subscription

    def state(self) -> BrokerState:
        return BrokerState(kind="local", status="closed" if self._closed else "connected")

    async def close(self) -> None:
        self._closed = True
        for queue in self._durable.values():
            if queue.active is not None:
                await queue.active.unsubscribe()
        subscriptions = [s for listeners in self._subscriptions.values() for s in listeners]
        subscriptions += self._wildcards
        self._subscriptions.clear()
        self._wildcards = []
        for subscription in subscriptions:
            await subscription.close()

    def _queue(self, subject: str) -> DurableQueue:
        if subject not in self._durable:
            self._durable[subject] = DurableQueue(subject)
        return self._durable[subject]

    def _remove(self, subscription: LocalSubscription) -> None:
        for listeners in (self._subscriptions.get(subscription.subject, []), self._wildcards):
            if subscription in listeners:
                listeners.remove(subscription)

    def _ensure_open(self) -> None:
        if self._closed:
            raise Unavailable("the broker is closed")
