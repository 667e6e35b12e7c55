"""The outbox: what must be delivered, written in the transaction that decided it."""

from __future__ import annotations

from sqlalchemy import (
    CheckConstraint,
    Column,
    Index,
    Integer,
    String,
    Table,
    Text,
)

from parley.store.tables.base import metadata, partial_index
from parley.store.types import UTCDateTime

# What must be delivered, written in the transaction that decided it: a subtask's completion,
# an answer from a node session (later: channel posts, federation frames). Claimed by the outbox
# worker for a lease, delivered or retried at ``next_attempt_at``; kept afterwards.
outbox = Table(
    "outbox",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("idempotency_key", String(200), nullable=False, unique=True),
    Column("kind", String(32), nullable=False),
    Column("payload", Text, nullable=False),
    Column("state", String(16), nullable=False, server_default="pending"),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("last_error", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("delivered_at", UTCDateTime, nullable=True),
    Column("next_attempt_at", UTCDateTime, nullable=False),
    Column("claimed_by", String(64), nullable=True),
    Column("claimed_until", UTCDateTime, nullable=True),
    Column("last_attempt_at", UTCDateTime, nullable=True),
    # A frame for a peer: its connection, the agent conversation (topic) and seq it belongs to.
    # The federation sender claims these per connection, in (thread, seq) order; the general
    # worker leaves them alone.
    Column("connection", String(64), nullable=True),
    Column("thread_topic_id", Integer, nullable=True),
    Column("seq", Integer, nullable=True),
    # Times the peer had this frame's thread sent again from an earlier seq (a gap there).
    Column("resends", Integer, nullable=False, server_default="0"),
    # Where a routed delivery goes and why: bound | fallback (None: not routed), the reason,
    # and the destination in words.
    Column("route_mode", String(16), nullable=True),
    Column("route_reason", String(64), nullable=True),
    Column("route_destination", Text, nullable=True),
    CheckConstraint("state IN ('pending', 'delivered', 'failed')", name="outbox_state"),
    partial_index(
        "ix_outbox_due",
        "next_attempt_at",
        "id",
        where="state = 'pending'",
    ),
    partial_index(
        "ix_outbox_frames",
        "connection",
        "thread_topic_id",
        "seq",
        where="state = 'pending' AND connection IS NOT NULL",
    ),
    Index("ix_outbox_state", "state", "id"),
)
