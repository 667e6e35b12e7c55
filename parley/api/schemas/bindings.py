"""Bindings: a channel conversation bound to a session, as owners read and make them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from parley.api.schemas.base import Body, capped, example
from parley.channels.model import MAX_PART, ConversationRef, SessionBindingRecord


class ConversationRefOut(BaseModel):
    channel: str
    account_id: str
    conversation_id: str
    parent_conversation_id: str | None

    @classmethod
    def of(cls, ref: ConversationRef) -> ConversationRefOut:
        return cls(
            channel=ref.channel,
            account_id=ref.account_id,
            conversation_id=ref.conversation_id,
            parent_conversation_id=ref.parent_conversation_id,
        )


class BindingOut(BaseModel):
    id: int
    session: str = Field(description="the session bound: topic:ID")
    target_kind: str = Field(description="subagent (a subtask's session) or session")
    conversation: ConversationRefOut
    status: str = Field(description="active, ending (its farewell is on its way) or ended")
    bound_at: datetime
    bound_by: str = Field(description="who bound it: person:NAME, or run:ID (agent NAME)")
    expires_at: datetime | None
    last_activity_at: datetime
    idle_timeout_seconds: float | None
    max_age_seconds: float | None
    ended_at: datetime | None
    ended_reason: str | None
    metadata: dict[str, Any]

    @classmethod
    def of(cls, record: SessionBindingRecord) -> BindingOut:
        idle, age = record.idle_timeout, record.max_age
        return cls(
            id=record.binding_id,
            session=record.target_session_key,
            target_kind=record.target_kind.value,
            conversation=ConversationRefOut.of(record.conversation),
            status=record.status.value,
            bound_at=record.bound_at,
            bound_by=record.bound_by,
            expires_at=record.expires_at,
            last_activity_at=record.last_activity_at,
            idle_timeout_seconds=None if idle is None else idle.total_seconds(),
            max_age_seconds=None if age is None else age.total_seconds(),
            ended_at=record.ended_at,
            ended_reason=record.ended_reason,
            metadata=dict(record.metadata),
        )


class BindIn(Body):
    model_config = example(
        session="topic:7", channel="web", account_id="home", conversation_id="12",
        idle_timeout_seconds=3600,
    )  # fmt: skip

    session: str = Field(description="the session to bind: topic:ID", max_length=64)
    channel: str = Field(json_schema_extra=capped(MAX_PART))
    account_id: str = Field(json_schema_extra=capped(MAX_PART))
    conversation_id: str = Field(json_schema_extra=capped(MAX_PART))
    parent_conversation_id: str | None = Field(None, json_schema_extra=capped(MAX_PART))
    ttl_seconds: float | None = Field(None, description="ends this long after binding")
    idle_timeout_seconds: float | None = Field(None, description="ends after this long idle")
    max_age_seconds: float | None = Field(None, description="ends this long after binding")
    metadata: dict[str, Any] = Field(default_factory=dict)

    def conversation(self) -> ConversationRef:
        return ConversationRef(
            self.channel, self.account_id, self.conversation_id, self.parent_conversation_id
        )

    def lifetimes(self) -> dict[str, float | None]:
        return {
            "ttl": self.ttl_seconds,
            "idle_timeout": self.idle_timeout_seconds,
            "max_age": self.max_age_seconds,
        }


class UnbindIn(Body):
    model_config = example(binding=3, reason="done with this thread")

    binding: int | None = Field(None, description="the binding to end")
    session: str | None = Field(
        None, description="or: every binding of this session, topic:ID", max_length=64
    )
    reason: str = Field("unbound", json_schema_extra=capped(500, 1))
