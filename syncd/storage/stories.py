"""How one author's write meets the story it is about: whom it names, what it announces.

A paper is one story however many followed authors hold it (issue 32).  A
write that joins a story another author holds adds a tie; its revisions go
in only when the story lacks their record; and what it announces is what
happened to the story, not to the author's hold on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.model import PaperWrite
from syncd.domain.vocabulary import AUTHOR_EVENTS, EventType, PaperStatus
from syncd.errors import StalePlan
from syncd.storage.database import among, chunks
from syncd.storage.schema import (
    authors_table,
    deliveries_table,
    events_table,
    paper_authors_table,
    papers_table,
    revisions_table,
)

__all__ = [
    "Story",
    "WrittenPaper",
    "announced",
    "appended",
    "onto_known_stories",
    "stories",
    "tracked_names",
]


@dataclass(frozen=True, slots=True)
class WrittenPaper:
    """A write as applied: the paper's id and, if it is announced, its latest revision's id
    (appended by the write, or for a removal the last one it had).

    ``write.event_type`` is what the paper's story announces: a write whose change the
    story already had, or whose paper other authors hold, may announce less than planned
    (``announced``).  ``authors``: the followed authors its event names; ``joined``: the
    followed authors who, arriving on a story already announced, add their names to it.
    """

    write: PaperWrite
    paper_id: int
    last_revision_id: int | None
    authors: tuple[str, ...] = ()
    joined: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Story:
    """A paper as it stood before a write: its record's hash and who tracked it."""

    record_hash: str | None
    tracked: frozenset[str]


def stories(conn: Connection, paper_ids: Sequence[int]) -> dict[int, Story]:
    """Each paper's record hash and the followed authors tracking it, by paper id."""
    p = papers_table
    hashes: dict[int, str] = {}
    for chunk in chunks(sorted(set(paper_ids))):
        query = sa.select(p.c.id, p.c.record_hash).where(among(conn, p.c.id, chunk))
        hashes |= {row.id: row.record_hash for row in conn.execute(query)}
    tracked = tracked_names(conn, list(hashes))
    return {i: Story(h, frozenset(tracked.get(i, ()))) for i, h in hashes.items()}


