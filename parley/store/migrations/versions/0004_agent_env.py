"""Variables an owner declares for an agent's command brain (``--env``, ``--env-from-server``):
its process gets these and an allow-list of the server's, nothing else the server holds.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_env",
        sa.Column("agent_id", sa.Integer, sa.ForeignKey("agents.id"), primary_key=True),
        sa.Column("name", sa.String(128), primary_key=True),
        sa.Column("value", sa.Text, nullable=True),
        sa.Column("from_server", sa.Boolean, nullable=False),
        sa.CheckConstraint("from_server = (value IS NULL)", name="value_or_from_server"),
    )


def downgrade() -> None:
    op.drop_table("agent_env")
