"""what upstream can make us hold, capped (placeholder)

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-04 21:30:00

Issue 34: filled by the result-caps work.
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
