"""Channel accounts get what a remote channel's adapter needs: the account's secret (a Discord
bot token, set by owners, never shown back) and the account's activity (when it last heard a
user, when it last posted, webhook posts included).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("channel_accounts") as batch:
        batch.add_column(sa.Column("token", sa.Text, nullable=True))
        batch.add_column(sa.Column("last_inbound_at", UTCDateTime, nullable=True))
        batch.add_column(sa.Column("last_outbound_at", UTCDateTime, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("channel_accounts") as batch:
        batch.drop_column("last_outbound_at")
        batch.drop_column("last_inbound_at")
        batch.drop_column("token")
