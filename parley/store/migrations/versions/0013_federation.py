"""Federation: connections to peer installations, their invites, which agents each exposes, the
frames received (for dedup), and agent conversations whose roles are parties.

- ``topics``: a role may be a peer's (``peer_role``, by name; no agent row); a conversation the
  peer started is its own root; thread IDs are unique per connection (a peer names its own);
  ``seq_sent`` / ``seq_received`` order the text of one conversation on the wire.
- ``messages.author_role``: text written by a peer's role.
- ``outbox``: a frame's connection, conversation and seq, for the federation sender's claim.

SQLite cannot change a table's constraints in place: ``topics`` is copied into its new shape
(Alembic's batch mode), foreign keys off meanwhile (``store/migrate.py`` checks them after).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

OLD_KEY = (
    "kind <> 'agent_conversation' OR (connection IS NOT NULL AND root_topic_id IS NOT NULL"
    " AND sender_agent_id IS NOT NULL AND thread_id IS NOT NULL AND pair_key IS NOT NULL)"
)
NEW_KEY = (
    "kind <> 'agent_conversation' OR (connection IS NOT NULL AND thread_id IS NOT NULL"
    " AND pair_key IS NOT NULL AND ((connection = 'local' AND root_topic_id IS NOT NULL"
    " AND sender_agent_id IS NOT NULL AND peer_role IS NULL) OR (connection <> 'local'"
    " AND sender_agent_id IS NULL AND peer_role IS NOT NULL)))"
)
# SQLite names a column's inline UNIQUE nowhere; this convention names it for the batch copy.
UNNAMED = {"uq": "uq_%(table_name)s_%(column_0_name)s"}
FRAMES_WHERE = sa.text("state = 'pending' AND connection IS NOT NULL")


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    with op.batch_alter_table("topics", naming_convention=UNNAMED) as batch:
        batch.add_column(sa.Column("peer_role", sa.String(64), nullable=True))
        batch.add_column(sa.Column("seq_sent", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("seq_received", sa.Integer, nullable=False, server_default="0"))
        batch.drop_constraint(
            "uq_topics_thread_id" if sqlite else "topics_thread_id_key", type_="unique"
        )
        batch.create_unique_constraint("uq_topics_thread", ["connection", "thread_id"])
        batch.drop_constraint("agent_conversation_key", type_="check")
        batch.create_check_constraint("agent_conversation_key", sa.text(NEW_KEY))
    op.add_column("messages", sa.Column("author_role", sa.String(128), nullable=True))
    op.add_column("outbox", sa.Column("connection", sa.String(64), nullable=True))
    op.add_column("outbox", sa.Column("thread_topic_id", sa.Integer, nullable=True))
    op.add_column("outbox", sa.Column("seq", sa.Integer, nullable=True))
    op.create_index(
        "ix_outbox_frames",
        "outbox",
        ["connection", "thread_topic_id", "seq"],
        sqlite_where=FRAMES_WHERE,
        postgresql_where=FRAMES_WHERE,
    )
    _create_tables()


def _create_tables() -> None:
    op.create_table(
        "connections",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("state", sa.String(16), nullable=False, server_default="active"),
        sa.Column("queue_limit", sa.Integer, nullable=True),
        sa.Column("issued_token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("peer_token", sa.Text, nullable=False),
        sa.Column("created_by_person_id", sa.Integer, sa.ForeignKey("people.id"), nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("last_contact_at", UTCDateTime, nullable=True),
        sa.Column("failures", sa.Integer, nullable=False, server_default="0"),
        sa.Column("retry_at", UTCDateTime, nullable=True),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.CheckConstraint("state IN ('active', 'paused', 'revoked')", name="connection_state"),
        sa.CheckConstraint("queue_limit IS NULL OR queue_limit >= 1", name="queue_limit"),
    )
    op.create_table(
        "invites",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("secret_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_by_person_id", sa.Integer, sa.ForeignKey("people.id"), nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("expires_at", UTCDateTime, nullable=False),
        sa.Column("used_at", UTCDateTime, nullable=True),
    )
    op.create_table(
        "exposures",
        sa.Column("connection_id", sa.Integer, sa.ForeignKey("connections.id"), primary_key=True),
        sa.Column("agent_id", sa.Integer, sa.ForeignKey("agents.id"), primary_key=True),
    )
    op.create_table(
        "received_frames",
        sa.Column("connection_id", sa.Integer, sa.ForeignKey("connections.id"), primary_key=True),
        sa.Column("message_id", sa.String(64), primary_key=True),
        sa.Column("verdict", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(32), nullable=True),
        sa.Column("detail", sa.Text, nullable=True),
        sa.Column("received_at", UTCDateTime, nullable=False),
    )


def downgrade() -> None:
    """Back to local agent conversations only. Those with a peer cannot be expressed without a
    party for the peer's role, and deleting them would take what is rooted in them along:
    delete the installation's peer conversations first, or keep this version."""
    peer = "SELECT count(*) FROM topics WHERE connection IS NOT NULL AND connection <> 'local'"
    if op.get_bind().execute(sa.text(peer)).scalar_one():
        raise RuntimeError("agent conversations with peers exist: cannot go back before 0013")
    for table in ("received_frames", "exposures", "invites", "connections"):
        op.drop_table(table)
    op.drop_index("ix_outbox_frames", "outbox")
    op.execute("DELETE FROM outbox WHERE connection IS NOT NULL")
    for column in ("seq", "thread_topic_id", "connection"):
        op.drop_column("outbox", column)
    op.drop_column("messages", "author_role")
    sqlite = op.get_bind().dialect.name == "sqlite"
    with op.batch_alter_table("topics") as batch:
        batch.drop_constraint("agent_conversation_key", type_="check")
        batch.create_check_constraint("agent_conversation_key", sa.text(OLD_KEY))
        batch.drop_constraint("uq_topics_thread", type_="unique")
        batch.create_unique_constraint(
            "uq_topics_thread_id" if sqlite else "topics_thread_id_key", ["thread_id"]
        )
        for column in ("seq_received", "seq_sent", "peer_role"):
            batch.drop_column(column)
