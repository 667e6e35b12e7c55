"""A run that ended without answering its input (its node lost, the hub stopped under it) keeps
a record of that input when the text moves on to the session's next run.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "given_inputs",
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), primary_key=True),
        sa.Column("message_id", sa.Integer, sa.ForeignKey("messages.id"), primary_key=True),
    )


def downgrade() -> None:
    op.drop_table("given_inputs")
