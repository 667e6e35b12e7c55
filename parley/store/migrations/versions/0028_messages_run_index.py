"""``ix_messages_run`` holds only messages a run took (``run_id IS NOT NULL``): every lookup by
run is ``run_id = ?``, which such an index serves, while SQLite's planner took the whole index
for the unclaimed notices' ``run_id IS NULL`` (every reply ever written has none) over
``ix_messages_unclaimed``, so that each turn's start cost as much as the store's history.

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None

TAKEN = "run_id IS NOT NULL"


def upgrade() -> None:
    op.drop_index("ix_messages_run", "messages")
    op.create_index(
        "ix_messages_run",
        "messages",
        ["run_id"],
        sqlite_where=sa.text(TAKEN),
        postgresql_where=sa.text(TAKEN),
    )


def downgrade() -> None:
    op.drop_index("ix_messages_run", "messages")
    op.create_index("ix_messages_run", "messages", ["run_id"])
