"""Events: published changes, each with its outbox rows, written in one transaction."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.model import Event
from syncd.domain.record import Record
from syncd.domain.vocabulary import AUTHOR_EVENTS, EventType, PaperStatus
from syncd.errors import NotFoundError
from syncd.storage import rows
from syncd.storage.database import Database, chunks, utc
from syncd.storage.deliveries import (
    active_endpoints,
    audiences,
    delivery_row,
    insert_events,
    queue_deliveries,
    takes,
)
from syncd.storage.groups import group_member_ids
from syncd.storage.models import EventQuery, EventStamp
from syncd.storage.papers import WrittenPaper
from syncd.storage.schema import (
    authors_table,
    deliveries_table,
    digest_events_table,
    events_table,
    paper_authors_table,
    papers_table,
    revisions_table,
)
from syncd.storage.stories import tracked_names

__all__ = ["Events", "events_where", "publish"]

# events.seq is a 32-bit INTEGER: a larger number names no event (and PostgreSQL would refuse it).
_MAX_SEQ = 2**31 - 1


class Events:
    """Reads of the event log."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def since(
        self, event_ref: str | None = None, authors: Collection[str] | None = None
    ) -> list[Event]:
        """Events in publication order, all or only those after event ``event_ref`` (its id
        or seq), of any author or of ``authors`` (a group's members).

        Raises ``NotFoundError`` when ``event_ref`` names no event.
        """
        with self._db.transaction() as conn:
            named = frozenset(authors) if authors is not None else None
            condition = _matching(EventQuery(authors=named))
            if event_ref is not None:
                condition = sa.and_(condition, events_table.c.seq > event_seq(conn, event_ref))
            return events_where(conn, condition)

    def page(self, query: EventQuery) -> list[Event]:
        """The events ``query`` selects, at most ``query.limit`` of them, in its order."""
        condition = _matching(query)
        if query.after is not None:
            condition = sa.and_(condition, events_table.c.seq > query.after)
        if query.before is not None:
            condition = sa.and_(condition, events_table.c.seq < query.before)
        with self._db.transaction() as conn:
            return events_where(conn, condition, limit=query.limit, newest_first=query.newest_first)

    def stamp(self, query: EventQuery) -> EventStamp:
        """The seqs of the newest ``query.limit`` events ``query``'s filter matches, and when
        the newest of them was published.

        Enough to answer a conditional GET of a feed of those events without
        loading them: read newest first along the primary key, it costs the
        same at any size of the log, and an event that commits late with an
        earlier seq still changes it if it belongs in the feed.
        """
        select = sa.select(events_table.c.seq, events_table.c.created_at)
        select = select.where(_matching(query)).order_by(events_table.c.seq.desc())
        with self._db.transaction() as conn:
            newest = conn.execute(select.limit(query.limit)).all()
        last_at = max((utc(row.created_at) for row in newest), default=None)
        return EventStamp(tuple(row.seq for row in newest), last_at)


def _matching(query: EventQuery) -> sa.ColumnElement[bool]:
    """The condition of ``query``'s filter (authors, paper, type, time), position aside."""
    conditions: list[sa.ColumnElement[bool]] = []
    if query.author is not None:
        conditions.append(_about([query.author]))
    if query.authors is not None:
        conditions.append(_about(query.authors))
    if query.group is not None:
        conditions.append(_about_ids(group_member_ids(query.group)))
    if query.published_from is not None:
        conditions.append(events_table.c.created_at >= query.published_from)
    if query.published_before is not None:
        conditions.append(events_table.c.created_at < query.published_before)
    if query.paper_id is not None:
        conditions.append(events_table.c.paper_id == query.paper_id)
        # An author's event is filed under one of the author's papers, not about it.
        conditions.append(events_table.c.type.not_in(sorted(AUTHOR_EVENTS)))
    if query.type is not None:
        conditions.append(events_table.c.type == query.type)
    return sa.and_(sa.true(), *conditions)


def _about(authors: Collection[str]) -> sa.ColumnElement[bool]:
    """Events naming any of ``authors`` (one, or a group's members: a few hundred names at
    most, one IN list): theirs (found by their sync, or about them), and a paper's while
    one of them tracks it (a co-author's sync may have found its change)."""
    a = authors_table
    return _about_ids(sa.select(a.c.id).where(a.c.name.in_(sorted(authors))))


