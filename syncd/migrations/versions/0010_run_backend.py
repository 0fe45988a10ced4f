"""the PostgreSQL session of the process running a sync run

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 16:10:00

Issue 19: a run left "running" by a process that was killed claimed its
author's cycle until it went stale.  On PostgreSQL a run now records the
backend pid of a session its process keeps open for as long as it lives
(``syncd.storage.liveness``); a run whose session is gone is abandoned at
the next start.  Rows from before have none and go stale as they did.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("sync_runs", sa.Column("backend_pid", sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sync_runs") as batch:
        batch.drop_column("backend_pid")
