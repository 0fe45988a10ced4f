"""index for the outbox's per-paper ordering test

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 09:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_deliveries_order",
        "deliveries",
        ["endpoint_id", "paper_id", "status", "event_seq"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_deliveries_order", table_name="deliveries")
