"""Runtime: topics (conversations, tasks, agent conversations, node exchanges), sessions, runs
with their tokens, messages, and the outbox.

The foundation's ``runs`` table held only test rows (nothing created runs before the runtime),
so it is replaced rather than altered.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def _partial(where: str) -> dict[str, Any]:
    return {"sqlite_where": sa.text(where), "postgresql_where": sa.text(where)}


def upgrade() -> None:
    op.drop_index("ix_runs_open_by_agent", "runs")
    op.drop_table("runs")
    _create_topics()
    op.create_table(
        "sessions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("agent_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=False),
        sa.Column("topic_id", sa.Integer, sa.ForeignKey("topics.id"), nullable=False),
        sa.Column("brain_session_id", sa.Text, nullable=True),
        sa.Column("was_stopped", sa.Boolean, nullable=False, server_default=sa.text("false")),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("agent_id", "topic_id", name="uq_sessions_agent_topic"),
    )
    _create_runs()
    _create_messages()
    _create_outbox()


def _create_topics() -> None:
    op.create_table(
        "topics",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("kind", sa.String(24), nullable=False),
        sa.Column("agent_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=False),
        sa.Column("addressed_agent_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=True),
        sa.Column("person_id", sa.Integer, sa.ForeignKey("people.id"), nullable=True),
        sa.Column("text", sa.Text, nullable=True),
        sa.Column("status", sa.String(16), nullable=False, server_default="open"),
        sa.Column("result", sa.Text, nullable=True),
        sa.Column("spawned_by_run_id", sa.Integer, nullable=True),
        sa.Column("reply_agent_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=True),
        sa.Column("reply_topic_id", sa.Integer, sa.ForeignKey("topics.id"), nullable=True),
        sa.Column("thread", sa.Boolean, nullable=False, server_default=sa.text("false")),
        sa.Column("connection", sa.String(64), nullable=True),
        sa.Column("root_topic_id", sa.Integer, sa.ForeignKey("topics.id"), nullable=True),
        sa.Column("sender_agent_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=True),
        sa.Column("pair_key", sa.String(200), nullable=True),
        sa.Column("thread_id", sa.String(64), nullable=True, unique=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("finished_at", UTCDateTime, nullable=True),
        sa.Column("closed_at", UTCDateTime, nullable=True),
        sa.Column("closed_reason", sa.Text, nullable=True),
        sa.CheckConstraint(
            "kind IN ('conversation', 'task', 'agent_conversation', 'node')", name="topic_kind"
        ),
        sa.CheckConstraint(
            "status IN ('open', 'done', 'failed', 'cancelled', 'closed')", name="topic_status"
        ),
        sa.CheckConstraint(
            "kind <> 'conversation' OR person_id IS NOT NULL", name="conversation_person"
        ),
        sa.CheckConstraint(
            "kind <> 'agent_conversation' OR (connection IS NOT NULL AND root_topic_id IS NOT NULL"
            " AND sender_agent_id IS NOT NULL AND thread_id IS NOT NULL AND pair_key IS NOT NULL)",
            name="agent_conversation_key",
        ),
    )
    op.create_index(
        "uq_topics_one_conversation",
        "topics",
        ["person_id", "addressed_agent_id"],
        unique=True,
        **_partial("kind = 'conversation' AND closed_at IS NULL"),
    )
    op.create_index(
        "uq_topics_one_agent_conversation",
        "topics",
        ["connection", "root_topic_id", "pair_key"],
        unique=True,
        **_partial("kind = 'agent_conversation' AND closed_at IS NULL"),
    )
    op.create_index(
        "uq_topics_one_per_node", "topics", ["agent_id"], unique=True, **_partial("kind = 'node'")
    )
    op.create_index("ix_topics_root", "topics", ["root_topic_id"])


def _create_runs() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("agent_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=False),
        sa.Column("topic_id", sa.Integer, sa.ForeignKey("topics.id"), nullable=False),
        sa.Column("session_id", sa.Integer, sa.ForeignKey("sessions.id"), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text, nullable=True),
        sa.Column("output", sa.Text, nullable=True),
        sa.Column("token_hash", sa.String(64), nullable=True, unique=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("started_at", UTCDateTime, nullable=True),
        sa.Column("finished_at", UTCDateTime, nullable=True),
        sa.CheckConstraint(
            "state IN ('queued', 'running', 'finished', 'stopped', 'failed')", name="state"
        ),
    )
    op.create_index(
        "ix_runs_open_by_agent",
        "runs",
        ["agent_id"],
        **_partial("state IN ('queued', 'running')"),
    )
    op.create_index(
        "uq_runs_one_running_per_session",
        "runs",
        ["session_id"],
        unique=True,
        **_partial("state = 'running'"),
    )
    op.create_index("ix_runs_topic", "runs", ["topic_id"])


def _create_messages() -> None:
    op.create_table(
        "messages",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("topic_id", sa.Integer, sa.ForeignKey("topics.id"), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("author_person_id", sa.Integer, sa.ForeignKey("people.id"), nullable=True),
        sa.Column("author_agent_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=True),
        sa.Column("recipient_agent_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), nullable=True),
        sa.Column("from_run_id", sa.Integer, sa.ForeignKey("runs.id"), nullable=True),
        sa.Column("reply_agent_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=True),
        sa.Column("reply_topic_id", sa.Integer, sa.ForeignKey("topics.id"), nullable=True),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.CheckConstraint(
            "kind IN ('text', 'reply', 'report', 'notice', 'result')", name="message_kind"
        ),
    )
    op.create_index("ix_messages_topic", "messages", ["topic_id", "id"])
    op.create_index("ix_messages_run", "messages", ["run_id"])


def _create_outbox() -> None:
    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("idempotency_key", sa.String(200), nullable=False, unique=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("state", sa.String(16), nullable=False, server_default="pending"),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("delivered_at", UTCDateTime, nullable=True),
        sa.CheckConstraint("state IN ('pending', 'delivered', 'failed')", name="outbox_state"),
    )
    op.create_index("ix_outbox_pending", "outbox", ["id"], **_partial("state = 'pending'"))


def downgrade() -> None:
    for table in ("outbox", "messages", "runs", "sessions", "topics"):
        op.drop_table(table)
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("agent_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("finished_at", UTCDateTime, nullable=True),
    )
