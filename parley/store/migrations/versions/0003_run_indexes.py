"""Indexes for the scheduler and the queue: without them, finding a session's waiting run and
counting an agent's running ones scanned every run ever made (measured by bench/runtime.py).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_runs_state_agent", "runs", ["state", "agent_id"])
    op.create_index(
        "ix_runs_waiting_in_session",
        "runs",
        ["session_id"],
        sqlite_where=sa.text("state = 'queued'"),
        postgresql_where=sa.text("state = 'queued'"),
    )


def downgrade() -> None:
    op.drop_index("ix_runs_waiting_in_session", "runs")
    op.drop_index("ix_runs_state_agent", "runs")
