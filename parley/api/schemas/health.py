"""The health check."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from parley.broker.port import BrokerState


class BrokerOut(BaseModel):
    """The broker between the hub and its nodes, as the hub sees it now."""

    kind: Literal["local", "nats"] = Field(description="local: in process; nats: a NATS server")
    status: Literal["connected", "reconnecting", "closed"]
    url: str | None = Field(None, description="the broker's servers, without credentials")
    last_error: str | None = None

    @classmethod
    def of(cls, state: BrokerState) -> BrokerOut:
        return cls(kind=state.kind, status=state.status, url=state.url, last_error=state.last_error)


class Health(BaseModel):
    status: str = Field(description="ok; or broker_away while the broker cannot be reached")
    version: str
    store: str
    broker: BrokerOut