def _about_ids(theirs: sa.Select[tuple[int]]) -> sa.ColumnElement[bool]:
    """Events naming any of the authors whose ids ``theirs`` selects (see ``_about``)."""
    e, t = events_table, paper_authors_table
    tracked = sa.select(t.c.paper_id).where(
        t.c.author_id.in_(theirs), t.c.status == PaperStatus.TRACKED
    )
    return sa.or_(
        e.c.author_id.in_(theirs),
        sa.and_(e.c.type.not_in(sorted(AUTHOR_EVENTS)), e.c.paper_id.in_(tracked)),
    )


def event_seq(conn: Connection, event_ref: str) -> int:
    """The seq of the event ``event_ref`` names, by id or by seq (the short number ``syncd
    events`` shows); ``NotFoundError`` when there is none."""
    named = events_table.c.id == event_ref
    if _is_seq(event_ref):
        named = events_table.c.seq == int(event_ref)
    seq = conn.scalar(sa.select(events_table.c.seq).where(named))
    if seq is None:
        raise NotFoundError(f"no event with id or seq {event_ref!r}")
    return int(seq)


def _is_seq(text: str) -> bool:
    """Whether ``text`` is a number an event's seq can be (ASCII digits, within INTEGER)."""
    return text.isascii() and text.isdigit() and len(text) <= 10 and int(text) <= _MAX_SEQ


def events_where(
    conn: Connection,
    condition: sa.ColumnElement[bool],
    *,
    limit: int | None = None,
    newest_first: bool = False,
) -> list[Event]:
    """The events matching ``condition``, in publication order or newest first."""
    order = events_table.c.seq.desc() if newest_first else events_table.c.seq
    query = (
        sa.select(
            events_table,
            authors_table.c.name.label("author"),
            papers_table.c.key.label("paper_key"),
            papers_table.c.arxiv_id,
            sa.case(
                # About the author: the paper it is filed under is not its subject.
                (events_table.c.type.in_(list(AUTHOR_EVENTS)), sa.null()),
                (events_table.c.revision_id.is_(None), _last_known_record()),
                else_=revisions_table.c.record,
            ).label("record"),
        )
        .join(authors_table, events_table.c.author_id == authors_table.c.id)
        .join(papers_table, events_table.c.paper_id == papers_table.c.id)
        .outerjoin(revisions_table, events_table.c.revision_id == revisions_table.c.id)
        .where(condition)
        .order_by(order)
        .limit(limit)
    )
    return [rows.event(row) for row in conn.execute(query)]


def _last_known_record() -> sa.ScalarSelect[Any]:
    """The paper's latest record stored by the event's time: what an event written without
    a revision (a removal or a return, before they pointed at one) carries."""
    r = revisions_table.alias("last_known")
    # The latest in version order: a version backfilled before the event was its past.
    arxiv_first = sa.case((r.c.version.is_(None), 0), else_=1).desc()
    return (
        sa.select(r.c.record)
        .where(r.c.paper_id == events_table.c.paper_id)
        .where(r.c.observed_at <= events_table.c.created_at)
        .order_by(arxiv_first, r.c.version.desc(), r.c.seq.desc())
        .limit(1)
        .scalar_subquery()
    )


def publish(
    conn: Connection,
    author: str,
    author_id: int,
    written: Sequence[WrittenPaper],
    *,
    run_id: int | None,
    when: datetime,
) -> list[Event]:
    """Insert the events of the announced writes and their outbox rows: one per event and
    accepting endpoint, or one digest per endpoint grouped by cycle.

    Inside the caller's transaction: an event is never without its deliveries.
    """
    _name_joiners(conn, [w for w in written if w.joined], when)
    announced = [w for w in written if w.write.event_type is not None]
    if not announced:
        return []
    named = _named(conn, announced)
    event_rows: list[dict[str, Any]] = [
        {
            "type": w.write.event_type,
            "created_at": when,
            "author_id": author_id,
            "paper_id": w.paper_id,
            "revision_id": w.last_revision_id,
            "sync_run_id": run_id,
            "kinds": list(w.write.event_kinds),
            "changes": dict(w.write.event_changes),
            # An author's event names its author; a paper's, who tracks the paper.
            "authors": list(named.get(w.paper_id) or w.authors or (author,)),
        }
        for w in announced
    ]
    seqs = insert_events(conn, event_rows)
    records = _carried_records(conn, announced)
    events = [
        Event(
            seq=seq,
            id=row["id"],
            type=row["type"],
            created_at=when,
            author=author,
            paper_key=w.write.key,
            arxiv_id=w.write.arxiv_id,
            kinds=tuple(w.write.event_kinds),
            changes=row["changes"],
            record=_carried(w, records),
            authors=tuple(row["authors"]),
        )
        for w, row, seq in zip(announced, event_rows, seqs, strict=True)
    ]
    queue_deliveries(
        conn, [(e, w.paper_id) for e, w in zip(events, announced, strict=True)], when=when
    )
    return events


