"""``messages.a2a_sent_as``: an A2A client's text keeps the client's own id for it (its
``messageId``, under the client and the agent), unique where set. A client that sends a message
again (its connection cut before the answer, Parley killed meanwhile) is answered with the
task the first send made, and the agent does not do the work twice; the task's history shows
the client's text under the id the client gave it. ``a2a_answers``: the same for a client's
answer to its task's question (an approval it decided), which is no text of the conversation.

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None

SENT = "a2a_sent_as IS NOT NULL"


def upgrade() -> None:
    op.add_column("messages", sa.Column("a2a_sent_as", sa.String(256), nullable=True))
    op.create_index(
        "ux_messages_a2a_sent_as",
        "messages",
        ["a2a_sent_as"],
        unique=True,
        sqlite_where=sa.text(SENT),
        postgresql_where=sa.text(SENT),
    )
    op.create_table(
        "a2a_answers",
        sa.Column("sent_as", sa.String(256), primary_key=True),
        sa.Column("approval_id", sa.Integer, sa.ForeignKey("approvals.id"), nullable=False),
        sa.Column("task_message_id", sa.Integer, sa.ForeignKey("messages.id"), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("answered_at", UTCDateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("a2a_answers")
    op.drop_index("ux_messages_a2a_sent_as", "messages")
    with op.batch_alter_table("messages") as table:
        table.drop_column("a2a_sent_as")
