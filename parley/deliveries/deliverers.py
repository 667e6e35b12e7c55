"""Deliverers, one per kind, in two modes. A **local** deliverer acts inside the transaction
that settles the item, so its effect and the item's ``delivered`` commit together: exactly once.
A **remote** deliverer sends outside any transaction (a channel post, a federation frame) with
the item's idempotency key, so that the receiver can recognise a repeated attempt.

Either says how an attempt went with the error tree: ``Unavailable`` (or any error that is not
a ``ParleyError``: a timeout, a dropped connection) is transient and retried with backoff; every
other ``ParleyError`` (Invalid, NotFound, Conflict, Forbidden…) is a final verdict, never
retried. An item that failed for good is handed back to its deliverer's ``undeliverable`` in the
transaction that records the failure, so that its fate is visible where it was meant to go."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import ValidationError

from parley.clock import Clock
from parley.deliveries.model import Delivery, Payload
from parley.errors import Invalid, ParleyError, Unavailable
from parley.store import Tx

P = TypeVar("P", bound=Payload)
P_contra = TypeVar("P_contra", bound=Payload, contravariant=True)


class Fate(Protocol[P_contra]):
    async def undeliverable(self, tx: Tx, clock: Clock, payload: P_contra, reason: str) -> None:
        """Record, where the delivery was meant to go or came from, why it never will."""


class LocalDeliverer(Fate[P_contra], Protocol[P_contra]):
    async def deliver(self, tx: Tx, clock: Clock, payload: P_contra) -> None:
        """Deliver inside ``tx``, which also marks the item delivered."""


class RemoteDeliverer(Fate[P_contra], Protocol[P_contra]):
    # Seconds an attempt may take; the worker also bounds it by half its claim's lease.
    timeout: float

    async def send(self, payload: P_contra, idempotency_key: str) -> None:
        """Send, outside any transaction; the same key on every attempt of one item."""


def is_final(error: BaseException) -> bool:
    """A verdict that no retry will change."""
    return isinstance(error, ParleyError) and not isinstance(error, Unavailable)


@dataclass(frozen=True)
class Route(Generic[P]):
    """An item parsed, with the deliverer of its kind."""

    payload: P
    local: LocalDeliverer[P] | None = None
    remote: RemoteDeliverer[P] | None = None

    @property
    def fate(self) -> Fate[P]:
        fate = self.local or self.remote
        assert fate is not None
        return fate


@dataclass(frozen=True)
class _Entry:
    model: type[Payload]
    local: LocalDeliverer[Any] | None
    remote: RemoteDeliverer[Any] | None


class Deliverers:
    """The registry: for each kind, its payload model and its deliverer; or, for a kind that
    has a sender of its own (federation frames: claimed per connection, in (thread, seq) order,
    in batches), the fate of an item of it that fails for good. Channels and federation each
    contribute their kinds; the outbox worker claims only the items the others do not send."""

    def __init__(self) -> None:
        self._by_kind: dict[str, _Entry] = {}
        self._own: dict[str, Fate[Any]] = {}

    def add_local(self, model: type[P], deliverer: LocalDeliverer[P]) -> Deliverers:
        return self._add(_Entry(model, deliverer, None))

    def add_remote(self, model: type[P], deliverer: RemoteDeliverer[P]) -> Deliverers:
        return self._add(_Entry(model, None, deliverer))

    def add_own(self, kind: str, fate: Fate[Any]) -> Deliverers:
        """A kind its own sender claims and sends; ``fate`` is told of an item that failed."""
        self._taken(kind)
        self._own[kind] = fate
        return self

    def fate_of(self, kind: str) -> Fate[Any]:
        """The fate of a kind with a sender of its own."""
        return self._own[kind]

    def _add(self, entry: _Entry) -> Deliverers:
        self._taken(entry.model.kind)
        self._by_kind[entry.model.kind] = entry
        return self

    def _taken(self, kind: str) -> None:
        if kind in self._by_kind or kind in self._own:
            raise ValueError(f"a deliverer for {kind!r} is registered already")

    @property
    def kinds(self) -> list[str]:
        return sorted([*self._by_kind, *self._own])

    def route(self, item: Delivery) -> Route[Any]:
        """The item's payload, parsed, and its deliverer; Invalid (final) when its kind has no
        deliverer or its payload does not fit its kind's model."""
        entry = self._by_kind.get(item.kind)
        if item.kind in self._own:
            raise Invalid(f"the {item.kind} kind is sent by a sender of its own, not routed")
        if entry is None:
            raise Invalid(f"no deliverer for kind {item.kind!r}")
        try:
            payload = entry.model.model_validate_json(item.payload)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'payload'}: {e['msg']}" for e in exc.errors()
            )
            raise Invalid(f"the {item.kind} payload does not fit its model: {problems}") from exc
        return Route(payload, entry.local, entry.remote)
