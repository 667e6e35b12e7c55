"""``a2a_sent_texts``: each text sent to an A2A agent, kept before it is sent, with the task the
agent made of it once known. A2A has no idempotency key: a text sent again after a crash
between the agent taking it and Parley recording its task would start a second task there, so
a text sent before is first looked for among the context's tasks.

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "a2a_sent_texts",
        sa.Column("connection_id", sa.Integer, sa.ForeignKey("connections.id"), nullable=False),
        sa.Column("message_id", sa.String(200), nullable=False),
        sa.Column("topic_id", sa.Integer, sa.ForeignKey("topics.id"), nullable=False),
        sa.Column("sent_at", UTCDateTime, nullable=False),
        sa.Column("remote_task_id", sa.String(200), nullable=True),
        sa.PrimaryKeyConstraint("connection_id", "message_id"),
    )


def downgrade() -> None:
    op.drop_table("a2a_sent_texts")
