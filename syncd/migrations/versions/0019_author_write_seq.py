"""each author's write sequence: a plan made before another writer's apply is stale

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-20 09:00:00

Issue 30: a harvest page and a cycle of the same author (another replica's
sweep, a manual ``syncd sync``, the daemon's two threads) each planned from
what they read, and the second to commit published the first one's change
again.  ``authors.write_seq`` counts the applies that wrote the author's
papers; an apply moves it on only from the value its plan read
(``syncd.storage.papers.claim_writes``), so the second writer plans again.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# A plain ADD COLUMN, never a batch rebuild: on SQLite a rebuild of ``authors``
# would break the foreign keys of every paper that points at it.
def upgrade() -> None:
    op.add_column("authors", sa.Column("write_seq", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    op.drop_column("authors", "write_seq")