def tracked_names(conn: Connection, paper_ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """The followed authors tracking each paper, sorted, by paper id (none: left out)."""
    t, a = paper_authors_table, authors_table
    tracked: dict[int, list[str]] = {}
    for chunk in chunks(sorted(set(paper_ids))):
        holders = (
            sa.select(t.c.paper_id, a.c.name)
            .join(a, a.c.id == t.c.author_id)
            .where(among(conn, t.c.paper_id, chunk), t.c.status == PaperStatus.TRACKED)
            .where(a.c.removed_at.is_(None))
            .order_by(a.c.name)
        )
        for row in conn.execute(holders):
            tracked.setdefault(row.paper_id, []).append(row.name)
    return {paper_id: tuple(names) for paper_id, names in tracked.items()}


def onto_known_stories(
    conn: Connection, author_id: int, writes: Sequence[PaperWrite]
) -> Sequence[PaperWrite]:
    """``writes``, a seed paper linked to an arXiv id another story holds joining that story.

    Another author found the paper first: the author's tie moves to it, with
    the seed's revisions it lacks (``_merge_seed``); the link's revision is
    then appended only if the story lacks that record too.
    """
    linking = sorted({w.arxiv_id for w in writes if w.paper_id is not None and w.arxiv_id})
    p = papers_table
    found: dict[str, tuple[int, str]] = {}
    for chunk in chunks(linking):
        query = sa.select(p.c.arxiv_id, p.c.id, p.c.record_hash).where(
            among(conn, p.c.arxiv_id, chunk)
        )
        found |= {row.arxiv_id: (row.id, row.record_hash) for row in conn.execute(query)}
    joined: list[PaperWrite] = []
    for write in writes:
        story = found.get(write.arxiv_id or "")
        if write.paper_id is None or story is None or story[0] == write.paper_id:
            joined.append(write)
            continue
        story_id, story_hash = story
        _merge_seed(conn, author_id, write.paper_id, story_id)
        key = str(conn.scalar(sa.select(p.c.key).where(p.c.id == story_id)))
        joined.append(replace(write, paper_id=story_id, key=key, read_hash=story_hash))
    return joined


def _merge_seed(conn: Connection, author_id: int, seed_id: int, story_id: int) -> None:
    """Move the author's tie from seed paper ``seed_id`` to ``story_id``, with copies of the
    seed revisions the story lacks (before its own, as seeds come first in a history); a
    seed paper no one else holds goes, its events and deliveries to the story."""
    t, r, p = paper_authors_table, revisions_table, papers_table
    conn.execute(
        t.update()
        .where(t.c.paper_id == seed_id, t.c.author_id == author_id)
        .values(paper_id=story_id)
    )
    held = set(conn.scalars(sa.select(r.c.record_hash).where(r.c.paper_id == story_id)))
    last = int(conn.scalar(sa.select(sa.func.max(r.c.seq)).where(r.c.paper_id == story_id)) or 0)
    seeds = conn.execute(sa.select(r).where(r.c.paper_id == seed_id).order_by(r.c.seq)).all()
    copies = [row for row in seeds if row.record_hash not in held]
    if copies:
        conn.execute(
            r.insert(),
            [
                {c: getattr(row, c) for c in row._fields if c != "id"}
                | {"paper_id": story_id, "seq": last + n}
                for n, row in enumerate(copies, start=1)
            ],
        )
    if conn.scalar(sa.select(sa.func.count()).where(t.c.paper_id == seed_id)):
        return
    for table in (events_table, deliveries_table):
        conn.execute(table.update().where(table.c.paper_id == seed_id).values(paper_id=story_id))
    conn.execute(r.delete().where(r.c.paper_id == seed_id))
    conn.execute(p.delete().where(p.c.id == seed_id))


def appended(write: PaperWrite, story: Story | None, hashes: Mapping[int, str]) -> bool:
    """Whether ``write``'s revisions are appended: always to a new story; to a known one
    only if it does not hold their record already, and still holds the record the plan
    read (else ``StalePlan``: another author's write changed it since)."""
    if not write.revisions:
        return False
    if story is None:
        return True
    if story.record_hash == hashes[id(write.revisions[-1].record)]:
        return False
    if story.record_hash != write.read_hash:
        raise StalePlan("another author's write changed the paper after this plan read it")
    return True


def announced(
    write: PaperWrite, paper_id: int, appended: bool, before: Story | None, after: Story
) -> WrittenPaper:
    """``write`` with what its story announces, and whom the event names.

    A story is added when its first followed author tracks it, revised when a
    revision is appended while someone tracks it, removed when its last one
    stops: another author arriving on a known paper adds a name, not a story.
    """
    event = write.event_type
    tracked_before = before.tracked if before is not None else frozenset()
    joined: frozenset[str] = frozenset()
    if event in AUTHOR_EVENTS:
        named: frozenset[str] | None = None
    elif event in (EventType.ADDED, EventType.LINKED):
        if tracked_before and appended and after.tracked:
            event = EventType.REVISED
        elif tracked_before or not after.tracked:
            event = None
            joined = after.tracked - tracked_before
        named = after.tracked
    elif event == EventType.REVISED:
        event = event if appended and after.tracked else None
        named = after.tracked
    elif event == EventType.REMOVED:
        event = event if tracked_before and not after.tracked else None
        named = tracked_before
    else:
        named = after.tracked
    shown = replace(write, event_type=event) if event != write.event_type else write
    if event is None:
        shown = replace(shown, event_kinds=(), event_changes={})
    return WrittenPaper(shown, paper_id, None, tuple(sorted(named or ())), tuple(sorted(joined)))
