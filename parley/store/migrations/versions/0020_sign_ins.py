"""Sign-ins to the web page are kept, so that signing out ends one on the server (and reissuing
a token ends every one of its person's): a cookie names a sign-in, no longer a token's hash.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from parley.store.types import UTCDateTime

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sign_ins",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("secret_hash", sa.String(64), nullable=False, unique=True),
        sa.Column(
            "person_id",
            sa.Integer,
            sa.ForeignKey("people.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("signed_in_at", UTCDateTime, nullable=False),
        sa.Column("expires_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_sign_ins_person_id", "sign_ins", ["person_id"])


def downgrade() -> None:
    op.drop_index("ix_sign_ins_person_id", table_name="sign_ins")
    op.drop_table("sign_ins")
