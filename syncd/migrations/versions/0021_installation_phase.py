"""this installation's phase: where in each interval its cycles start

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-03 19:30:00

Issue 31 made the cycles' timetable one pure function that the scheduler,
the pages and ``syncd authors list`` share.  Counted from the epoch alone,
every installation would start its cycles, and ask arXiv, at the same
second.  Each database draws its own phase once, here: the replicas that
share it agree, and installations spread over the interval as they did
when cycles counted from each daemon's start.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    table = op.create_table(
        "installation",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("phase", sa.Float, nullable=False),
    )
    # A fraction in [0, 1) with 32 random bits, exact in a float on both databases.
    op.bulk_insert(table, [{"id": 1, "phase": secrets.randbits(32) / 2**32}])


def downgrade() -> None:
    op.drop_table("installation")
