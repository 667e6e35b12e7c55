"""Foundation: people, nodes with their node sessions, agents, memory, warnings, runs.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

SESSION_FK_NAME = "fk_nodes_session_agent"


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    op.create_table(
        "people",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.CheckConstraint("role IN ('owner', 'member')", name="role"),
    )
    # SQLite cannot add a constraint later, and does not check a reference to a table that
    # does not exist yet; PostgreSQL needs the agents table first.
    session_fk = (
        [
            sa.ForeignKeyConstraint(
                ["session_agent_id", "id"],
                ["agents.id", "agents.node_id"],
                name=SESSION_FK_NAME,
                deferrable=True,
                initially="DEFERRED",
            )
        ]
        if sqlite
        else []
    )
    op.create_table(
        "nodes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("hostname", sa.String(255), nullable=False),
        sa.Column("workspace_root", sa.Text, nullable=False),
        sa.Column("engram", sa.Text, nullable=False, server_default=""),
        sa.Column("joined_at", UTCDateTime, nullable=False),
        sa.Column("last_seen_at", UTCDateTime, nullable=False),
        sa.Column("session_agent_id", sa.Integer, nullable=False, unique=True),
        *session_fk,
    )
    op.create_table(
        "agents",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("node_id", sa.Integer, sa.ForeignKey("nodes.id"), nullable=False),
        sa.Column("lifecycle", sa.String(16), nullable=False),
        sa.Column("modality", sa.String(8), nullable=False, server_default="ai"),
        sa.Column("human_person_id", sa.Integer, sa.ForeignKey("people.id"), nullable=True),
        sa.Column("engram", sa.Text, nullable=False, server_default=""),
        sa.Column("brain", sa.Text, nullable=False),
        sa.Column("max_sessions", sa.Integer, nullable=False),
        sa.Column("is_template", sa.Boolean, nullable=False, server_default=sa.text("false")),
        sa.Column("surge_threshold", sa.Integer, nullable=True),
        sa.Column("clone_lifetime_seconds", sa.Integer, nullable=True),
        sa.Column("template_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=True),
        sa.Column("expires_at", UTCDateTime, nullable=True),
        sa.Column("workspace", sa.Text, nullable=True),
        sa.Column("retired_reason", sa.Text, nullable=True),
        sa.Column("retired_at", UTCDateTime, nullable=True),
        sa.Column("hired_by_person_id", sa.Integer, sa.ForeignKey("people.id"), nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("id", "node_id", name="uq_agents_id_node"),
        sa.CheckConstraint(
            "(kind = 'node' AND lifecycle = 'inherent' AND NOT is_template AND template_id IS NULL)"
            " OR (kind = 'agent' AND lifecycle IN ('hired', 'active', 'draining', 'retired'))",
            name="kind_lifecycle",
        ),
        sa.CheckConstraint("max_sessions >= 1", name="max_sessions"),
        sa.CheckConstraint("modality IN ('ai', 'human')", name="modality"),
        sa.CheckConstraint(
            "modality = 'ai' OR human_person_id IS NOT NULL", name="human_has_person"
        ),
        sa.CheckConstraint("is_template OR surge_threshold IS NULL", name="surge_only_templates"),
    )
    op.create_index(
        "uq_agents_one_session_per_node",
        "agents",
        ["node_id"],
        unique=True,
        sqlite_where=sa.text("kind = 'node'"),
        postgresql_where=sa.text("kind = 'node'"),
    )
    op.create_index("ix_agents_lifecycle", "agents", ["lifecycle"])
    if not sqlite:
        op.create_foreign_key(
            SESSION_FK_NAME,
            "nodes",
            "agents",
            ["session_agent_id", "id"],
            ["id", "node_id"],
            deferrable=True,
            initially="DEFERRED",
        )
    op.create_table(
        "agent_memory",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("agent_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=False, index=True),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("written_by_person_id", sa.Integer, sa.ForeignKey("people.id"), nullable=True),
        sa.Column("written_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "agent_warnings",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("agent_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=False, index=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("given_by_person_id", sa.Integer, sa.ForeignKey("people.id"), nullable=True),
        sa.Column("given_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("agent_id", sa.Integer, sa.ForeignKey("agents.id"), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("finished_at", UTCDateTime, nullable=True),
        sa.CheckConstraint(
            "state IN ('queued', 'running', 'finished', 'stopped', 'failed')", name="state"
        ),
    )
    op.create_index(
        "ix_runs_open_by_agent",
        "runs",
        ["agent_id"],
        sqlite_where=sa.text("state IN ('queued', 'running')"),
        postgresql_where=sa.text("state IN ('queued', 'running')"),
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.drop_constraint(SESSION_FK_NAME, "nodes", type_="foreignkey")
    for table in ("runs", "agent_warnings", "agent_memory", "agents", "nodes", "people"):
        op.drop_table(table)
