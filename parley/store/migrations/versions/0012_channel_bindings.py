"""Channel bindings: a channel conversation bound to a session, at most one live binding per
conversation, found by session too.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

LIVE = sa.text("status <> 'ended'")


def upgrade() -> None:
    op.create_table(
        "channel_bindings",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("target_session_key", sa.String(64), nullable=False),
        sa.Column("target_kind", sa.String(16), nullable=False),
        sa.Column("channel", sa.String(200), nullable=False),
        sa.Column("account_id", sa.String(200), nullable=False),
        sa.Column("conversation_id", sa.String(200), nullable=False),
        sa.Column("parent_conversation_id", sa.String(200), nullable=True),
        sa.Column("status", sa.String(16), nullable=False, server_default="active"),
        sa.Column("bound_at", UTCDateTime, nullable=False),
        sa.Column("expires_at", UTCDateTime, nullable=True),
        sa.Column("bound_by", sa.String(200), nullable=False),
        sa.Column("last_activity_at", UTCDateTime, nullable=False),
        sa.Column("idle_timeout_seconds", sa.Integer, nullable=True),
        sa.Column("max_age_seconds", sa.Integer, nullable=True),
        sa.Column("ended_at", UTCDateTime, nullable=True),
        sa.Column("ended_reason", sa.Text, nullable=True),
        sa.Column("metadata_json", sa.Text, nullable=False, server_default="{}"),
        sa.CheckConstraint("status IN ('active', 'ending', 'ended')", name="binding_status"),
        sa.CheckConstraint("target_kind IN ('subagent', 'session')", name="binding_target_kind"),
    )
    op.create_index(
        "uq_channel_bindings_live_conversation",
        "channel_bindings",
        ["channel", "account_id", "conversation_id"],
        unique=True,
        sqlite_where=LIVE,
        postgresql_where=LIVE,
    )
    op.create_index(
        "ix_channel_bindings_live_session",
        "channel_bindings",
        ["target_session_key"],
        sqlite_where=LIVE,
        postgresql_where=LIVE,
    )
    op.create_index("ix_channel_bindings_status", "channel_bindings", ["status", "id"])


def downgrade() -> None:
    op.drop_index("ix_channel_bindings_status", "channel_bindings")
    op.drop_index("ix_channel_bindings_live_session", "channel_bindings")
    op.drop_index("uq_channel_bindings_live_conversation", "channel_bindings")
    op.drop_table("channel_bindings")
