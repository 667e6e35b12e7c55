"""Each agent's own MCP servers, as JSON: name, command or URL, and the names of the variables
its node reads header values from (no secret is stored).

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agents") as agents:
        agents.add_column(sa.Column("mcp_servers", sa.Text, nullable=False, server_default="[]"))


def downgrade() -> None:
    with op.batch_alter_table("agents") as agents:
        agents.drop_column("mcp_servers")
