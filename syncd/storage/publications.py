"""Where papers were published: which are due a lookup, what is known, what a lookup writes.

The record of issue 33.  ``Publications.due`` picks the papers to look up
(tracked, with an arXiv id; never looked up, due by their schedule, or whose
arXiv record changed since), with every link and notice known of them;
``apply`` writes one lookup's plan, its events and the paper's next turn in
one transaction; ``failed`` a lookup that could not be made.  Both take the
paper's turn by compare-and-set on ``publication_checks.turn``: of two
replicas that looked a paper up at once, one writes, the other writes
nothing, so nothing is announced twice.  ``decide`` writes a person's
confirmation or rejection, ``review`` lists the candidates waiting for one.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.model import Event
from syncd.domain.publications import (
    KnownPublications,
    LinkState,
    Notice,
    PublicationLink,
    PublicationPlan,
    ReviewItem,
    link_key,
)
from syncd.domain.record import Record, content_hash
from syncd.domain.vocabulary import EventType, PaperStatus
from syncd.errors import NotFoundError
from syncd.storage import rows
from syncd.storage.database import Database, among, chunks, now, utc
from syncd.storage.models import DuePaper
from syncd.storage.publication_events import publish_planned
from syncd.storage.schema import (
    authors_table,
    events_table,
    paper_authors_table,
    papers_table,
    publication_checks_table,
    publication_links_table,
    publication_notices_table,
)

__all__ = ["Publications", "forget_publications"]

# What the check row keeps of a failed lookup's error.
_ERROR_CHARS = 500
# A person's decisions: the links they date.
_DECIDED = frozenset({LinkState.CONFIRMED, LinkState.REJECTED})


class Publications:
    """The publication lookups' record: due papers, known links, plans written."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def due(
        self, now: datetime, limit: int, *, arxiv_ids: Sequence[str] | None = None
    ) -> list[DuePaper]:
        """The papers to look up at ``now``, oldest due first, at most ``limit`` of them.

        With ``arxiv_ids`` (``syncd publications check ID...``): those papers,
        due or not, all of them; ``NotFoundError`` naming the ids no tracked
        paper has.
        """
        with self._db.transaction() as conn:
            query = _lookups()
            if arxiv_ids is None:
                query = query.where(_is_due(_utc(now))).order_by(_due_since(_utc(now)))
                query = query.order_by(papers_table.c.id).limit(limit)
                found = list(conn.execute(query))
            else:
                found = []
                for chunk in chunks(sorted(set(arxiv_ids))):
                    chosen = query.where(among(conn, papers_table.c.arxiv_id, chunk))
                    found += conn.execute(chosen.order_by(papers_table.c.id))
                missing = sorted(set(arxiv_ids) - {row.arxiv_id for row in found})
                if missing:
                    raise NotFoundError(f"no tracked paper with arXiv id {', '.join(missing)}")
            return _due_papers(conn, found)

    def apply(
        self,
        paper: DuePaper,
        plan: PublicationPlan,
        *,
        checked_at: datetime,
        due_at: datetime,
        searched: bool,
    ) -> list[Event] | None:
        """Write one lookup of ``paper``: the plan's links, notices and events, and when it is
        looked up next, in one transaction; the events published.

        None, writing nothing, when the paper's turn was taken since ``due``
        read it (another replica wrote its lookup).  A quiet paper's plan is
        recorded without its events.
        """
        checked_at = _utc(checked_at)
        values: dict[str, Any] = {
            "checked_at": checked_at,
            "due_at": _utc(due_at),
            "record_hash": content_hash(paper.record),
            "failures": 0,
            "last_error": None,
        }
        if searched:
            values["searched_at"] = checked_at
        with self._db.transaction() as conn:
            if not _take_turn(self._db, conn, paper, values, values):
                return None
            _write_plan(conn, paper.paper_id, plan, when=checked_at, decided=False)
            if paper.quiet:
                return []
            return publish_planned(conn, paper.paper_id, plan.events, when=now())

    def failed(self, paper: DuePaper, *, error: str, when: datetime, retry_at: datetime) -> None:
        """Record that the lookup of ``paper`` at ``when`` failed with ``error``: its links
        stay as they are, and it is looked up again at ``retry_at``.  Nothing is written when
        another replica took the paper's turn since ``due`` read it."""
        c = publication_checks_table
        # The error says when: the check row keeps only the last one.
        text = f"{_utc(when).isoformat(timespec='seconds')}: {error}"[:_ERROR_CHARS]
        values: dict[str, Any] = {
            "due_at": _utc(retry_at),
            # The record the failed lookup read: a change after it is read at the retry.
            "record_hash": content_hash(paper.record),
            "last_error": text,
        }
        with self._db.transaction() as conn:
            _take_turn(
                self._db,
                conn,
                paper,
                values | {"failures": c.c.failures + 1},
                values | {"failures": 1},
            )

    def known(self, arxiv_id_or_key: str) -> tuple[int, KnownPublications]:
        """The paper with this arXiv id or key, and every link and notice of it;
        ``NotFoundError`` when there is none."""
        p = papers_table
        with self._db.transaction() as conn:
            paper_id = conn.scalar(
                sa.select(p.c.id)
                .where(sa.or_(p.c.arxiv_id == arxiv_id_or_key, p.c.key == arxiv_id_or_key))
                .order_by(sa.case((p.c.arxiv_id == arxiv_id_or_key, 0), else_=1))
                .limit(1)
            )
            if paper_id is None:
                raise NotFoundError(f"no paper with arXiv id or key {arxiv_id_or_key!r}")
            return int(paper_id), _known(conn, [int(paper_id)])[int(paper_id)]

    def decide(self, paper_id: int, plan: PublicationPlan, *, when: datetime) -> list[Event]:
        """Write a person's confirmation or rejection of a link (``plan``), dated ``when``,
        and publish its events; ``NotFoundError`` for an unknown paper.

        The paper's turn moves on: a lookup planned before the decision
        writes nothing (``apply``) and the paper is looked up again when due.
        """
        c, p = publication_checks_table, papers_table
        with self._db.transaction() as conn:
            if conn.scalar(sa.select(p.c.id).where(p.c.id == paper_id)) is None:
                raise NotFoundError(f"no paper with id {paper_id}")
            conn.execute(c.update().where(c.c.paper_id == paper_id).values(turn=c.c.turn + 1))
            _write_plan(conn, paper_id, plan, when=_utc(when), decided=True)
            return publish_planned(conn, paper_id, plan.events, when=now())

    def review(self) -> list[ReviewItem]:
        """The candidate links waiting for a person, oldest first."""
        link, p = publication_links_table, papers_table
        query = (
            sa.select(link, p.c.key.label("paper_key"), p.c.arxiv_id, p.c.record)
            .join(p, p.c.id == link.c.paper_id)
            .where(link.c.state == LinkState.CANDIDATE)
            .order_by(link.c.found_at, link.c.id)
        )
        with self._db.transaction() as conn:
            return [
                ReviewItem(
                    paper_key=row.paper_key,
                    arxiv_id=row.arxiv_id,
                    title=Record.from_dict(row.record).title,
                    link=rows.publication_link(row),
                )
                for row in conn.execute(query)
            ]

    def standing(self) -> dict[str, int]:
        """Counts for metrics and status: links by state (every ``LinkState``), ``due``
        (papers due a lookup now) and ``failing`` (papers whose last lookup failed)."""
        link, c = publication_links_table, publication_checks_table
        counts = dict.fromkeys((state.value for state in LinkState), 0)
        by_state = sa.select(link.c.state, sa.func.count()).group_by(link.c.state)
        due = _lookups().where(_is_due(now())).subquery()
        with self._db.transaction() as conn:
            counts |= {str(state): int(n) for state, n in conn.execute(by_state)}
            counts["due"] = int(conn.scalar(sa.select(sa.func.count()).select_from(due)) or 0)
            counts["failing"] = int(
                conn.scalar(sa.select(sa.func.count()).where(c.c.failures > 0)) or 0
            )
        return counts


