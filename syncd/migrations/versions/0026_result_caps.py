"""an author's reads cut at ``[arxiv] max_results_per_author``: ``authors.*_truncated_at``

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-04 21:30:00

Issue 34: a cycle reads at most ``max_results_per_author`` of an author's
results from their name query and from their own feed.  When the last read
of one was cut, ``query_truncated_at`` / ``feed_truncated_at`` hold how many
were read and ``query_results`` / ``feed_results`` how many arXiv said it
holds; NULL when the last read was whole (or none happened yet).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _columns() -> tuple[sa.Column[object], ...]:
    return tuple(
        sa.Column(f"{source}_{what}", sa.Integer)
        for source in ("query", "feed")
        for what in ("truncated_at", "results")
    )


def upgrade() -> None:
    for column in _columns():
        op.add_column("authors", column)


def downgrade() -> None:
    for column in reversed(_columns()):
        op.drop_column("authors", column.name)
