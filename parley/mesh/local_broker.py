"""The in-process broker: one machine, no network, the same contract as NATS."""

from __future__ import annotations

import asyncio
import logging
import random
from collections import defaultdict

from parley.errors import Unavailable
from parley.mesh.broker import Handler

log = logging.getLogger(__name__)


class LocalSubscription:
    def __init__(self, broker: LocalBroker, subject: str, handler: Handler) -> None:
        self._broker = broker
        self.subject = subject
        self.handler = handler

    async def unsubscribe(self) -> None:
        self._broker._remove(self)


class LocalBroker:
    def __init__(self) -> None:
        self._subscriptions: dict[str, list[LocalSubscription]] = defaultdict(list)
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    async def publish(self, subject: str, data: bytes) -> None:
        self._ensure_open()
        for subscription in list(self._subscriptions[subject]):
            task = asyncio.create_task(self._deliver(subscription, data))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def request(self, subject: str, data: bytes, timeout: float) -> bytes:
        self._ensure_open()
        listeners = self._subscriptions.get(subject)
        if not listeners:
            raise Unavailable(f"nobody listens on {subject}", subject=subject)
        # Like a NATS queue group: one listener answers.
        subscription = random.choice(listeners)
        try:
            reply = await asyncio.wait_for(subscription.handler(data), timeout)
        except TimeoutError as exc:
            raise Unavailable(
                f"no answer on {subject} within {timeout:g}s", subject=subject
            ) from exc
        if reply is None:
            raise Unavailable(f"the listener on {subject} sent no reply", subject=subject)
        return reply

    async def subscribe(self, subject: str, handler: Handler) -> LocalSubscription:
        self._ensure_open()
        subscription = LocalSubscription(self, subject, handler)
        self._subscriptions[subject].append(subscription)
        return subscription

    async def close(self) -> None:
        self._closed = True
        self._subscriptions.clear()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _remove(self, subscription: LocalSubscription) -> None:
        listeners = self._subscriptions.get(subscription.subject, [])
        if subscription in listeners:
            listeners.remove(subscription)

    def _ensure_open(self) -> None:
        if self._closed:
            raise Unavailable("the broker is closed")

    @staticmethod
    async def _deliver(subscription: LocalSubscription, data: bytes) -> None:
        try:
            await subscription.handler(data)
        except Exception:  # a subscriber's failure must not reach the publisher
            log.exception("handler on %s failed", subscription.subject)