def forget_publications(conn: Connection, paper_ids: Sequence[int]) -> None:
    """Delete every publication row of these papers (notices, links, checks): they go."""
    tables = (publication_notices_table, publication_links_table, publication_checks_table)
    for chunk in chunks(sorted(set(paper_ids))):
        for table in tables:
            conn.execute(table.delete().where(table.c.paper_id.in_(chunk)))


def _utc(value: datetime) -> datetime:
    """``value`` in UTC, as every time is stored (SQLite compares times as text)."""
    return utc(value).astimezone(UTC)


def _lookups() -> sa.Select[Any]:
    """Papers a lookup may be for (tracked by a followed author, with an arXiv id), with
    their check row if they have one."""
    p, c, t, a = papers_table, publication_checks_table, paper_authors_table, authors_table
    tracked = (
        sa.select(t.c.paper_id)
        .join(a, a.c.id == t.c.author_id)
        .where(t.c.paper_id == p.c.id, t.c.status == PaperStatus.TRACKED)
        .where(a.c.removed_at.is_(None))
        .exists()
    )
    return (
        sa.select(
            p.c.id,
            p.c.key,
            p.c.arxiv_id,
            p.c.record,
            c.c.checked_at,
            c.c.searched_at,
            sa.func.coalesce(c.c.turn, 0).label("turn"),
            sa.func.coalesce(c.c.failures, 0).label("failures"),
        )
        .select_from(p.outerjoin(c, c.c.paper_id == p.c.id))
        .where(p.c.arxiv_id.is_not(None), tracked)
    )


