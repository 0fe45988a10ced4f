"""every version's date, a backfill flag per paper, and the replicas' shared arXiv pacer

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 09:00:00

Issue 13: a paper's history is arXiv's own record.

* ``revisions.version_date``: arXiv's date for the revision's version (the
  entry's ``<updated>``).  Rows stored before have it in their record; it is
  copied from there, so ``syncd history`` shows it for them too.
* ``papers.backfill_pending``: a write that may have left earlier versions
  out of the history sets it, a complete backfill clears it.  Existing papers
  start cleared: ``syncd backfill`` fills their past once, on demand.
* ``arxiv_pacer``: the one row PostgreSQL replicas take their turns in.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from syncd.domain.record import parse_arxiv_time

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
_TIME = sa.DateTime(timezone=True)
_REVISIONS = sa.table(
    "revisions",
    sa.column("id", sa.Integer),
    sa.column("version", sa.Integer),
    sa.column("record", _JSON),
    sa.column("version_date", _TIME),
)
_CHUNK = 5000


def upgrade() -> None:
    # Plain ALTER TABLE, also on SQLite (3.35+ drops columns too): rebuilding
    # papers or revisions would break the foreign keys that point at them.
    op.add_column("revisions", sa.Column("version_date", _TIME, nullable=True))
    op.add_column(
        "papers",
        sa.Column("backfill_pending", sa.Boolean, nullable=False, server_default=sa.false()),
    )
    op.create_index("ix_papers_backfill_pending", "papers", ["backfill_pending"])
    pacer = op.create_table(
        "arxiv_pacer",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("last_start", _TIME, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_arxiv_pacer"),
    )
    op.bulk_insert(pacer, [{"id": 1, "last_start": None}])
    _copy_version_dates(op.get_bind())


def downgrade() -> None:
    op.drop_table("arxiv_pacer")
    op.drop_index("ix_papers_backfill_pending", "papers")
    op.drop_column("papers", "backfill_pending")
    op.drop_column("revisions", "version_date")


def _copy_version_dates(bind: sa.Connection) -> None:
    """Each arXiv revision's ``record.updated`` into ``version_date``, a chunk at a time."""
    r = _REVISIONS
    updated = r.c.record["updated"].as_string()
    last = 0
    while True:
        rows = bind.execute(
            sa.select(r.c.id, updated.label("updated"))
            .where(r.c.id > last, r.c.version.is_not(None))
            .order_by(r.c.id)
            .limit(_CHUNK)
        ).all()
        if not rows:
            return
        last = rows[-1].id
        params = [
            {"row_id": row.id, "date": moment}
            for row in rows
            if (moment := parse_arxiv_time(row.updated)) is not None
        ]
        if params:
            bind.execute(
                sa.update(r)
                .where(r.c.id == sa.bindparam("row_id"))
                .values(version_date=sa.bindparam("date", type_=_TIME)),
                params,
            )
