"""Each node name's broker credentials, by public key: a name belongs to the key issued for it
(``parley node add``), and revoked keys are kept for the broker's revocation list.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "node_credentials",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("node", sa.String(64), nullable=False),
        sa.Column("public_key", sa.String(64), nullable=False, unique=True),
        sa.Column("issued_at", UTCDateTime, nullable=False),
        sa.Column("revoked_at", UTCDateTime, nullable=True),
    )
    live = sa.text("revoked_at IS NULL")
    op.create_index(
        "ux_node_credentials_live",
        "node_credentials",
        ["node"],
        unique=True,
        sqlite_where=live,
        postgresql_where=live,
    )


def downgrade() -> None:
    op.drop_index("ux_node_credentials_live", table_name="node_credentials")
    op.drop_table("node_credentials")
