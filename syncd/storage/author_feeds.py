"""An author's own arXiv feed as stored: when it was last read, the papers it claims,
and whether arXiv knows no author by its id (issue 30); and whether the author's
last reads (name query, own feed) were cut at the cap (issue 34).

The writes run inside ``Storage.apply_cycle``'s transaction: the claims, the
feed's date and the reads' state commit with the cycle's papers or not at all.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.model import Truncation
from syncd.domain.vocabulary import ResultSource
from syncd.storage.database import Database, chunks, utc
from syncd.storage.schema import authors_table, paper_authors_table, papers_table

__all__ = ["AuthorFeeds", "record_claims", "record_reads", "record_unknown_feed", "truncations"]


class AuthorFeeds:
    """Reads of the authors' own feeds' state."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def last_read(self, authors: Collection[str]) -> dict[str, datetime]:
        """When each of ``authors`` had their own feed last read; never read are left out."""
        a = authors_table
        found: dict[str, datetime] = {}
        with self._db.transaction() as conn:
            for chunk in chunks(sorted(authors)):
                query = sa.select(a.c.name, a.c.feed_fetched_at).where(
                    a.c.name.in_(chunk), a.c.feed_fetched_at.is_not(None)
                )
                found |= {row.name: utc(row.feed_fetched_at) for row in conn.execute(query)}
        return found


def record_claims(
    conn: Connection, author_id: int, claims: Collection[str], when: datetime
) -> None:
    """The author's feed was read at ``when`` and lists ``claims``: mark those papers claimed.

    A claim is never taken back here: a paper that leaves the feed stays
    claimed (its removal is for the name query's absences to tell).
    """
    t, p = paper_authors_table, papers_table
    for chunk in chunks(sorted(claims)):
        theirs = sa.select(p.c.id).where(p.c.arxiv_id.in_(chunk))
        conn.execute(
            t.update()
            .where(t.c.author_id == author_id, t.c.paper_id.in_(theirs))
            .values(claimed=True, candidate_reason=None)
        )
    known = {"feed_unknown_id": None, "feed_unknown_since": None}
    conn.execute(
        authors_table.update()
        .where(authors_table.c.id == author_id)
        .values(feed_fetched_at=when, **known)
    )


def record_unknown_feed(conn: Connection, author_id: int, feed_id: str, when: datetime) -> None:
    """arXiv answered at ``when`` that it knows no author by ``feed_id``: the author's state.

    The feed counts as read (it is asked again a feed interval later); the
    state keeps since when arXiv has said so about this id.  Claims stay as
    they are: none is taken back.
    """
    a = authors_table
    since = sa.case((a.c.feed_unknown_id == feed_id, a.c.feed_unknown_since), else_=when)
    conn.execute(
        a.update()
        .where(a.c.id == author_id)
        .values(feed_fetched_at=when, feed_unknown_id=feed_id, feed_unknown_since=since)
    )


def record_reads(
    conn: Connection, author_id: int, reads: Mapping[ResultSource, Truncation | None]
) -> None:
    """The author's reads this cycle, by source: cut (a ``Truncation``) or whole (``None``).

    A source not read this cycle keeps what its last read said.
    """
    values: dict[str, Any] = {}
    for source, cut in reads.items():
        values[f"{source}_truncated_at"] = cut.kept if cut is not None else None
        values[f"{source}_results"] = cut.total if cut is not None else None
    if values:
        # Only when a value changes: a quiet cycle writes nothing but its run's record.
        a = authors_table
        changed = sa.or_(*(a.c[name].is_distinct_from(value) for name, value in values.items()))
        conn.execute(a.update().where(a.c.id == author_id, changed).values(values))


def truncations(row: Any) -> tuple[Truncation, ...]:
    """The author's last reads that were cut, from a row of ``authors``."""
    found: list[Truncation] = []
    for source in ResultSource:
        kept = getattr(row, f"{source}_truncated_at")
        if kept is not None:
            found.append(Truncation(source, kept, getattr(row, f"{source}_results") or kept))
    return tuple(found)
