"""The indexes of a subtask's parent and an agent conversation's root hold only the rows that
have one. Most topics have neither, and a full index counted them all under NULL: once the
planner had statistics (SQLite's ANALYZE, PostgreSQL's autovacuum), equality on those columns
looked unselective, and a topic's subtasks were found by walking every task of the kind index
(showing a root took time in proportion to all tasks). A partial index counts only real parents.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

INDEXES = [
    ("ix_topics_root", "root_topic_id"),
    ("ix_topics_reply", "reply_topic_id"),
]


def upgrade() -> None:
    for name, column in INDEXES:
        op.drop_index(name, "topics")
        where = sa.text(f"{column} IS NOT NULL")
        op.create_index(name, "topics", [column, "id"], sqlite_where=where, postgresql_where=where)


def downgrade() -> None:
    for name, column in INDEXES:
        op.drop_index(name, "topics")
        op.create_index(name, "topics", [column, "id"])
