"""Purging an author: their row, their holds on papers, and what only they held.

``syncd authors purge`` is for a mistyped or unwanted author, who would
otherwise stay on ``/authors`` as no longer followed.  A paper another
author holds stays with its history and events (an event their sync found
is filed under a remaining holder); a paper only they held goes, with its
revisions, events and deliveries and what was found of where it was
published.  An author of the config file is refused: the file would follow
them again; one followed at run time is removed first (``syncd authors
remove``), so that no cycle of theirs is under way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.vocabulary import AUTHOR_EVENTS, AuthorOrigin
from syncd.errors import ConflictError, NotFoundError
from syncd.storage.database import Database, chunks
from syncd.storage.paper_index import forget_search, refresh_search
from syncd.storage.publications import forget_publications
from syncd.storage.schema import (
    author_decisions_table,
    authors_table,
    deliveries_table,
    digest_events_table,
    events_table,
    paper_authors_table,
    papers_table,
    revisions_table,
    sync_runs_table,
)

__all__ = ["Purge", "purge_author", "purge_preview"]


@dataclass(frozen=True, slots=True)
class Purge:
    """What purging an author deletes (``deleted``: papers only they held) and keeps
    (``kept``: papers other authors hold too)."""

    name: str
    deleted: int
    kept: int


def purge_preview(db: Database, name: str) -> Purge:
    """What ``purge_author`` would do now, for the prompt; nothing is changed."""
    with db.transaction() as conn:
        author = _purgeable(conn, name)
        alone, shared = _holds(conn, author)
    return Purge(name, len(alone), len(shared))


def purge_author(db: Database, name: str) -> Purge:
    """Delete the author ``name`` (exactly as stored), their ties and the papers only they
    held, in one transaction; ``ConflictError`` for an author of the config file."""
    with db.transaction() as conn:
        author = _purgeable(conn, name)
        alone, shared = _holds(conn, author)
        e, t = events_table, paper_authors_table
        # Their events about papers others hold stay, filed under another holder.
        other = (
            sa.select(sa.func.min(t.c.author_id))
            .where(t.c.paper_id == e.c.paper_id, t.c.author_id != author)
            .scalar_subquery()
        )
        about_papers = e.c.type.not_in(sorted(AUTHOR_EVENTS))
        for chunk in chunks(shared):
            conn.execute(
                e.update()
                .where(e.c.author_id == author, e.c.paper_id.in_(chunk), about_papers)
                .values(author_id=other)
            )
        doomed = set(conn.scalars(sa.select(e.c.seq).where(e.c.author_id == author)))
        for chunk in chunks(alone):
            doomed |= set(conn.scalars(sa.select(e.c.seq).where(e.c.paper_id.in_(chunk))))
        _delete_events(conn, sorted(doomed))
        conn.execute(t.delete().where(t.c.author_id == author))
        refresh_search(conn, shared)
        forget_search(conn, alone)
        forget_publications(conn, alone)
        for chunk in chunks(alone):
            conn.execute(revisions_table.delete().where(revisions_table.c.paper_id.in_(chunk)))
            conn.execute(papers_table.delete().where(papers_table.c.id.in_(chunk)))
        _delete_runs(conn, author)
        d = author_decisions_table
        conn.execute(d.delete().where(d.c.author_id == author))
        conn.execute(authors_table.delete().where(authors_table.c.id == author))
    return Purge(name, len(alone), len(shared))


def _purgeable(conn: Connection, name: str) -> int:
    """The id of the author ``name``, locked; refused when the config file follows them."""
    a = authors_table
    row = conn.execute(
        sa.select(a.c.id, a.c.origin, a.c.removed_at).where(a.c.name == name).with_for_update()
    ).first()
    if row is None:
        raise NotFoundError(f"no author named {name!r}")
    if row.removed_at is None:
        first = (
            "remove it from the config file ([[authors]])"
            if row.origin == AuthorOrigin.CONFIG
            else f"stop following it (syncd authors remove {name!r})"
        )
        raise ConflictError(f"author {name!r} is followed: {first}, then purge")
    return int(row.id)


def _holds(conn: Connection, author: int) -> tuple[list[int], list[int]]:
    """The papers the author holds: those no one else holds, and those others hold too."""
    t = paper_authors_table
    theirs = sorted(conn.scalars(sa.select(t.c.paper_id).where(t.c.author_id == author)))
    shared: set[int] = set()
    for chunk in chunks(theirs):
        query = sa.select(t.c.paper_id).where(t.c.paper_id.in_(chunk), t.c.author_id != author)
        shared |= set(conn.scalars(query))
    return [p for p in theirs if p not in shared], sorted(shared)


def _delete_events(conn: Connection, seqs: Sequence[int]) -> None:
    """Delete events and every delivery that carries one (a digest carrying one goes whole:
    what it held can no longer be sent as it was)."""
    d, de = deliveries_table, digest_events_table
    for chunk in chunks(seqs):
        carrying = sa.select(de.c.delivery_id).where(de.c.event_seq.in_(chunk))
        deliveries = set(conn.scalars(carrying))
        deliveries |= set(conn.scalars(sa.select(d.c.id).where(d.c.event_seq.in_(chunk))))
        for ids in chunks(sorted(deliveries)):
            conn.execute(de.delete().where(de.c.delivery_id.in_(ids)))
            conn.execute(d.delete().where(d.c.id.in_(ids)))
        conn.execute(events_table.delete().where(events_table.c.seq.in_(chunk)))


def _delete_runs(conn: Connection, author: int) -> None:
    """Delete the author's sync runs; what they wrote that stays no longer names them."""
    runs = sa.select(sync_runs_table.c.id).where(sync_runs_table.c.author_id == author)
    for table in (revisions_table, events_table):
        conn.execute(table.update().where(table.c.sync_run_id.in_(runs)).values(sync_run_id=None))
    conn.execute(sync_runs_table.delete().where(sync_runs_table.c.author_id == author))
