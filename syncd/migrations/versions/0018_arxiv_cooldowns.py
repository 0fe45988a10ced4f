"""the cooldown of each arXiv host that throttles us

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-10 09:00:00

Issue 30, item 12: a 429 (or a 503 with Retry-After) slows every request
to that host, of every replica and every process on the database, and the
cooldown outlives a restart.  One row per host that ever throttled us
(``syncd.domain.throttle``); it starts empty.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
# 0016 and 0017 are other branches' of issue 30: whoever merges last chains this
# one after the highest of them.
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "arxiv_cooldowns",
        sa.Column("host", sa.String(300), nullable=False),
        sa.Column("step", sa.Float, nullable=False),
        sa.Column("not_before", _TIME, nullable=True),
        sa.Column("throttled_at", _TIME, nullable=True),
        sa.Column("throttles", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("host", name="pk_arxiv_cooldowns"),
    )


def downgrade() -> None:
    op.drop_table("arxiv_cooldowns")
