"""baselines from the harvest: ``authors.baseline_from``, ``harvest_state.pass_started_at``

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-04 21:30:00

Issue 34: while harvesting, a new author's baseline is a harvest pass, not a
name query.  The pass saw only records changed since its ``from`` day, kept
here (``YYYY-MM-DD``) for the author it baselined: a paper a later cycle
finds whose version is older than that day is part of the baseline, recorded
without an event.  Empty for every author from before: their baseline was a
name query's, which saw everything.

A pass covers the authors added before it began: ``pass_started_at`` is this
machine's clock before the harvest in progress read the followed authors
(arXiv's responseDate is another clock), kept so that a pass resumed by
another process covers the same authors.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("authors", sa.Column("baseline_from", sa.String(10)))
    op.add_column("harvest_state", sa.Column("pass_started_at", sa.DateTime(timezone=True)))


def downgrade() -> None:
    op.drop_column("harvest_state", "pass_started_at")
    op.drop_column("authors", "baseline_from")
