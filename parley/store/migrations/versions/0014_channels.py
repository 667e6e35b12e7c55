"""Channels: accounts with their default agent and linked users, the web channel's conversations
and messages, where a message came in from (its channel conversation), and each delivery's
route (mode, reason, destination).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "channel_accounts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("channel", sa.String(200), nullable=False),
        sa.Column("account_id", sa.String(200), nullable=False),
        sa.Column("default_agent_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("channel", "account_id", name="uq_channel_accounts"),
    )
    op.create_table(
        "channel_identities",
        sa.Column(
            "account_ref", sa.Integer, sa.ForeignKey("channel_accounts.id"), primary_key=True
        ),
        sa.Column("user_id", sa.String(200), primary_key=True),
        sa.Column("person_id", sa.Integer, sa.ForeignKey("people.id"), nullable=False),
        sa.Column("linked_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "web_conversations",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("account_id", sa.String(200), nullable=False),
        sa.Column("parent_id", sa.Integer, sa.ForeignKey("web_conversations.id"), nullable=True),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("person_id", sa.Integer, sa.ForeignKey("people.id"), nullable=True),
        sa.Column("idempotency_key", sa.String(200), nullable=True, unique=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_index(
        "ix_web_conversations_account", "web_conversations", ["account_id", "parent_id", "id"]
    )
    op.create_table(
        "web_messages",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "conversation_id", sa.Integer, sa.ForeignKey("web_conversations.id"), nullable=False
        ),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("idempotency_key", sa.String(200), nullable=True, unique=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_web_messages_conversation", "web_messages", ["conversation_id", "id"])
    op.add_column("messages", sa.Column("channel_ref", sa.Text, nullable=True))
    op.add_column("outbox", sa.Column("route_mode", sa.String(16), nullable=True))
    op.add_column("outbox", sa.Column("route_reason", sa.String(64), nullable=True))
    op.add_column("outbox", sa.Column("route_destination", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("route_destination")
        batch.drop_column("route_reason")
        batch.drop_column("route_mode")
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("channel_ref")
    op.drop_index("ix_web_messages_conversation", "web_messages")
    op.drop_table("web_messages")
    op.drop_index("ix_web_conversations_account", "web_conversations")
    op.drop_table("web_conversations")
    op.drop_table("channel_identities")
    op.drop_table("channel_accounts")
