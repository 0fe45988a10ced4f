"""baselines from the harvest (placeholder)

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-04 21:30:00

Issue 34: filled by the harvest-baselines work, or removed.
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
