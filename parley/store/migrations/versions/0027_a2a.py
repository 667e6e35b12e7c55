"""A2A: the clients an owner let in (a token each, kept as its hash), the agents exposed to
them, and each client's contexts as conversations of their own (``topics.a2a_client_id``,
``a2a_context``): one per (client, agent, context), beside the one open conversation a person
has with an agent. And A2A agents as connections (``connections.kind`` 'a2a', their card),
with the tasks our roles' texts started there (``a2a_remote_tasks``).

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None

_ONE = "kind = 'conversation' AND closed_at IS NULL"
_ONE_BESIDE_A2A = f"{_ONE} AND a2a_client_id IS NULL"


def upgrade() -> None:
    op.create_table(
        "a2a_clients",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_by_person_id", sa.Integer, sa.ForeignKey("people.id"), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("removed_at", UTCDateTime, nullable=True),
    )
    op.create_table(
        "a2a_push_configs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("client_id", sa.Integer, sa.ForeignKey("a2a_clients.id"), nullable=False),
        sa.Column("message_id", sa.Integer, sa.ForeignKey("messages.id"), nullable=False),
        sa.Column("config_id", sa.String(64), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("token", sa.Text, nullable=True),
        sa.Column("auth_scheme", sa.String(64), nullable=True),
        sa.Column("auth_credentials", sa.Text, nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("done_at", UTCDateTime, nullable=True),
        sa.UniqueConstraint("client_id", "message_id", "config_id", name="uq_a2a_push_config"),
    )
    op.create_table(
        "a2a_exposures",
        sa.Column("agent_id", sa.Integer, sa.ForeignKey("agents.id"), primary_key=True),
        sa.Column("exposed_at", UTCDateTime, nullable=False),
    )
    # SQLite adds a column with its reference in place (no copy of the table).
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "ALTER TABLE topics ADD COLUMN a2a_client_id INTEGER REFERENCES a2a_clients (id)"
        )
    else:
        op.add_column(
            "topics",
            sa.Column("a2a_client_id", sa.Integer, sa.ForeignKey("a2a_clients.id"), nullable=True),
        )
    op.add_column("topics", sa.Column("a2a_context", sa.String(200), nullable=True))
    _one_conversation(_ONE_BESIDE_A2A)
    op.add_column(
        "connections", sa.Column("kind", sa.String(16), nullable=False, server_default="parley")
    )
    op.add_column("connections", sa.Column("card", sa.Text, nullable=True))
    op.create_table(
        "a2a_remote_tasks",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("connection_id", sa.Integer, sa.ForeignKey("connections.id"), nullable=False),
        sa.Column("topic_id", sa.Integer, sa.ForeignKey("topics.id"), nullable=False),
        sa.Column("remote_task_id", sa.String(200), nullable=False),
        sa.Column("frame", sa.Text, nullable=False),
        sa.Column("state", sa.String(40), nullable=False),
        sa.Column("cancel_asked", sa.Boolean, nullable=False, server_default=sa.text("false")),
        sa.Column("replies", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("deadline", UTCDateTime, nullable=False),
        sa.Column("settled_at", UTCDateTime, nullable=True),
        sa.UniqueConstraint("connection_id", "remote_task_id", name="uq_a2a_remote_task"),
    )
    op.create_index(
        "ix_a2a_remote_tasks_open",
        "a2a_remote_tasks",
        ["id"],
        sqlite_where=sa.text("settled_at IS NULL"),
        postgresql_where=sa.text("settled_at IS NULL"),
    )
    op.create_index(
        "uq_topics_a2a_context",
        "topics",
        ["a2a_client_id", "addressed_agent_id", "a2a_context"],
        unique=True,
        sqlite_where=sa.text("a2a_client_id IS NOT NULL"),
        postgresql_where=sa.text("a2a_client_id IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_table("a2a_remote_tasks")
    # An A2A agent's connection has no meaning down there: revoked, kept for its history.
    op.execute("UPDATE connections SET state = 'revoked' WHERE kind = 'a2a'")
    with op.batch_alter_table("connections") as connections:
        connections.drop_column("card")
        connections.drop_column("kind")
    op.drop_index("uq_topics_a2a_context", "topics")
    # Down there a person has one open conversation per agent: the contexts close.
    op.execute(
        "UPDATE topics SET closed_at = created_at, closed_reason = 'A2A removed'"
        " WHERE a2a_client_id IS NOT NULL AND closed_at IS NULL"
    )
    _one_conversation(_ONE)
    with op.batch_alter_table("topics") as topics:
        topics.drop_column("a2a_context")
        topics.drop_column("a2a_client_id")
    op.drop_table("a2a_push_configs")
    op.drop_table("a2a_exposures")
    op.drop_table("a2a_clients")


def _one_conversation(where: str) -> None:
    op.drop_index("uq_topics_one_conversation", "topics")
    op.create_index(
        "uq_topics_one_conversation",
        "topics",
        ["person_id", "addressed_agent_id"],
        unique=True,
        sqlite_where=sa.text(where),
        postgresql_where=sa.text(where),
    )
