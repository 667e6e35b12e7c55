"""Peer installations: connections, invites, exposures and the frames received."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

from parley.store.tables.base import metadata, partial_index
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
    # 'parley': a peer installation; 'a2a': an A2A agent, its card kept (its skills: our roles
    # for it), called with ``peer_token`` if it asks for one.
    Column("kind", String(16), nullable=False, server_default="parley"),
    Column("card", Text, nullable=True),
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

# A task of an A2A agent that one of our roles' texts started (the text frame, as sent, in
# ``frame``): followed until it ends, its reply then given to the thread as the agent's text.
# ``cancel_asked``: the work it was for was stopped here; ``replies``: texts given back so far.
a2a_remote_tasks = Table(
    "a2a_remote_tasks",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("connection_id", Integer, ForeignKey("connections.id"), nullable=False),
    Column("topic_id", Integer, ForeignKey("topics.id"), nullable=False),
    Column("remote_task_id", String(200), nullable=False),
    Column("frame", Text, nullable=False),
    Column("state", String(40), nullable=False),
    Column("cancel_asked", Boolean, nullable=False, server_default=text("false")),
    Column("replies", Integer, nullable=False, server_default="0"),
    Column("created_at", UTCDateTime, nullable=False),
    Column("deadline", UTCDateTime, nullable=False),
    Column("settled_at", UTCDateTime, nullable=True),
    UniqueConstraint("connection_id", "remote_task_id", name="uq_a2a_remote_task"),
    partial_index(
        "ix_a2a_remote_tasks_open",
        "id",
        where="settled_at IS NULL",
    ),
)

# Each text sent to an A2A agent, kept before it is sent: a text sent again (the sender's
# batch cut off after the agent took it) is first looked for there rather than sent twice.
# ``remote_task_id``: the task the agent made of it, once known here.
a2a_sent_texts = Table(
    "a2a_sent_texts",
    metadata,
    Column("connection_id", Integer, ForeignKey("connections.id"), primary_key=True),
    Column("message_id", String(200), primary_key=True),
    Column("topic_id", Integer, ForeignKey("topics.id"), nullable=False),
    Column("sent_at", UTCDateTime, nullable=False),
    Column("remote_task_id", String(200), nullable=True),
)
