"""The Broker port: how the hub and the nodes reach each other. Subjects and bytes, like NATS.

``LocalBroker`` serves one machine in process; a NATS JetStream broker serves many machines
behind the same protocol.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

# A handler gets a message's bytes; for a request it returns the reply's bytes.
Handler = Callable[[bytes], Awaitable[bytes | None]]


class Subscription(Protocol):
    async def unsubscribe(self) -> None: ...


class Broker(Protocol):
    async def publish(self, subject: str, data: bytes) -> None:
        """Deliver to every subscriber of ``subject``, without waiting for them."""

    async def request(self, subject: str, data: bytes, timeout: float) -> bytes:
        """Ask one subscriber of ``subject`` and wait for its reply; Unavailable if none answers."""

    async def subscribe(self, subject: str, handler: Handler) -> Subscription: ...

    async def close(self) -> None: ...