def _is_due(when: datetime) -> sa.ColumnElement[bool]:
    """Never looked up, due by its schedule, or its arXiv record changed since its last
    lookup (a new doi or journal_ref is read at once)."""
    p, c = papers_table, publication_checks_table
    return sa.or_(
        c.c.paper_id.is_(None),
        c.c.due_at <= when,
        c.c.record_hash.is_(None),
        c.c.record_hash != p.c.record_hash,
    )


def _due_since(when: datetime) -> sa.ColumnElement[Any]:
    """Since when a due paper has been due: its arrival, its scheduled time, or the change
    of its record."""
    p, c = papers_table, publication_checks_table
    return sa.case(
        (c.c.paper_id.is_(None), p.c.created_at),
        (c.c.due_at <= when, c.c.due_at),
        else_=p.c.updated_at,
    )


def _due_papers(conn: Connection, found: Sequence[Any]) -> list[DuePaper]:
    """The papers of ``found`` (rows of ``_lookups``) with what is known of them."""
    ids = [int(row.id) for row in found]
    known = _known(conn, ids)
    announced = _announced(conn, [int(row.id) for row in found if row.checked_at is None])
    return [
        DuePaper(
            paper_id=row.id,
            key=row.key,
            arxiv_id=row.arxiv_id,
            record=Record.from_dict(row.record),
            known=known[row.id],
            searched_at=utc(row.searched_at) if row.searched_at is not None else None,
            turn=int(row.turn),
            failures=int(row.failures),
            quiet=row.checked_at is None and row.id not in announced,
        )
        for row in found
    ]


def _announced(conn: Connection, paper_ids: Sequence[int]) -> set[int]:
    """Those of the papers that came in announced: with a ``paper.added`` or
    ``paper.linked`` event."""
    e = events_table
    found: set[int] = set()
    for chunk in chunks(paper_ids):
        query = (
            sa.select(e.c.paper_id)
            .where(among(conn, e.c.paper_id, chunk))
            .where(e.c.type.in_([EventType.ADDED, EventType.LINKED]))
            .distinct()
        )
        found |= set(conn.scalars(query))
    return found


