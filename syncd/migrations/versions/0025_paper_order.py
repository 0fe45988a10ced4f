"""papers in keyset order and searchable: papers.changed_at and papers.search_text

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-04 21:30:00

Issue 34: every list of papers is read latest change first, a page at a time,
and searched in the database.  ``papers.changed_at`` is each paper's latest
change (its last event, else its last revision, else when it was stored),
indexed with the id; ``papers.search_text`` is its folded search text, filled
here by ``syncd.storage.paper_index.searched_text`` (syncd's current code,
imported rather than copied) and indexed for substring search: an FTS5 table
with the trigram tokenizer on SQLite, a ``pg_trgm`` GIN index on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from syncd.storage.paper_index import SEARCH_INDEX, SEARCH_TABLE, searched_text

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TIME = sa.DateTime(timezone=True)
_BATCH = 2000
_EPOCH = "1970-01-01 00:00:00"


def upgrade() -> None:
    # Added in place, not by a batch's copy of the table (others point at papers): SQLite
    # adds a NOT NULL column only with a default, which the UPDATE below overwrites.
    op.add_column("papers", sa.Column("changed_at", _TIME, nullable=False, server_default=_EPOCH))
    op.add_column("papers", sa.Column("search_text", sa.Text, nullable=False, server_default=""))
    op.execute(
        "UPDATE papers SET changed_at = COALESCE("
        "(SELECT max(e.created_at) FROM events e WHERE e.paper_id = papers.id), "
        "(SELECT max(r.observed_at) FROM revisions r WHERE r.paper_id = papers.id), "
        "created_at)"
    )
    conn = op.get_bind()
    if conn.dialect.name != "sqlite":
        op.alter_column("papers", "changed_at", server_default=None)
    op.create_index("ix_papers_changed_at_id", "papers", ["changed_at", "id"])
    if conn.dialect.name == "sqlite":
        op.execute(
            f"CREATE VIRTUAL TABLE {SEARCH_TABLE} USING fts5(search_text, tokenize='trigram')"
        )
    else:
        op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        op.execute(f"CREATE INDEX {SEARCH_INDEX} ON papers USING gin (search_text gin_trgm_ops)")
    _fill_search_text(conn)


def _fill_search_text(conn: sa.Connection) -> None:
    """Each paper's search text from its record, key, arXiv id and the names holding it."""
    names: dict[int, list[str]] = {}
    tied = sa.text(
        "SELECT t.paper_id, a.name FROM paper_authors t JOIN authors a ON a.id = t.author_id"
    )
    for paper_id, name in conn.execute(tied):
        names.setdefault(paper_id, []).append(name)
    papers = sa.table(
        "papers",
        sa.column("id", sa.Integer),
        sa.column("key", sa.String),
        sa.column("arxiv_id", sa.String),
        sa.column("record", sa.JSON),
        sa.column("search_text", sa.Text),
    )
    last = 0
    while True:
        query = sa.select(papers).where(papers.c.id > last).order_by(papers.c.id).limit(_BATCH)
        found = conn.execute(query).all()
        if not found:
            return
        texts = [
            {
                "b_id": row.id,
                "text": searched_text(
                    row.record, row.key, row.arxiv_id, sorted(names.get(row.id, ()))
                ),
            }
            for row in found
        ]
        update = papers.update().where(papers.c.id == sa.bindparam("b_id"))
        conn.execute(update.values(search_text=sa.bindparam("text")), texts)
        if conn.dialect.name == "sqlite":
            conn.execute(
                sa.text(f"INSERT INTO {SEARCH_TABLE} (rowid, search_text) VALUES (:b_id, :text)"),
                texts,
            )
        last = found[-1].id


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(f"DROP TABLE {SEARCH_TABLE}")
    else:
        op.execute(f"DROP INDEX {SEARCH_INDEX}")
    op.drop_index("ix_papers_changed_at_id", table_name="papers")
    op.drop_column("papers", "search_text")
    op.drop_column("papers", "changed_at")
