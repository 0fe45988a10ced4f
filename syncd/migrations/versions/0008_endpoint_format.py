"""endpoints say which body they take and what one message carries

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 09:00:00

Issue 12: an endpoint's ``format`` (standard, slack, discord) and its
``grouping`` (one message per event, or one per cycle).  Rows from before
are standard, one message per event: what they always were.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("endpoints") as batch:
        batch.add_column(
            sa.Column("format", sa.String(16), nullable=False, server_default="standard")
        )
        batch.add_column(
            sa.Column("grouping", sa.String(8), nullable=False, server_default="event")
        )


def downgrade() -> None:
    with op.batch_alter_table("endpoints") as batch:
        batch.drop_column("grouping")
        batch.drop_column("format")
