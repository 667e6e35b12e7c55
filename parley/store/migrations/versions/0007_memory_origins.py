"""Each memory note says where it came from (issue 8.5): ``agent_memory.run_id``, the run that
wrote it (none: a person did; its topic says where that run was working), since every member
reads an agent's memory whoever the run answered for.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A nullable column with its reference. SQLite adds it in place (Alembic would copy the
    # table, which foreign keys pointing at it forbid).
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE agent_memory ADD COLUMN run_id INTEGER REFERENCES runs (id)")
        return
    op.add_column(
        "agent_memory", sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("agent_memory", "run_id")
