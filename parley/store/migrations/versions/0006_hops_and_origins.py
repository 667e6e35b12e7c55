"""Runaway loops bounded and stoppable (issue 8.6).

- ``topics.origin_topic_id``: the root at the top of a topic's work, through subtasks, whose hop
  budget that work spends. Older subtasks keep none and count as their own origin.
- ``hop_counts``: one counter per origin and window, checked on every send, spawn and node
  question of a run.
- ``ix_topics_reply``: a topic's subtasks, for a stop that reaches everything under a root.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A nullable column with its reference. SQLite adds it in place (Alembic would copy the
    # table, which foreign keys pointing at it forbid).
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE topics ADD COLUMN origin_topic_id INTEGER REFERENCES topics (id)")
    else:
        origin = sa.Column("origin_topic_id", sa.Integer, sa.ForeignKey("topics.id"), nullable=True)
        op.add_column("topics", origin)
    op.create_index("ix_topics_reply", "topics", ["reply_topic_id"])
    op.create_table(
        "hop_counts",
        sa.Column("origin_topic_id", sa.Integer, sa.ForeignKey("topics.id"), primary_key=True),
        sa.Column("window_started_at", UTCDateTime, nullable=False),
        sa.Column("hops", sa.Integer, nullable=False),
        sa.Column("noticed_at", UTCDateTime, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("hop_counts")
    op.drop_index("ix_topics_reply", "topics")
    op.drop_column("topics", "origin_topic_id")
