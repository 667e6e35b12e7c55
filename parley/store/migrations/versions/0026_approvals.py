"""Approvals: a tool call that waits for a person's yes or no (its exact arguments, who decided,
when, why), and each agent's list of tools that ask first (``run`` unless an owner says
otherwise, for every agent hired before the list existed too).

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agents") as agents:
        agents.add_column(sa.Column("ask", sa.Text, nullable=False, server_default="run"))
    op.create_table(
        "approvals",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), nullable=False),
        sa.Column("tool", sa.String(200), nullable=False),
        sa.Column("arguments", sa.Text, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("asked_at", UTCDateTime, nullable=False),
        sa.Column("deadline", UTCDateTime, nullable=False),
        sa.Column("decided_at", UTCDateTime, nullable=True),
        sa.Column("decided_by_person_id", sa.Integer, sa.ForeignKey("people.id"), nullable=True),
        sa.Column("reason", sa.Text, nullable=True),
        sa.CheckConstraint("state IN ('waiting', 'approved', 'denied')", name="state"),
        sa.CheckConstraint(
            "(state = 'waiting') = (decided_at IS NULL)", name="decided_when_not_waiting"
        ),
    )
    op.create_index("ix_approvals_run", "approvals", ["run_id"])
    op.create_index(
        "ix_approvals_waiting",
        "approvals",
        ["id"],
        sqlite_where=sa.text("state = 'waiting'"),
        postgresql_where=sa.text("state = 'waiting'"),
    )


def downgrade() -> None:
    op.drop_table("approvals")
    with op.batch_alter_table("agents") as agents:
        agents.drop_column("ask")
