"""a cycle's digest: one delivery row per message, listing the events it carries

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04 09:00:00

Issue 12: an endpoint grouped by cycle gets one message per sync cycle.
That message is one delivery row with a ``digest_id`` (its stable message
id, ``dig_<hex>``), and ``digest_events`` lists the events it carries.  Rows
from before carry one event each and have no digest id.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ALTER TABLE, also on SQLite: rebuilding deliveries would break
    # the foreign key digest_events points at it with.
    op.add_column("deliveries", sa.Column("digest_id", sa.String(40), nullable=True))
    op.create_table(
        "digest_events",
        sa.Column("delivery_id", sa.Integer, nullable=False),
        sa.Column("event_seq", sa.Integer, nullable=False),
        sa.ForeignKeyConstraint(
            ["delivery_id"],
            ["deliveries.id"],
            name="fk_digest_events_delivery_id_deliveries",
        ),
        sa.ForeignKeyConstraint(
            ["event_seq"], ["events.seq"], name="fk_digest_events_event_seq_events"
        ),
        sa.PrimaryKeyConstraint("delivery_id", "event_seq", name="pk_digest_events"),
    )
    op.create_index("ix_digest_events_event_seq", "digest_events", ["event_seq"])


def downgrade() -> None:
    op.drop_index("ix_digest_events_event_seq", table_name="digest_events")
    op.drop_table("digest_events")
    op.drop_column("deliveries", "digest_id")
