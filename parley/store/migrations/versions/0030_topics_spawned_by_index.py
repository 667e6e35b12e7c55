"""``ix_topics_spawned_by``: the subtasks one run spawned, as the run inspector lists them ("runs
it set off"), found by index rather than by reading every topic (240 ms on PostgreSQL at full
scale in ``bench/web.py``, 35 ms on SQLite). Partial: most topics were spawned by no run.

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None

SPAWNED = "spawned_by_run_id IS NOT NULL"


def upgrade() -> None:
    op.create_index(
        "ix_topics_spawned_by",
        "topics",
        ["spawned_by_run_id"],
        sqlite_where=sa.text(SPAWNED),
        postgresql_where=sa.text(SPAWNED),
    )


def downgrade() -> None:
    op.drop_index("ix_topics_spawned_by", "topics")
