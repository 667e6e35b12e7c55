"""Each tool call of a run's turn, in order: its tool, arguments (shortened, without secrets),
the size of its result, how long it took, why it was refused, and where it sits in the text.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tool_calls",
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("tool", sa.String(64), nullable=False),
        sa.Column("arguments", sa.Text, nullable=False),
        sa.Column("result_bytes", sa.BigInteger, nullable=False),
        sa.Column("duration_ms", sa.BigInteger, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("after_chars", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("tool_calls")
