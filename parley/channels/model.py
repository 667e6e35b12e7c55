"""The values of channels: a ConversationRef names one conversation in one channel account (a
channel, a thread, a direct conversation; a thread names its parent, so that a thread "under" a
requester's channel is recognised without asking the adapter), and a session binding's record.
Plain values, read by the store too."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from parley.errors import Invalid

WEB = "web"  # the built-in channel: the web page and the API
SESSION_DELETED = "session-deleted"  # why a topic's bindings ended when it closed
MAX_PART = 200  # the store's columns hold this much of each part


@dataclass(frozen=True)
class ConversationRef:
    channel: str
    account_id: str
    conversation_id: str
    parent_conversation_id: str | None = None

    def __post_init__(self) -> None:
        for name in ("channel", "account_id", "conversation_id"):
            _check_part(name, getattr(self, name))
        if self.parent_conversation_id is not None:
            _check_part("parent_conversation_id", self.parent_conversation_id)

    @property
    def account(self) -> tuple[str, str]:
        """The (channel, account) whose adapter speaks for this conversation."""
        return (self.channel, self.account_id)

    def same_conversation(self, other: ConversationRef) -> bool:
        """The same place, whatever either says of its parent."""
        return (self.channel, self.account_id, self.conversation_id) == (
            other.channel,
            other.account_id,
            other.conversation_id,
        )

    def __str__(self) -> str:
        place = f"{self.channel}:{self.account_id}:{self.conversation_id}"
        return (
            place
            if self.parent_conversation_id is None
            else f"{place} (in {self.parent_conversation_id})"
        )


def _check_part(name: str, value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"{name}: give a non-empty text", field=name)
    if len(value) > MAX_PART or "\x00" in value:
        raise Invalid(f"{name}: at most {MAX_PART} characters, no NUL", field=name)


class BindingTargetKind(StrEnum):
    SUBAGENT = "subagent"  # a subtask's session, spawned with a thread
    SESSION = "session"  # any other session (a person's conversation)


class BindingStatus(StrEnum):
    ACTIVE = "active"
    ENDING = "ending"  # its farewell is on its way
    ENDED = "ended"


@dataclass(frozen=True)
class SessionBindingRecord:
    binding_id: int
    target_session_key: str
    target_kind: BindingTargetKind
    conversation: ConversationRef
    status: BindingStatus
    bound_at: datetime
    expires_at: datetime | None  # bound_at + the shorter of its TTL and max age
    bound_by: str
    last_activity_at: datetime
    idle_timeout: timedelta | None
    max_age: timedelta | None
    ended_reason: str | None = None
    ended_at: datetime | None = None
    metadata: Mapping[str, object] = field(default_factory=dict)

    @property
    def is_active(self) -> bool:
        return self.status is BindingStatus.ACTIVE

    def why_over(self, now: datetime) -> str | None:
        """Why an active binding should end at ``now`` (``max-age``, ``idle-timeout``), if so."""
        if not self.is_active:
            return None
        if self.expires_at is not None and now >= self.expires_at:
            return "max-age"
        if self.idle_timeout is not None and now >= self.last_activity_at + self.idle_timeout:
            return "idle-timeout"
        return None


@dataclass(frozen=True)
class BindRequest:
    target_session_key: str
    target_kind: BindingTargetKind
    conversation: ConversationRef
    bound_by: str
    ttl: timedelta | None = None
    idle_timeout: timedelta | None = None
    max_age: timedelta | None = None
    metadata: Mapping[str, object] = field(default_factory=dict)


def session_key(topic_id: int) -> str:
    """What a binding names a session by: its topic, stable before any run exists."""
    return f"topic:{topic_id}"


@dataclass(frozen=True)
class ChannelAccount:
    """One account of a channel (a Discord bot, the web channel's ``home``): where its
    conversations' messages go when no binding holds them."""

    id: int
    channel: str
    account_id: str
    default_agent: str | None
    created_at: datetime
    has_token: bool = False  # its secret (a bot token) is set; the secret itself never leaves
    last_inbound_at: datetime | None = None  # when a user's message last came in
    last_outbound_at: datetime | None = None  # when it last posted (webhook posts included)


@dataclass(frozen=True)
class WebConversation:
    """A conversation of the web channel (a thread when it has a parent): Parley's own row."""

    id: int
    account_id: str
    parent_id: int | None
    title: str
    person_id: int | None  # who opened it (a thread: its parent's person)
    person_name: str | None
    created_at: datetime

    @property
    def ref(self) -> ConversationRef:
        parent = None if self.parent_id is None else str(self.parent_id)
        return ConversationRef(WEB, self.account_id, str(self.id), parent)


@dataclass(frozen=True)
class WebMessage:
    id: int
    conversation_id: int
    author: str  # person:NAME, an agent's name, or parley
    body: str
    created_at: datetime


def ref_json(ref: ConversationRef) -> str:
    """A requester as a message records it."""
    return json.dumps(
        {
            "channel": ref.channel,
            "account_id": ref.account_id,
            "conversation_id": ref.conversation_id,
            "parent_conversation_id": ref.parent_conversation_id,
        },
        sort_keys=True,
    )


def ref_from_json(text: str | None) -> dict[str, object] | None:
    """A recorded requester, as recorded (the router judges whether it is whole)."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}
