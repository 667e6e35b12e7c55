"""Deliveries: the outbox's items as owners read them."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from parley.deliveries.model import Delivery, DeliveryState


class DeliveryOut(BaseModel):
    id: int
    key: str = Field(description="idempotency key, sent with every attempt of a remote kind")
    kind: str
    state: str
    attempts: int = Field(description="attempts begun")
    next_attempt_at: datetime | None = Field(description="when a pending item is tried next")
    claimed_until: datetime | None = Field(description="an attempt in flight holds it until")
    last_attempt_at: datetime | None
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None
    mode: str | None = Field(None, description="a routed delivery: bound or fallback")
    reason: str | None = Field(None, description="why it goes where it goes")
    destination: str | None = Field(None, description="where it goes, in words")

    @classmethod
    def of(cls, item: Delivery) -> DeliveryOut:
        pending = item.state is DeliveryState.PENDING
        return cls(
            id=item.id,
            key=item.key,
            kind=item.kind,
            state=item.state.value,
            attempts=item.attempts,
            next_attempt_at=item.next_attempt_at if pending else None,
            claimed_until=item.claimed_until,
            last_attempt_at=item.last_attempt_at,
            last_error=item.last_error,
            created_at=item.created_at,
            delivered_at=item.delivered_at,
            mode=item.route.mode if item.route else None,
            reason=item.route.reason if item.route else None,
            destination=item.route.destination if item.route else None,
        )
