"""papers in keyset order and searchable (placeholder)

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-04 21:30:00

Issue 34: filled by the papers-lists work.
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
