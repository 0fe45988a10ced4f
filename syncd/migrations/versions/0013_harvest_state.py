"""the OAI-PMH harvest's durable progress and the claim of the replica harvesting

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01 20:00:00

Issue 23: one row (id 1) holds the ``from`` date of the next harvest, the
harvest in progress (its first page's responseDate, the set it walks, the
resumptionToken of its next page), the last complete harvest, and the claim
of the replica running it.  It starts empty: the first harvest writes it.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "harvest_state",
        sa.Column("id", sa.Integer, autoincrement=False, nullable=False),
        sa.Column("from_date", sa.String(10), nullable=True),
        sa.Column("started_response_date", sa.String(40), nullable=True),
        sa.Column("set_index", sa.Integer, nullable=False),
        sa.Column("token", sa.Text, nullable=True),
        sa.Column("pages", sa.Integer, nullable=False),
        sa.Column("records", sa.Integer, nullable=False),
        sa.Column("last_response_date", sa.String(40), nullable=True),
        sa.Column("last_success_at", _TIME, nullable=True),
        sa.Column("claimed_at", _TIME, nullable=True),
        sa.Column("backend_pid", sa.Integer, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_harvest_state"),
    )


def downgrade() -> None:
    op.drop_table("harvest_state")