def _known(conn: Connection, paper_ids: Sequence[int]) -> dict[int, KnownPublications]:
    """Every link (in the order found) and recorded notice of each paper, by paper id: one
    query for the links and one for the notices, per chunk of papers."""
    link, notice = publication_links_table, publication_notices_table
    links: dict[int, list[PublicationLink]] = {i: [] for i in paper_ids}
    notices: dict[int, set[str]] = {i: set() for i in paper_ids}
    for chunk in chunks(paper_ids):
        query = sa.select(link).where(among(conn, link.c.paper_id, chunk)).order_by(link.c.id)
        for row in conn.execute(query):
            links[row.paper_id].append(rows.publication_link(row))
        query = sa.select(notice.c.paper_id, notice.c.doi).where(
            among(conn, notice.c.paper_id, chunk)
        )
        for row in conn.execute(query):
            notices[row.paper_id].add(row.doi)
    return {i: KnownPublications(tuple(links[i]), frozenset(notices[i])) for i in paper_ids}


def _take_turn(
    db: Database,
    conn: Connection,
    paper: DuePaper,
    update: dict[str, Any],
    insert: dict[str, Any],
) -> bool:
    """Move the paper's check row on to the next turn with ``update`` (a new row: ``insert``)
    if it is still at ``paper.turn``; whether it was.

    The first write of the transaction: on PostgreSQL a replica writing the
    same turn waits for this one to end, then finds the turn taken.
    """
    c = publication_checks_table
    moved = conn.execute(
        c.update()
        .where(c.c.paper_id == paper.paper_id, c.c.turn == paper.turn)
        .values(turn=c.c.turn + 1, **update)
    )
    if moved.rowcount == 1:
        return True
    if paper.turn != 0:
        return False
    row = {"paper_id": paper.paper_id, "turn": 1} | insert
    # RETURNING: psycopg reports no row count for an INSERT that may do nothing.
    statement = db.insert_ignoring_conflicts(c, "paper_id").values(row).returning(c.c.paper_id)
    return conn.execute(statement).first() is not None


def _write_plan(
    conn: Connection, paper_id: int, plan: PublicationPlan, *, when: datetime, decided: bool
) -> None:
    """Upsert the plan's links by key and insert its new notices.

    A link keeps when it was first found; ``decided``: the plan is a
    person's, who dates the links they confirm or reject.
    """
    link = publication_links_table
    ids = {
        row.key: int(row.id)
        for row in conn.execute(sa.select(link.c.key, link.c.id).where(link.c.paper_id == paper_id))
    }
    for planned in plan.links:
        values = rows.publication_link_values(planned)
        if decided and planned.state in _DECIDED:
            values["decided_at"] = when
        key = link_key(planned)
        if key in ids:
            conn.execute(link.update().where(link.c.id == ids[key]).values(values))
        else:
            row = values | {"paper_id": paper_id, "key": key, "found_at": when}
            inserted = conn.execute(link.insert().values(row).returning(link.c.id))
            ids[key] = int(inserted.scalar_one())
    _write_notices(conn, paper_id, plan.notices, ids, when=when)


def _write_notices(
    conn: Connection,
    paper_id: int,
    notices: Collection[Notice],
    link_ids: dict[str, int],
    *,
    when: datetime,
) -> None:
    """Insert notices not recorded yet, each under the link of the publication it is about."""
    n = publication_notices_table
    recorded = set(conn.scalars(sa.select(n.c.doi).where(n.c.paper_id == paper_id)))
    rows: list[dict[str, Any]] = []
    for notice in notices:
        if notice.doi in recorded:
            continue
        if notice.target_doi not in link_ids:
            raise ValueError(
                f"notice {notice.doi} is about {notice.target_doi}, which paper {paper_id}"
                " has no link to"
            )
        recorded.add(notice.doi)
        rows.append(
            {
                "paper_id": paper_id,
                "link_id": link_ids[notice.target_doi],
                "doi": notice.doi,
                "type": notice.type,
                "date": notice.date,
                "source": notice.source,
                "found_at": when,
            }
        )
    if rows:
        conn.execute(n.insert(), rows)
