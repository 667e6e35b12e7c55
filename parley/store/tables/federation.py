"""Peer installations: connections, invites, exposures and the frames received."""

from __future__ import annotations

from sqlalchemy import (
    CheckConstraint,
    Column,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
)

from parley.store.tables.base import metadata
from parley.store.types import UTCDateTime

# A link to a peer installation. ``issued_token_hash``: the token this side gave the peer (only
# its hash); ``peer_token``: the token the peer gave us, to call it (kept, never shown).
# ``failures``, ``retry_at`` and ``last_error``: the sender's backoff after transport failures.
connections = Table(
    "connections",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("url", Text, nullable=False),
    Column("state", String(16), nullable=False, server_default="active"),
    Column("queue_limit", Integer, nullable=True),
    Column("issued_token_hash", String(64), nullable=False, unique=True),
    Column("peer_token", Text, nullable=False),
    Column("created_by_person_id", Integer, ForeignKey("people.id"), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_contact_at", UTCDateTime, nullable=True),
    Column("failures", Integer, nullable=False, server_default="0"),
    Column("retry_at", UTCDateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    CheckConstraint("state IN ('active', 'paused', 'revoked')", name="connection_state"),
    CheckConstraint("queue_limit IS NULL OR queue_limit >= 1", name="queue_limit"),
)

# An invite an owner made: a one-time secret (its hash) that lets a peer make a connection
# named ``name`` here, until ``expires_at``.
invites = Table(
    "invites",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False),
    Column("secret_hash", String(64), nullable=False, unique=True),
    Column("created_by_person_id", Integer, ForeignKey("people.id"), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Column("used_at", UTCDateTime, nullable=True),
)

# Which local agents a peer may address over a connection.
exposures = Table(
    "exposures",
    metadata,
    Column("connection_id", Integer, ForeignKey("connections.id"), primary_key=True),
    Column("agent_id", Integer, ForeignKey("agents.id"), primary_key=True),
)

# Every text frame a peer sent, by its message_id, with the verdict it got: a repeat gets the
# same verdict again, as a duplicate, and changes nothing.
received_frames = Table(
    "received_frames",
    metadata,
    Column("connection_id", Integer, ForeignKey("connections.id"), primary_key=True),
    Column("message_id", String(64), primary_key=True),
    Column("verdict", String(16), nullable=False),
    Column("reason", String(32), nullable=True),
    Column("detail", Text, nullable=True),
    Column("received_at", UTCDateTime, nullable=False),
)
