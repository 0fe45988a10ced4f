"""indexes for lists at scale: authors' latest runs, papers' best holds

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-04 22:55:00

Issue 34: every page's status strip and ``/authors`` read each author's latest
runs by outcome, and every list of papers counts papers by their best hold;
at 100,000 authors and 1,000,000 papers both read every row.  These covering
indexes let the database answer from the index alone (measured: ``/authors``
22.7 ms to 3.3 ms, the counts 339 ms to 256 ms at that size, SQLite).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_sync_runs_author_standing",
        "sync_runs",
        ["author_id", "status", "id", "finished_at"],
    )
    op.create_index("ix_paper_authors_paper_status", "paper_authors", ["paper_id", "status"])


def downgrade() -> None:
    op.drop_index("ix_paper_authors_paper_status", table_name="paper_authors")
    op.drop_index("ix_sync_runs_author_standing", table_name="sync_runs")
