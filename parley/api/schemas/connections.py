"""Connections to peer installations, as owners manage them (never with a token in them)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from parley.api.schemas.base import NAME, Body, example
from parley.federation.a2a_agents import card_of, roles_of
from parley.federation.model import ConnectionStatus


class InviteIn(Body):
    model_config = example(name="acme", expires="24h")

    name: str = Field(json_schema_extra=NAME, description="what this side will call the connection")
    expires: str = Field(
        "24h", max_length=64, description="how long the code is good: 90s, 30m, 2h, 1d…"
    )


class InviteOut(BaseModel):
    name: str
    code: str = Field(description="give it to the peer's owner: parley connection accept CODE")
    expires_at: datetime


class AcceptIn(Body):
    model_config = example(code="parley-invite:eyJ1cmwiOi…", name="home")

    code: str = Field(min_length=1, max_length=4096)
    name: str = Field(json_schema_extra=NAME, description="what this side will call the connection")


class ExposeIn(Body):
    model_config = example(agents=["clerk", "scribe"])

    agents: list[str] = Field(max_length=1000, description="exactly these, from now on")


class QueueLimitIn(Body):
    model_config = example(queue_limit=500)

    queue_limit: int | None = Field(
        ge=1,
        le=10_000_000,
        description="text that may wait on the connection, each way; null: the setting's default",
    )


class A2AConnectionIn(Body):
    model_config = example(name="sample", url="https://agents.example.com/echo")

    name: str = Field(json_schema_extra=NAME, description="what this side calls the agent")
    url: str = Field(min_length=1, max_length=2000, description="its card's base URL")
    token: str | None = Field(
        None,
        max_length=4096,
        description="the bearer token it asks for, if any (kept, never shown)",
    )


class ConnectionOut(BaseModel):
    name: str
    kind: str = Field(description="parley: a peer installation; a2a: an A2A agent")
    roles: list[str] = Field(
        description="an A2A agent's skills, as the roles our agents address (ROLE@NAME)"
    )
    url: str = Field(description="the peer's public URL")
    state: str = Field(description="active, paused or revoked")
    queue_limit: int | None
    queued: int = Field(description="text frames waiting to be sent")
    parked: list[str] = Field(
        description="threads held after the peer had them sent again too often, each with why"
    )
    exposed: list[str] = Field(description="local agents the peer may address")
    last_contact_at: datetime | None = Field(description="when the peer last answered")
    failures: int = Field(description="failed attempts to reach the peer in a row")
    retry_at: datetime | None = Field(description="the next attempt after those failures")
    last_error: str | None
    created_at: datetime

    @classmethod
    def of(cls, status: ConnectionStatus) -> ConnectionOut:
        c = status.connection
        return cls(
            name=c.name,
            kind=c.kind,
            roles=sorted(roles_of(card_of(c.card))) if c.card else [],
            url=c.url,
            state=c.state.value,
            queue_limit=c.queue_limit,
            queued=status.queued,
            parked=status.parked,
            exposed=status.exposed,
            last_contact_at=c.last_contact_at,
            failures=c.failures,
            retry_at=c.retry_at,
            last_error=c.last_error,
            created_at=c.created_at,
        )
