"""A frame counts the times its peer had its thread sent again from an earlier seq: each such
resend waits longer, and past a few the thread is parked (see federation/sender.py).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("resends", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("resends")
