"""The Broker port: how the hub and the nodes reach each other. Subjects and bytes, like NATS.

``LocalBroker`` serves one machine in process; ``NatsBroker`` (NATS JetStream) serves many
machines behind the same protocol. Both pass ``tests/mesh/test_broker_contract.py``.

Two kinds of delivery, and a subject belongs to one of them:

- **Core** (``publish``, ``request``, ``subscribe``): fire and forget, for what may be lost
  without harm — reply chunks, heartbeats, stop and start requests whose sender retries or
  gives up. Only subscribers present at the time hear a message; each subscriber gets one
  publisher's messages in order, one at a time.
- **Durable** (``send_durable``, ``consume``): for what must not be lost nor applied twice —
  a turn's outcome. ``send_durable`` returns once the broker has stored the message; the same
  ``message_id`` sent again within ``DEDUP_WINDOW`` is dropped (so a sender may retry freely).
  ``consume`` hands the stored messages of a subject to its handler, in order, in batches of
  up to ``DURABLE_BATCH``; a batch is acknowledged only once the handler returned, and a handler
  that raises gets the same batch again (after a short pause) until it returns. A consumer is
  named: the name keeps its place across restarts of either end, and gets what was sent while
  it was away. A durable subject has one consumer name; a batch may still come again after a
  crash (a message is delivered at least once), so handlers must be idempotent. A consumer's
  ``caught_up`` returns once everything stored before the call was handled (a hub back from a
  stop applies what its nodes reported meanwhile before it judges their turns).
  A consumer may be told what is due (``Gathering``): while its batch is one that more messages
  are due to join, it waits up to ``within`` seconds for them before handing it over, so that
  what was set off together is handled together (group commit: one transaction, not several).

Durable subjects are a namespace of their own: ``send_durable`` reaches consumers only, never
subscribers, and ``publish`` never reaches consumers.

A subscription's or a consumer's subject may hold wildcards, as in NATS (``*``: any one token;
``>``, last: one or more). Handlers learn the subject each message came on (``Delivered``;
``subscribe_with_subject`` for core subjects): one subject per node where a node speaks, and
the broker's permissions on each, are how the hub knows which node said what. A durable
subject's messages go to one consumer only: two consumers whose subjects overlap are refused.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol


@dataclass(frozen=True)
class Delivered:
    """A message as its handler gets it: the subject it came on (wildcards resolved) and its
    bytes."""

    subject: str
    data: bytes


# A handler gets a message's bytes; for a request it returns the reply's bytes.
Handler = Callable[[bytes], Awaitable[bytes | None]]
# The same, told the subject each message came on.
SubjectHandler = Callable[[Delivered], Awaitable[bytes | None]]
# A durable handler gets a batch of stored messages, oldest first; returning acknowledges them.
DurableHandler = Callable[[Sequence[Delivered]], Awaitable[None]]

DEDUP_WINDOW = 120.0  # seconds during which a message id is remembered
DURABLE_BATCH = 256

Status = Literal["connected", "reconnecting", "closed"]


@dataclass(frozen=True)
class Gathering:
    """How a consumer gathers its batch: ``more_due(batch)`` says whether more messages are due
    soon to join the batch at hand; the consumer waits for them at most ``within`` seconds."""

    more_due: Callable[[Sequence[bytes]], bool]
    within: float


@dataclass(frozen=True)
class BrokerState:
    """What /healthz and the node list tell about the broker."""

    kind: Literal["local", "nats"]
    status: Status
    url: str | None = None  # without credentials
    last_error: str | None = None

    @property
    def connected(self) -> bool:
        return self.status == "connected"


class Subscription(Protocol):
    async def unsubscribe(self) -> None: ...


class DurableSubscription(Subscription, Protocol):
    async def caught_up(self) -> None:
        """Return once every message stored on the subject before this call was handled and
        acknowledged (a batch handed to an earlier consumer of the name that died unacknowledged
        is handed over again first)."""


class Broker(Protocol):
    async def publish(self, subject: str, data: bytes) -> None:
        """Deliver to every subscriber of ``subject``, without waiting for them."""

    async def request(self, subject: str, data: bytes, timeout: float) -> bytes:
        """Ask one subscriber of ``subject`` and wait for its reply; Unavailable if none answers."""

    async def subscribe(self, subject: str, handler: Handler) -> Subscription: ...

    async def subscribe_with_subject(self, subject: str, handler: SubjectHandler) -> Subscription:
        """``subscribe``, the handler told the subject each message came on (``subject`` may
        hold wildcards)."""

    async def send_durable(self, subject: str, data: bytes, message_id: str) -> None:
        """Store ``data`` for the consumer of ``subject``; return once stored. Unavailable if
        the broker is closed."""

    async def consume(
        self,
        subject: str,
        consumer: str,
        handler: DurableHandler,
        gathering: Gathering | None = None,
    ) -> DurableSubscription:
        """Hand what is stored on ``subject`` to ``handler`` as consumer ``consumer``, each batch
        gathered as ``gathering`` says (by default, what is stored at once); stopping the
        returned subscription keeps the consumer's place for the next ``consume``."""

    def state(self) -> BrokerState: ...

    async def close(self) -> None: ...
