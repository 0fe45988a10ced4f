"""the last failed harvest: when, and why

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-01 23:00:00

Issue 23: the pages' status strip says how the harvester goes, as it says
how each author's cycles go; a harvest that stops with an error records
when and why in ``harvest_state``, shown until a harvest completes after it.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "harvest_state", sa.Column("last_failure_at", sa.DateTime(timezone=True), nullable=True)
    )
    op.add_column("harvest_state", sa.Column("last_error", sa.Text, nullable=True))


def downgrade() -> None:
    op.drop_column("harvest_state", "last_error")
    op.drop_column("harvest_state", "last_failure_at")
