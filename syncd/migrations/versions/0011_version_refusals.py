"""versions arXiv keeps refusing, with their failure count and next try

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05 09:00:00

Issue 19: one earlier version arXiv refuses used to fail its author's cycle,
or its whole backfill request, every cycle.  ``version_refusals`` holds each
refused version's consecutive failures and, once it is set aside, when to
ask for it again (``syncd.domain.refusals``).  It starts empty.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "version_refusals",
        sa.Column("arxiv_id", sa.String(40), nullable=False),
        sa.Column("version", sa.Integer, nullable=False, autoincrement=False),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("last_error", sa.String(500), nullable=False),
        sa.Column("last_refused_at", _TIME, nullable=False),
        sa.Column("next_try_at", _TIME, nullable=True),
        sa.PrimaryKeyConstraint("arxiv_id", "version", name="pk_version_refusals"),
    )


def downgrade() -> None:
    op.drop_table("version_refusals")