def _name_joiners(conn: Connection, joined: Sequence[WrittenPaper], when: datetime) -> None:
    """Followed authors arriving on papers already announced add their names to each paper's
    announcement (its latest ``paper.added`` or ``paper.linked``), which then goes to the
    targets that take them and did not take it: one story, and no target of theirs misses
    it.  A target that took it keeps its one delivery."""
    if not joined:
        return
    e = events_table
    names = {w.paper_id: set(w.joined) for w in joined}
    latest = (
        sa.select(sa.func.max(e.c.seq))
        .where(e.c.paper_id.in_(sorted(names)))
        .where(e.c.type.in_([EventType.ADDED, EventType.LINKED]))
        .group_by(e.c.paper_id)
    )
    found = conn.execute(
        sa.select(e.c.seq, e.c.paper_id, e.c.type, e.c.kinds, e.c.authors).where(
            e.c.seq.in_(latest)
        )
    ).all()
    if not found:
        return
    endpoints = active_endpoints(conn)
    audience = audiences(conn, endpoints)
    taken = _taken(conn, [row.seq for row in found])
    delivery_rows: list[dict[str, Any]] = []
    for row in found:
        arriving = names[row.paper_id] - set(row.authors)
        if not arriving:
            continue
        authors = sorted({*row.authors, *arriving})
        conn.execute(e.update().where(e.c.seq == row.seq).values(authors=authors))
        delivery_rows += [
            delivery_row(endpoint.id, row.paper_id, row.seq, when)
            for endpoint in endpoints
            if (row.seq, endpoint.id) not in taken
            and takes(endpoint, audience[endpoint.id], row.type, row.kinds, arriving)
            and not audience[endpoint.id].takes(row.authors)
        ]
    if delivery_rows:
        conn.execute(deliveries_table.insert(), delivery_rows)


def _taken(conn: Connection, seqs: Sequence[int]) -> set[tuple[int, int]]:
    """(event seq, endpoint id) of every delivery carrying these events, digests included."""
    d, de = deliveries_table, digest_events_table
    alone = sa.select(d.c.event_seq, d.c.endpoint_id).where(d.c.event_seq.in_(seqs))
    in_digests = (
        sa.select(de.c.event_seq, d.c.endpoint_id)
        .join(d, d.c.id == de.c.delivery_id)
        .where(de.c.event_seq.in_(seqs))
    )
    return {(row[0], row[1]) for row in conn.execute(alone.union(in_digests))}


def _named(conn: Connection, announced: Sequence[WrittenPaper]) -> dict[int, tuple[str, ...]]:
    """Whom each announced paper's event names, by paper id: the followed authors tracking
    it now, so that the writes of one transaction (a harvested page's authors) are named
    together.  A removal names who tracked it (``WrittenPaper.authors``), an author's
    event its author: neither is looked up."""
    about = [
        w.paper_id
        for w in announced
        if w.write.event_type not in AUTHOR_EVENTS and w.write.event_type != EventType.REMOVED
    ]
    return tracked_names(conn, about) if about else {}


def _carried_records(conn: Connection, announced: Sequence[WrittenPaper]) -> dict[int, Record]:
    """The record each announced event carries, by paper id: its write's last revision's,
    or for a write without one (a removal, a return unchanged) the paper's last stored."""
    records = {w.paper_id: w.write.revisions[-1].record for w in announced if w.write.revisions}
    stored = [w.last_revision_id for w in announced if not w.write.revisions]
    r = revisions_table
    for chunk in chunks([i for i in stored if i is not None]):
        query = sa.select(r.c.paper_id, r.c.record).where(r.c.id.in_(chunk))
        records |= {row.paper_id: Record.from_dict(row.record) for row in conn.execute(query)}
    return records


def _carried(written: WrittenPaper, records: Mapping[int, Record]) -> Record | None:
    """The record an announced write's event carries: none for an author's event, which is
    about the author and only filed under one of their papers."""
    if written.write.event_type in AUTHOR_EVENTS:
        return None
    return records.get(written.paper_id)
