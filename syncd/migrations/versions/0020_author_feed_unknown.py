"""an author whose feed's id arXiv knows no author by: ``authors.feed_unknown_id`` and since when

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-03 16:00:00

Issue 30: arXiv answers the feed of an ORCID iD no arXiv account is linked
to (or an arXiv author id it does not know) with a 400.  That is the
author's state, kept until a read of the feed succeeds or the identifiers
change: the id arXiv refused and when it first did.  Both start empty.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _columns() -> tuple[sa.Column[object], ...]:
    return (
        sa.Column("feed_unknown_id", sa.String(64)),
        sa.Column("feed_unknown_since", sa.DateTime(timezone=True)),
    )


def upgrade() -> None:
    for column in _columns():
        op.add_column("authors", column)


def downgrade() -> None:
    for column in reversed(_columns()):
        op.drop_column("authors", column.name)
