"""Channels: bindings, accounts, identities and the web channel's own rows."""

from __future__ import annotations

from sqlalchemy import (
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from parley.store.tables.base import metadata, partial_index
from parley.store.types import UTCDateTime

# A channel conversation bound to a session (``topic:ID``): what is said there goes to that
# session, what it completes comes back there. At most one live binding per conversation.
channel_bindings = Table(
    "channel_bindings",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("target_session_key", String(64), nullable=False),
    Column("target_kind", String(16), nullable=False),
    Column("channel", String(200), nullable=False),
    Column("account_id", String(200), nullable=False),
    Column("conversation_id", String(200), nullable=False),
    Column("parent_conversation_id", String(200), nullable=True),
    Column("status", String(16), nullable=False, server_default="active"),
    Column("bound_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=True),
    Column("bound_by", String(200), nullable=False),
    Column("last_activity_at", UTCDateTime, nullable=False),
    Column("idle_timeout_seconds", Integer, nullable=True),
    Column("max_age_seconds", Integer, nullable=True),
    Column("ended_at", UTCDateTime, nullable=True),
    Column("ended_reason", Text, nullable=True),
    Column("metadata_json", Text, nullable=False, server_default="{}"),
    CheckConstraint("status IN ('active', 'ending', 'ended')", name="binding_status"),
    CheckConstraint("target_kind IN ('subagent', 'session')", name="binding_target_kind"),
    partial_index(
        "uq_channel_bindings_live_conversation",
        "channel",
        "account_id",
        "conversation_id",
        unique=True,
        where="status <> 'ended'",
    ),
    partial_index(
        "ix_channel_bindings_live_session",
        "target_session_key",
        where="status <> 'ended'",
    ),
    Index("ix_channel_bindings_status", "status", "id"),
)

# Accounts of channels (a Discord bot, the web channel's ``home``): where the messages of their
# conversations go when no binding holds them.
channel_accounts = Table(
    "channel_accounts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("channel", String(200), nullable=False),
    Column("account_id", String(200), nullable=False),
    Column("default_agent_id", Integer, ForeignKey("agents.id"), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("token", Text, nullable=True),  # the account's secret (a bot token); never shown
    Column("last_inbound_at", UTCDateTime, nullable=True),
    Column("last_outbound_at", UTCDateTime, nullable=True),
    UniqueConstraint("channel", "account_id", name="uq_channel_accounts"),
)

# Channel users known as people, per account: the account's allow-list.
channel_identities = Table(
    "channel_identities",
    metadata,
    Column("account_ref", Integer, ForeignKey("channel_accounts.id"), primary_key=True),
    Column("user_id", String(200), primary_key=True),
    Column("person_id", Integer, ForeignKey("people.id"), nullable=False),
    Column("linked_at", UTCDateTime, nullable=False),
)

# The people Parley knows in a channel conversation: each person (through a linked identity)
# who wrote there. A channel whose readers Parley cannot list (Discord) shows a bound session to
# these; a binding may target only a session every one of them may read.
channel_people = Table(
    "channel_people",
    metadata,
    Column("channel", String(200), primary_key=True),
    Column("account_id", String(200), primary_key=True),
    Column("conversation_id", String(200), primary_key=True),
    Column("person_id", Integer, ForeignKey("people.id"), primary_key=True),
    Column("first_at", UTCDateTime, nullable=False),
)

# The web channel's conversations (a thread has a parent) and what is said in them: Parley's own
# rows. A key makes a repeated attempt (an outbox retry) make or post nothing twice.
web_conversations = Table(
    "web_conversations",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("account_id", String(200), nullable=False),
    Column("parent_id", Integer, ForeignKey("web_conversations.id"), nullable=True),
    Column("title", Text, nullable=False),
    Column("person_id", Integer, ForeignKey("people.id"), nullable=True),
    Column("idempotency_key", String(200), nullable=True, unique=True),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_web_conversations_account", "account_id", "parent_id", "id"),
)

web_messages = Table(
    "web_messages",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("conversation_id", Integer, ForeignKey("web_conversations.id"), nullable=False),
    Column("author", String(200), nullable=False),
    Column("body", Text, nullable=False),
    Column("idempotency_key", String(200), nullable=True, unique=True),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_web_messages_conversation", "conversation_id", "id"),
)
