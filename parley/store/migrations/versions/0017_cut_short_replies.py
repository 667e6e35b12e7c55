"""A message can be what a turn had said when it was stopped, failed or interrupted: marked as
cut short, so that people and the agent's next turn read it as unfinished.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A column with a constant default and no reference: added in place on SQLite too.
    op.add_column(
        "messages",
        sa.Column("cut_short", sa.Boolean, nullable=False, server_default=sa.text("false")),
    )


def downgrade() -> None:
    op.drop_column("messages", "cut_short")
