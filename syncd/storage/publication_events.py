"""A paper's publication events: stored about its story and routed like every other event.

``paper.published``, ``paper.publication_changed``, ``paper.corrected`` and
``paper.retracted`` (issue 33) are about the paper, not about whose sync
found it: each names the followed authors tracking the paper, and is filed
under the first of them to be followed (any holder when no one tracks it).
They carry no revision and come from no sync run; a reader takes the
paper's record as it stood (``events_where``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.model import Event
from syncd.domain.publications import PlannedEvent
from syncd.domain.record import Record
from syncd.domain.vocabulary import PaperStatus
from syncd.errors import NotFoundError
from syncd.storage.deliveries import insert_events, queue_deliveries
from syncd.storage.schema import authors_table, paper_authors_table, papers_table
from syncd.storage.stories import tracked_names

__all__ = ["publish_planned"]


def publish_planned(
    conn: Connection, paper_id: int, planned: Sequence[PlannedEvent], *, when: datetime
) -> list[Event]:
    """Insert the events ``planned`` about paper ``paper_id``, in order, and their outbox
    rows, inside the caller's transaction; the events as published."""
    if not planned:
        return []
    p = papers_table
    paper = conn.execute(
        sa.select(p.c.key, p.c.arxiv_id, p.c.record).where(p.c.id == paper_id)
    ).first()
    if paper is None:
        raise NotFoundError(f"no paper with id {paper_id}")
    author_id, author = _filed_under(conn, paper_id)
    names = tracked_names(conn, [paper_id]).get(paper_id) or (author,)
    event_rows: list[dict[str, Any]] = [
        {
            "type": event.type,
            "created_at": when,
            "author_id": author_id,
            "paper_id": paper_id,
            "revision_id": None,
            "sync_run_id": None,
            "kinds": [],
            "changes": dict(event.changes),
            "authors": list(names),
        }
        for event in planned
    ]
    seqs = insert_events(conn, event_rows)
    record = Record.from_dict(paper.record)
    events = [
        Event(
            seq=seq,
            id=row["id"],
            type=row["type"],
            created_at=when,
            author=author,
            paper_key=paper.key,
            arxiv_id=paper.arxiv_id,
            kinds=(),
            changes=row["changes"],
            record=record,
            authors=names,
        )
        for row, seq in zip(event_rows, seqs, strict=True)
    ]
    queue_deliveries(conn, [(event, paper_id) for event in events], when=when)
    return events


def _filed_under(conn: Connection, paper_id: int) -> tuple[int, str]:
    """The id and name of the author a paper's event is filed under: the first followed of
    those tracking it, else the first of its holders."""
    t, a = paper_authors_table, authors_table
    tracking = sa.and_(t.c.status == PaperStatus.TRACKED, a.c.removed_at.is_(None))
    row = conn.execute(
        sa.select(a.c.id, a.c.name)
        .join(t, t.c.author_id == a.c.id)
        .where(t.c.paper_id == paper_id)
        .order_by(sa.case((tracking, 0), else_=1), a.c.id)
        .limit(1)
    ).first()
    if row is None:
        raise NotFoundError(f"no author holds paper {paper_id}: its events have no one to name")
    return int(row.id), str(row.name)
