"""A run keeps the last of what its command brain's process wrote on stderr, however it ended.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A nullable column without a reference: added in place on SQLite too, no table copy.
    op.add_column("runs", sa.Column("stderr", sa.Text, nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "stderr")
