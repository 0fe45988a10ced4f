"""authors followed at run time, their identifiers and baseline; claims and decisions

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06 09:00:00

Issue 22: authors live in the database.  ``authors`` gains what identifies
and defines an author (ORCID iD, arXiv author id, query, seed files), where
the author comes from (``config`` for ``[[authors]]`` tables, reconciled at
start; ``runtime`` for ``syncd authors add`` and the API), when it stopped
being followed, when its first complete sync (the quiet baseline) ended, and
when its author feed was last fetched.  An author that already had a
successful cycle is dated by its first one: an upgrade announces nothing new.
``papers`` gains ``claimed`` (in the author's own arXiv feed) and the reason
a candidate is held.  ``author_decisions`` keeps review decisions.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TIME = sa.DateTime(timezone=True)
_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


# Plain ALTER TABLE ADD / DROP COLUMN, never a batch rebuild: on SQLite a rebuild of
# ``authors`` would break the foreign keys of every paper that points at it.
def _author_columns() -> tuple[sa.Column[object], ...]:
    return (
        sa.Column("orcid", sa.String(19)),
        sa.Column("arxiv_author_id", sa.String(64)),
        sa.Column("query", sa.String(2000)),
        sa.Column("seeds", _JSON, nullable=False, server_default="[]"),
        sa.Column("origin", sa.String(8), nullable=False, server_default="config"),
        sa.Column("removed_at", _TIME),
        sa.Column("baseline_at", _TIME),
        sa.Column("feed_fetched_at", _TIME),
    )


def _paper_columns() -> tuple[sa.Column[object], ...]:
    return (
        sa.Column("claimed", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("candidate_reason", sa.String(500)),
    )


def upgrade() -> None:
    for column in _author_columns():
        op.add_column("authors", column)
    for column in _paper_columns():
        op.add_column("papers", column)
    op.create_table(
        "author_decisions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("author_id", sa.Integer, nullable=False),
        sa.Column("arxiv_id", sa.String(40), nullable=False),
        sa.Column("decision", sa.String(9), nullable=False),
        sa.Column("decided_at", _TIME, nullable=False),
        sa.ForeignKeyConstraint(
            ["author_id"], ["authors.id"], name="fk_author_decisions_author_id_authors"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_author_decisions"),
        sa.UniqueConstraint("author_id", "arxiv_id", name="uq_author_decisions_author_id_arxiv_id"),
    )
    runs = sa.table(
        "sync_runs", sa.column("author_id"), sa.column("status"), sa.column("started_at")
    )
    authors = sa.table("authors", sa.column("id"), sa.column("baseline_at"))
    first_ok = (
        sa.select(sa.func.min(runs.c.started_at))
        .where(runs.c.author_id == authors.c.id, runs.c.status == "ok")
        .scalar_subquery()
    )
    op.execute(authors.update().values(baseline_at=first_ok))


def downgrade() -> None:
    op.drop_table("author_decisions")
    for column in reversed(_paper_columns()):
        op.drop_column("papers", column.name)
    for column in reversed(_author_columns()):
        op.drop_column("authors", column.name)
