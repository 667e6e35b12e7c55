"""``messages.a2a_task_id``: an A2A client's text that continues one of its tasks names it (the
task's first text), so that the task's history and state take in every text sent to it, and
the follow-up is no task of its own. Indexed where set (a task's texts are read by it, and
most messages continue no task).

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None

CONTINUES = "a2a_task_id IS NOT NULL"


def upgrade() -> None:
    # SQLite adds a column with its reference in place (no copy of the table).
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE messages ADD COLUMN a2a_task_id INTEGER REFERENCES messages (id)")
    else:
        op.add_column(
            "messages",
            sa.Column("a2a_task_id", sa.Integer, sa.ForeignKey("messages.id"), nullable=True),
        )
    op.create_index(
        "ix_messages_a2a_task",
        "messages",
        ["a2a_task_id"],
        sqlite_where=sa.text(CONTINUES),
        postgresql_where=sa.text(CONTINUES),
    )


def downgrade() -> None:
    op.drop_index("ix_messages_a2a_task", "messages")
    # Down there each text is a task of its own, as a follow-up then reads.
    with op.batch_alter_table("messages") as table:
        table.drop_column("a2a_task_id")
