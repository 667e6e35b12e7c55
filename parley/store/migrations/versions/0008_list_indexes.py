"""Indexes for the paginated lists: each page (keyset, newest first, filtered by kind, status,
person, parent, root, pair of roles, agent or state) is one range of one index on SQLite and on
PostgreSQL, instead of a scan of the table and a sort.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

# (name, table, columns); the single-column index a composite one replaces is dropped.
NEW = [
    ("ix_agent_memory_agent", "agent_memory", ["agent_id", "id"]),
    ("ix_agent_warnings_agent", "agent_warnings", ["agent_id", "id"]),
    ("ix_topics_kind", "topics", ["kind", "id"]),
    ("ix_topics_kind_status", "topics", ["kind", "status", "id"]),
    ("ix_topics_person_kind", "topics", ["person_id", "kind", "id"]),
    ("ix_topics_pair", "topics", ["pair_key", "id"]),
    ("ix_runs_agent", "runs", ["agent_id", "id"]),
    ("ix_runs_state", "runs", ["state", "id"]),
]
REPLACED = [
    ("ix_agent_memory_agent_id", "agent_memory", ["agent_id"], None),
    ("ix_agent_warnings_agent_id", "agent_warnings", ["agent_id"], None),
    ("ix_topics_root", "topics", ["root_topic_id"], ["root_topic_id", "id"]),
    ("ix_topics_reply", "topics", ["reply_topic_id"], ["reply_topic_id", "id"]),
    ("ix_runs_topic", "runs", ["topic_id"], ["topic_id", "id"]),
]


def upgrade() -> None:
    for name, table, _, wider in REPLACED:
        op.drop_index(name, table)
        if wider is not None:
            op.create_index(name, table, wider)
    for name, table, columns in NEW:
        op.create_index(name, table, columns)


def downgrade() -> None:
    for name, table, _ in NEW:
        op.drop_index(name, table)
    for name, table, columns, wider in REPLACED:
        if wider is not None:
            op.drop_index(name, table)
        op.create_index(name, table, columns)
