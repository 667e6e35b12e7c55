"""The history of changes to hired agents (``agent set``): which setting, what it was and became,
who changed it and when. Variables are recorded by name only, never by value.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_changes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("agent_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=False),
        sa.Column("setting", sa.String(32), nullable=False),
        sa.Column("old", sa.Text, nullable=True),
        sa.Column("new", sa.Text, nullable=True),
        sa.Column("changed_by_person_id", sa.Integer, sa.ForeignKey("people.id"), nullable=True),
        sa.Column("changed_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_agent_changes_agent", "agent_changes", ["agent_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_agent_changes_agent", "agent_changes")
    op.drop_table("agent_changes")
