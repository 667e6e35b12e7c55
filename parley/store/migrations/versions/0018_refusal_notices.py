"""Notices addressed to an agent that no turn has had yet (a refusal told in a root, for the
agent that sent the refused text): found by its next turn there through a small index.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

UNCLAIMED = "run_id IS NULL AND recipient_agent_id IS NOT NULL"


def upgrade() -> None:
    op.create_index(
        "ix_messages_unclaimed",
        "messages",
        ["topic_id", "recipient_agent_id"],
        sqlite_where=sa.text(UNCLAIMED),
        postgresql_where=sa.text(UNCLAIMED),
    )


def downgrade() -> None:
    op.drop_index("ix_messages_unclaimed", "messages")
