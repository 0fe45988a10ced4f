"""an index on events (paper_id, seq): a paper's events without a scan of the log

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01 20:00:00

A paper's feed, its page and the API's ``?paper=`` read that paper's events
newest first.  Without an index on ``paper_id`` both databases walked the
whole event log for them (issue 24); with ``(paper_id, seq)`` they read the
paper's entries in order and stop at the limit, at any size of the log.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_events_paper_seq", "events", ["paper_id", "seq"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_events_paper_seq", table_name="events")
