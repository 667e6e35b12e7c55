"""The in-process broker: one machine, no network, the same contract as NATS."""

from __future__ import annotations

import asyncio
import logging
import random
from collections import defaultdict

from parley.broker.local_durable import LocalConsumer, LocalDurable
from parley.broker.port import (
    BrokerState,
    Delivered,
    DurableHandler,
    Gathering,
    Handler,
    SubjectHandler,
)
from parley.broker.subjects import has_wildcards, matches
from parley.errors import Unavailable

log = logging.getLogger(__name__)


class LocalSubscription:
    """Delivers published messages to its handler one at a time, in publishing order (as a NATS
    subscription does), from a task of its own so that publishers never wait for handlers."""

    def __init__(self, broker: LocalBroker, subject: str, handler: SubjectHandler) -> None:
        self._broker = broker
        self.subject = subject  # may hold wildcards
        self.handler = handler
        self._inbox: asyncio.Queue[Delivered] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None

    def put(self, message: Delivered) -> None:
        self._inbox.put_nowait(message)
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
            message = await self._inbox.get()
            try:
                await self.handler(message)
            except Exception:  # a subscriber's failure must not reach the publisher
                log.exception("handler on %s failed", self.subject)


class LocalBroker:
    def __init__(self) -> None:
        # By subject; those with wildcards apart, matched against each subject published on.
        self._subscriptions: dict[str, list[LocalSubscription]] = defaultdict(list)
        self._patterns: set[str] = set()
        self._durable = LocalDurable()
        self._closed = False

    async def publish(self, subject: str, data: bytes) -> None:
        self._ensure_open()
        log.debug("publish %s bytes=%d", subject, len(data))
        message = Delivered(subject, data)
        for subscription in self._listeners(subject):
            subscription.put(message)

    async def request(self, subject: str, data: bytes, timeout: float) -> bytes:
        self._ensure_open()
        listeners = self._listeners(subject)
        if not listeners:
            raise Unavailable(f"nobody listens on {subject}", subject=subject)
        # Like a NATS queue group: one listener answers.
        subscription = random.choice(listeners)
        log.debug("request %s bytes=%d", subject, len(data))
        try:
            reply = await asyncio.wait_for(subscription.handler(Delivered(subject, data)), timeout)
        except TimeoutError as exc:
            raise Unavailable(
                f"no answer on {subject} within {timeout:g}s", subject=subject
            ) from exc
        if reply is None:
            raise Unavailable(f"the listener on {subject} sent no reply", subject=subject)
        log.debug("reply %s bytes=%d", subject, len(reply))
        return reply

    async def subscribe(self, subject: str, handler: Handler) -> LocalSubscription:
        async def bytes_only(message: Delivered) -> bytes | None:
            return await handler(message.data)

        return await self.subscribe_with_subject(subject, bytes_only)

    async def subscribe_with_subject(
        self, subject: str, handler: SubjectHandler
    ) -> LocalSubscription:
        self._ensure_open()
        subscription = LocalSubscription(self, subject, handler)
        self._subscriptions[subject].append(subscription)
        if has_wildcards(subject):
            self._patterns.add(subject)
        return subscription

    async def send_durable(self, subject: str, data: bytes, message_id: str) -> None:
        self._ensure_open()
        log.debug("send_durable %s id=%s bytes=%d", subject, message_id, len(data))
        self._durable.store(subject, data, message_id)

    async def consume(
        self,
        subject: str,
        consumer: str,
        handler: DurableHandler,
        gathering: Gathering | None = None,
    ) -> LocalConsumer:
        self._ensure_open()
        subscription = LocalConsumer(self._durable.queue(subject), consumer, handler, gathering)
        subscription.start()
        return subscription

    def state(self) -> BrokerState:
        return BrokerState(kind="local", status="closed" if self._closed else "connected")

    async def close(self) -> None:
        self._closed = True
        await self._durable.close()
        subscriptions = [s for listeners in self._subscriptions.values() for s in listeners]
        self._subscriptions.clear()
        self._patterns.clear()
        for subscription in subscriptions:
            await subscription.close()

    def _listeners(self, subject: str) -> list[LocalSubscription]:
        listeners = list(self._subscriptions.get(subject, ()))
        for pattern in self._patterns:
            if matches(pattern, subject):
                listeners += self._subscriptions[pattern]
        return listeners

    def _remove(self, subscription: LocalSubscription) -> None:
        listeners = self._subscriptions.get(subscription.subject, [])
        if subscription in listeners:
            listeners.remove(subscription)
        if not listeners:
            self._subscriptions.pop(subscription.subject, None)
            self._patterns.discard(subscription.subject)

    def _ensure_open(self) -> None:
        if self._closed:
            raise Unavailable("the broker is closed")
