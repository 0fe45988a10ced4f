"""Whether an author had their baseline (issue 22): the first complete sync, which
announces the author instead of each paper, and what a cycle reads of its author.

A cycle's state (``Baselines.state``) also says when the author's own feed was
last read, how many papers they claimed and whether arXiv knows no author by
the feed's id (those are written by ``syncd.storage.author_feeds``).  The
writes run inside ``Storage.apply_cycle``'s transaction: the baseline's date
and its ``author.added`` event (``syncd.domain.baselines.announcement``) commit
with the cycle's papers or not at all.

While harvesting, a harvest pass baselines the authors added before it
started (``awaiting``, ``baseline_unheld``): then the day the pass listed
from is kept with the date (``authors.baseline_from``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.model import AuthorSyncState
from syncd.storage.database import Database, among, chunks, now, utc
from syncd.storage.schema import authors_table, paper_authors_table

__all__ = ["Baselines", "baselined", "followed", "record_baseline"]

# Names in one UPDATE of ``baseline_unheld``: 100,000 authors in 50 statements.
_NAMES_PER_STATEMENT = 2000


class Baselines:
    """Reads of an author's baseline, feed date and claims."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def baselined(self) -> dict[str, datetime | None]:
        """The authors whose baseline is done, by name, in one query: when a harvest pass
        took it, None when their first sync did."""
        a = authors_table
        harvested = sa.case((a.c.baseline_from.is_not(None), a.c.baseline_at))
        query = sa.select(a.c.name, harvested).where(a.c.baseline_at.is_not(None))
        with self._db.transaction() as conn:
            return {name: utc(at) if at else None for name, at in conn.execute(query)}

    def awaiting(self, added_by: datetime) -> list[str]:
        """The followed authors without a baseline, added by ``added_by``, that a harvest
        pass baselines one by one: those holding papers, or with a feed of their own."""
        a, t = authors_table, paper_authors_table
        holds = sa.exists().where(t.c.author_id == a.c.id)
        feed = sa.or_(a.c.orcid.is_not(None), a.c.arxiv_author_id.is_not(None))
        query = (
            sa.select(a.c.name)
            .where(_unbaselined(added_by), sa.or_(holds, feed))
            .order_by(a.c.name)
        )
        with self._db.transaction() as conn:
            return list(conn.execute(query).scalars())

    def baseline_unheld(self, names: Sequence[str], added_by: datetime, since: date) -> int:
        """Date the baseline of each of the followed authors ``names`` added by ``added_by``
        that holds no paper and has no feed of their own, a statement per few hundred: a
        harvest pass from ``since`` named none of their papers, and there is nothing to
        announce.  Returns how many."""
        a, t = authors_table, paper_authors_table
        update = (
            a.update()
            .where(
                _unbaselined(added_by),
                ~sa.exists().where(t.c.author_id == a.c.id),
                a.c.orcid.is_(None),
                a.c.arxiv_author_id.is_(None),
            )
            .values(baseline_at=now(), baseline_from=since.isoformat())
        )
        dated = 0
        with self._db.transaction() as conn:
            for chunk in chunks(sorted(names), _NAMES_PER_STATEMENT):
                dated += conn.execute(update.where(among(conn, a.c.name, chunk))).rowcount or 0
        return dated

    def state(self, author: str) -> AuthorSyncState:
        """The author's state; an author without a row yet has had nothing."""
        a, t = authors_table, paper_authors_table
        claimed = (
            sa.select(sa.func.count())
            .where(t.c.author_id == a.c.id, t.c.claimed.is_(True))
            .scalar_subquery()
        )
        query = sa.select(
            a.c.baseline_at,
            a.c.baseline_from,
            a.c.feed_fetched_at,
            a.c.feed_unknown_id,
            claimed.label("claimed"),
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
            baseline_from=date.fromisoformat(row.baseline_from) if row.baseline_from else None,
        )


def followed(conn: Connection, author_id: int) -> bool:
    """Whether the author is still followed; the caller holds the row (``author_id(lock=True)``)
    so that a removal commits either before this cycle's writes or after them."""
    a = authors_table
    return bool(conn.scalar(sa.select(a.c.removed_at.is_(None)).where(a.c.id == author_id)))


def baselined(conn: Connection, author_id: int) -> bool:
    """Whether the author's baseline is dated already."""
    a = authors_table
    return bool(conn.scalar(sa.select(a.c.baseline_at.is_not(None)).where(a.c.id == author_id)))


def record_baseline(
    conn: Connection, author_id: int, when: datetime, since: date | None = None
) -> None:
    """Date the author's baseline, unless it already has one; ``since``: the day the harvest
    pass that took it listed from."""
    a = authors_table
    conn.execute(
        a.update()
        .where(a.c.id == author_id, a.c.baseline_at.is_(None))
        .values(baseline_at=when, baseline_from=since.isoformat() if since else None)
    )


def _unbaselined(added_by: datetime) -> sa.ColumnElement[bool]:
    """Followed, not baselined, and added by ``added_by``."""
    a = authors_table
    return sa.and_(a.c.baseline_at.is_(None), a.c.removed_at.is_(None), a.c.created_at <= added_by)
