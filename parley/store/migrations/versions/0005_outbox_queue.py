"""The outbox becomes a delivery queue: each item is due at ``next_attempt_at`` (a transient
failure pushes it back with backoff), claimed by one worker for a lease (``claimed_by``,
``claimed_until``: a worker dying mid-send leaves it due again when the lease passes), and
remembers its last attempt. Items already there are due at once.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

PENDING = sa.text("state = 'pending'")


def upgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("next_attempt_at", UTCDateTime, nullable=True))
        batch.add_column(sa.Column("claimed_by", sa.String(64), nullable=True))
        batch.add_column(sa.Column("claimed_until", UTCDateTime, nullable=True))
        batch.add_column(sa.Column("last_attempt_at", UTCDateTime, nullable=True))
    op.execute("UPDATE outbox SET next_attempt_at = created_at")
    with op.batch_alter_table("outbox") as batch:
        batch.alter_column("next_attempt_at", existing_type=UTCDateTime, nullable=False)
    op.drop_index("ix_outbox_pending", "outbox")
    op.create_index(
        "ix_outbox_due",
        "outbox",
        ["next_attempt_at", "id"],
        sqlite_where=PENDING,
        postgresql_where=PENDING,
    )
    op.create_index("ix_outbox_state", "outbox", ["state", "id"])


def downgrade() -> None:
    op.drop_index("ix_outbox_state", "outbox")
    op.drop_index("ix_outbox_due", "outbox")
    op.create_index(
        "ix_outbox_pending", "outbox", ["id"], sqlite_where=PENDING, postgresql_where=PENDING
    )
    with op.batch_alter_table("outbox") as batch:
        for column in ("last_attempt_at", "claimed_until", "claimed_by", "next_attempt_at"):
            batch.drop_column(column)
