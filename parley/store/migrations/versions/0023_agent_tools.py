"""Each agent's list of workspace tools (read, list, find, write, edit, run), by name: a new
agent and every agent hired before the list existed has the read-only ones.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agents") as agents:
        agents.add_column(
            sa.Column("tools", sa.Text, nullable=False, server_default="read,list,find")
        )


def downgrade() -> None:
    with op.batch_alter_table("agents") as agents:
        agents.drop_column("tools")
