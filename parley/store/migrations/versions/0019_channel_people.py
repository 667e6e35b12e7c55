"""The people Parley knows in a channel conversation (each linked person who wrote there): a
binding may target only a session every one of them may read.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "channel_people",
        sa.Column("channel", sa.String(200), primary_key=True),
        sa.Column("account_id", sa.String(200), primary_key=True),
        sa.Column("conversation_id", sa.String(200), primary_key=True),
        sa.Column("person_id", sa.Integer, sa.ForeignKey("people.id"), primary_key=True),
        sa.Column("first_at", UTCDateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("channel_people")
