"""What keeps the lists of papers cheap to read: each paper's latest change and search text.

A list of papers is read latest change first, a page at a time: ``papers.changed_at``
(with the id to break ties, indexed together) is the time of the paper's last
event, else of its last revision, as ``Papers.latest_changes`` tells it, kept
current by every write of an event or a revision (``mark_changed``).

``papers.search_text`` is what a search looks in: the title, arXiv id and key,
the record's authors and the names of the followed authors holding the paper,
folded as ``syncd.domain.record.normalize_name`` folds (case, accents,
punctuation), kept current wherever a paper or its ties are written
(``refresh_search``).  It is indexed for substring search: on SQLite by an FTS5
table with the trigram tokenizer (``papers_search``, rowid = paper id), on
PostgreSQL by a ``pg_trgm`` GIN index.  ``matching`` turns a search's words into
the condition a list's query adds; a word shorter than a trigram is a LIKE
within what the longer words found.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.record import normalize_name
from syncd.storage.database import among, chunks
from syncd.storage.schema import authors_table, events_table, paper_authors_table, papers_table

__all__ = [
    "SEARCH_INDEX",
    "SEARCH_TABLE",
    "forget_search",
    "mark_changed",
    "matching",
    "refresh_search",
    "searched_text",
]

# SQLite's FTS5 table (and the shadow tables FTS5 keeps beside it, named after it).
SEARCH_TABLE = "papers_search"
# PostgreSQL's trigram index of papers.search_text.
SEARCH_INDEX = "ix_papers_search_text_trgm"
_TRIGRAM = 3


def searched_text(
    record: Mapping[str, Any], key: str, arxiv_id: str | None, names: Iterable[str]
) -> str:
    """The folded text a search looks in for a paper: its stored ``record`` (a dict), ``key``,
    ``arxiv_id`` and the ``names`` of the followed authors holding it."""
    words = [record.get("title") or "", arxiv_id or "", key, *names, *(record.get("authors") or ())]
    return normalize_name(" ".join(words))


def refresh_search(conn: Connection, paper_ids: Sequence[int]) -> None:
    """Recompute the search text of ``paper_ids`` from their records and ties, and index it."""
    p, t, a = papers_table, paper_authors_table, authors_table
    for chunk in chunks(sorted(set(paper_ids))):
        names: dict[int, list[str]] = {}
        tied = sa.select(t.c.paper_id, a.c.name).join(a, a.c.id == t.c.author_id)
        for row in conn.execute(tied.where(among(conn, t.c.paper_id, chunk))):
            names.setdefault(row.paper_id, []).append(row.name)
        query = sa.select(p.c.id, p.c.key, p.c.arxiv_id, p.c.record)
        texts = [
            {
                "b_id": row.id,
                "search_text": searched_text(
                    row.record, row.key, row.arxiv_id, sorted(names.get(row.id, ()))
                ),
            }
            for row in conn.execute(query.where(among(conn, p.c.id, chunk)))
        ]
        if not texts:
            continue
        statement = p.update().where(p.c.id == sa.bindparam("b_id"))
        conn.execute(statement.values(search_text=sa.bindparam("search_text")), texts)
        if conn.dialect.name == "sqlite":
            _forget_indexed(conn, chunk)
            conn.execute(
                sa.text(
                    f"INSERT INTO {SEARCH_TABLE} (rowid, search_text) VALUES (:b_id, :search_text)"
                ),
                texts,
            )


def forget_search(conn: Connection, paper_ids: Sequence[int]) -> None:
    """Drop deleted papers from the search index (PostgreSQL's goes with the rows)."""
    if conn.dialect.name == "sqlite":
        for chunk in chunks(list(paper_ids)):
            _forget_indexed(conn, chunk)


def _forget_indexed(conn: Connection, paper_ids: Sequence[int]) -> None:
    rowids = ", ".join(str(int(paper_id)) for paper_id in paper_ids)
    conn.execute(sa.text(f"DELETE FROM {SEARCH_TABLE} WHERE rowid IN ({rowids})"))


def mark_changed(conn: Connection, changes: Mapping[int, datetime], *, revisions: bool) -> None:
    """Move each paper's ``changed_at`` to when it changed (paper id → time).

    For ``revisions`` only papers without events: a paper's latest change is
    its last event, and only a paper never announced is dated by its revisions.
    """
    if not changes:
        return
    p = papers_table
    statement = p.update().where(p.c.id == sa.bindparam("b_id"))
    if revisions:
        announced = sa.select(events_table.c.seq).where(events_table.c.paper_id == p.c.id)
        statement = statement.where(~announced.exists())
    rows = [{"b_id": paper_id, "changed_at": when} for paper_id, when in changes.items()]
    conn.execute(statement.values(changed_at=sa.bindparam("changed_at")), rows)


def matching(dialect: str, words: Sequence[str]) -> sa.ColumnElement[bool]:
    """The condition on ``papers`` that every one of ``words`` (folded, as ``searched_text``)
    occurs in a paper's search text: FTS5 trigram phrases on SQLite, LIKE over the trigram
    index on PostgreSQL; a word shorter than a trigram is a LIKE on both."""
    text = papers_table.c.search_text
    conditions = [text.like(f"%{_escaped(w)}%", escape="\\") for w in words]
    if dialect != "sqlite":
        return sa.and_(*conditions)
    long = [w for w in words if len(w) >= _TRIGRAM]
    short = [c for w, c in zip(words, conditions, strict=True) if len(w) < _TRIGRAM]
    if long:
        # Each word a quoted phrase: trigram phrases match substrings.
        phrases = " AND ".join('"' + w.replace('"', '""') + '"' for w in long)
        match = sa.text(f"SELECT rowid FROM {SEARCH_TABLE} WHERE {SEARCH_TABLE} MATCH :phrases")
        found = match.bindparams(phrases=phrases).columns(sa.column("rowid", sa.Integer))
        short.insert(0, papers_table.c.id.in_(found.subquery().select()))
    return sa.and_(*short)


def _escaped(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
