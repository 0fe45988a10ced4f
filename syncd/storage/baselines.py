"""What a cycle needs to know and write about its author beyond the papers (issue 22).

Whether the author had their baseline (the first complete sync, which
announces the author instead of each paper), when their own arXiv feed was
last read, how many papers they claimed, and whether arXiv knows no author by
the feed's id (issue 30).  The writes run inside
``Storage.apply_cycle``'s transaction: the claim, the feed's date, the
baseline's date and its ``author.added`` event (``syncd.domain.planner
.announcement``) commit with the cycle's papers or not at all.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.model import AuthorSyncState
from syncd.storage.database import Database, chunks, utc
from syncd.storage.schema import authors_table, papers_table

__all__ = [
    "Baselines",
    "followed",
    "record_baseline",
    "record_claims",
    "record_unknown_feed",
]


class Baselines:
    """Reads of an author's baseline, feed date and claims."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def baselined(self) -> set[str]:
        """The names of the authors whose baseline is done, in one query."""
        a = authors_table
        query = sa.select(a.c.name).where(a.c.baseline_at.is_not(None))
        with self._db.transaction() as conn:
            return set(conn.execute(query).scalars())

    def feeds_read(self, authors: Collection[str]) -> dict[str, datetime]:
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

    def state(self, author: str) -> AuthorSyncState:
        """The author's state; an author without a row yet has had nothing."""
        a, p = authors_table, papers_table
        claimed = (
            sa.select(sa.func.count())
            .where(p.c.author_id == a.c.id, p.c.claimed.is_(True))
            .scalar_subquery()
        )
        query = sa.select(
            a.c.baseline_at, a.c.feed_fetched_at, a.c.feed_unknown_id, claimed.label("claimed")
        ).where(a.c.name == author)
        with self._db.transaction() as conn:
            row = conn.execute(query).first()
        if row is None:
            return AuthorSyncState(baseline_at=None, feed_fetched_at=None, claimed=0)
        return AuthorSyncState(
            baseline_at=utc(row.baseline_at) if row.baseline_at else None,
            feed_fetched_at=utc(row.feed_fetched_at) if row.feed_fetched_at else None,
            claimed=int(row.claimed or 0),
            feed_unknown_id=row.feed_unknown_id,
        )


def followed(conn: Connection, author_id: int) -> bool:
    """Whether the author is still followed; the caller holds the row (``author_id(lock=True)``)
    so that a removal commits either before this cycle's writes or after them."""
    a = authors_table
    return bool(conn.scalar(sa.select(a.c.removed_at.is_(None)).where(a.c.id == author_id)))


def record_claims(
    conn: Connection, author_id: int, claims: Collection[str], when: datetime
) -> None:
    """The author's feed was read at ``when`` and lists ``claims``: mark those papers claimed.

    A claim is never taken back here: a paper that leaves the feed stays
    claimed (its removal is for the name query's absences to tell).
    """
    p = papers_table
    for chunk in chunks(sorted(claims)):
        conn.execute(
            p.update()
            .where(p.c.author_id == author_id, p.c.arxiv_id.in_(chunk))
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


def record_baseline(conn: Connection, author_id: int, when: datetime) -> None:
    """Date the author's baseline, unless it already has one."""
    a = authors_table
    conn.execute(
        a.update().where(a.c.id == author_id, a.c.baseline_at.is_(None)).values(baseline_at=when)
    )
