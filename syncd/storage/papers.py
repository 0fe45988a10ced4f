"""Papers and their revisions written: the record itself.

Every write works inside the caller's transaction, so a cycle's papers,
revisions and events commit together; the reads, each in a transaction of
its own, are ``syncd.storage.paper_reads``'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.author_names import name_key
from syncd.domain.model import NewRevision, PaperWrite
from syncd.domain.record import content_hash
from syncd.domain.vocabulary import PaperStatus
from syncd.errors import StalePlan
from syncd.storage.database import Database, among, chunks, now
from syncd.storage.paper_index import mark_changed, refresh_search
from syncd.storage.schema import (
    authors_table,
    paper_authors_table,
    papers_table,
    revisions_table,
)
from syncd.storage.stories import (
    Story,
    WrittenPaper,
    announced,
    appended,
    onto_known_stories,
    stories,
)

__all__ = [
    "WrittenPaper",
    "author_id",
    "claim_writes",
    "current_revision_ids",
    "last_seqs",
    "paper_select",
    "revision_row",
    "stored_keys",
    "write_papers",
]


def author_id(db: Database, conn: Connection, name: str, *, lock: bool = False) -> int:
    """The author's id, created if new; ``lock`` holds the row until the transaction ends.

    Found by ``name_key``: another spelling of the name is the same author.
    """
    key = name_key(name)
    query = sa.select(authors_table.c.id).where(authors_table.c.name_key == key)
    if lock:
        query = query.with_for_update()
    found = conn.execute(query).scalar()
    if found is None:
        conn.execute(
            db.insert_ignoring_conflicts(authors_table, "name_key").values(
                name=name, name_key=key, created_at=now()
            )
        )
        found = conn.execute(query).scalar_one()
    return int(found)


def claim_writes(conn: Connection, author_id: int, read_seq: int | None) -> None:
    """Move the author's write sequence on for an apply that writes their papers.

    With ``read_seq`` (what ``Papers.write_seqs`` said before the plan read
    the papers), only from that value: if another apply moved it since, its
    writes may already be this plan's, and ``StalePlan`` rolls this one back
    to be planned again.  One statement, so a compare-and-set on both
    databases: PostgreSQL re-checks the condition on the row a concurrent
    apply committed, SQLite runs one writer at a time.
    """
    seq = authors_table.c.write_seq
    statement = authors_table.update().where(authors_table.c.id == author_id)
    if read_seq is not None:
        statement = statement.where(seq == read_seq)
    if conn.execute(statement.values(write_seq=seq + 1)).rowcount != 1:
        raise StalePlan("another writer changed the author's papers after this plan read them")


def known_keys(conn: Connection, author_id: int) -> set[str]:
    """The keys of the author's papers."""
    p, t = papers_table, paper_authors_table
    query = sa.select(p.c.key).join(t, t.c.paper_id == p.c.id).where(t.c.author_id == author_id)
    return set(conn.scalars(query))


def stored_keys(conn: Connection, keys: Sequence[str]) -> set[str]:
    """The keys among ``keys`` of papers the record holds, whoever holds them."""
    found: set[str] = set()
    for chunk in chunks(keys):
        query = sa.select(papers_table.c.key).where(among(conn, papers_table.c.key, chunk))
        found |= set(conn.scalars(query))
    return found


def write_papers(
    conn: Connection,
    author_id: int,
    writes: Sequence[PaperWrite],
    *,
    run_id: int | None,
    when: datetime,
) -> list[WrittenPaper]:
    """Apply one author's ``writes`` with a few executemany statements, inside the caller's
    transaction.

    A paper is one story, however many authors hold it: a write for a paper
    the author does not hold yet but the record knows (by arXiv id or key)
    adds the author's tie to it; its revisions are appended only if the
    story does not hold that record already, and only to the record the plan
    read (``PaperWrite.read_hash``), else ``StalePlan``.  Ids are read back by
    unique keys rather than RETURNING, which would make SQLite insert row by row.
    """
    # Each record is hashed once, for its revision and, if latest, its paper.
    hashes = {id(r.record): content_hash(r.record) for w in writes for r in w.revisions}
    writes = onto_known_stories(conn, author_id, writes)
    known = _story_ids(conn, writes)
    before = stories(conn, [i for i in known if i is not None])
    paper_ids = _insert_stories(conn, writes, known, when, hashes)
    pairs = list(zip(writes, paper_ids, strict=True))
    new = [appended(write, before.get(paper_id), hashes) for write, paper_id in pairs]
    last_seq = last_seqs(
        conn, [paper_id for (_, paper_id), fresh in zip(pairs, new, strict=True) if fresh]
    )
    revision_rows = [
        revision_row(
            paper_id,
            last_seq.get(paper_id, 0) + offset,
            revision,
            hashes[id(revision.record)],
            run_id=run_id,
            when=when,
        )
        for (write, paper_id), fresh in zip(pairs, new, strict=True)
        if fresh
        for offset, revision in enumerate(write.revisions, start=1)
    ]
    if revision_rows:
        conn.execute(revisions_table.insert(), revision_rows)
        mark_changed(
            conn, dict.fromkeys((r["paper_id"] for r in revision_rows), when), revisions=True
        )
    _update_stories(conn, pairs, new, before, when=when, hashes=hashes, last_seq=last_seq)
    tied = _write_ties(conn, author_id, pairs, when)
    # A new record or a new holder changes what a search finds the paper by.
    refresh_search(
        conn,
        [
            paper_id
            for (_, paper_id), fresh in zip(pairs, new, strict=True)
            if fresh or paper_id in tied
        ],
    )
    after = stories(conn, [paper_id for _, paper_id in pairs])
    written = [
        announced(write, paper_id, fresh, before.get(paper_id), after[paper_id])
        for (write, paper_id), fresh in zip(pairs, new, strict=True)
    ]
    # Only announced writes need their paper's current revision: their event points
    # at it, a removal's or a return's too (the paper's last known state), so every
    # event carries the record of the paper it names.
    last_revision = current_revision_ids(conn, [w.paper_id for w in written if w.write.event_type])
    return [
        replace(w, last_revision_id=last_revision.get(w.paper_id)) if w.write.event_type else w
        for w in written
    ]


def revision_row(
    paper_id: int,
    seq: int,
    revision: NewRevision,
    record_hash: str,
    *,
    run_id: int | None,
    when: datetime,
) -> dict[str, Any]:
    """The revisions row of ``revision``, the ``seq``-th of its paper."""
    record = revision.record
    return {
        "paper_id": paper_id,
        "seq": seq,
        "observed_at": when,
        "source": revision.source,
        "version": record.version,
        "version_date": record.version_date,
        "kinds": list(revision.kinds),
        "changes": dict(revision.changes),
        "record": record.to_dict(),
        "record_hash": record_hash,
        "sync_run_id": run_id,
    }


def last_seqs(conn: Connection, paper_ids: Sequence[int]) -> dict[int, int]:
    """The seq of each paper's last revision, by paper id (papers without one left out)."""
    return _per_paper(conn, sa.func.max(revisions_table.c.seq), paper_ids)


def _story_ids(conn: Connection, writes: Sequence[PaperWrite]) -> list[int | None]:
    """Each write's paper id: its own, else the known story of its arXiv id or key."""
    p = papers_table
    arxiv_ids = [w.arxiv_id for w in writes if w.paper_id is None and w.arxiv_id]
    keys = [w.key for w in writes if w.paper_id is None]
    by_arxiv: dict[str, int] = {}
    by_key: dict[str, int] = {}
    for chunk in chunks(arxiv_ids):
        query = sa.select(p.c.arxiv_id, p.c.id).where(among(conn, p.c.arxiv_id, chunk))
        by_arxiv |= {row.arxiv_id: row.id for row in conn.execute(query)}
    for chunk in chunks(keys):
        query = sa.select(p.c.key, p.c.id).where(among(conn, p.c.key, chunk))
        by_key |= {row.key: row.id for row in conn.execute(query)}
    return [
        w.paper_id if w.paper_id is not None else by_arxiv.get(w.arxiv_id or "", by_key.get(w.key))
        for w in writes
    ]


def _insert_stories(
    conn: Connection,
    writes: Sequence[PaperWrite],
    paper_ids: Sequence[int | None],
    when: datetime,
    hashes: Mapping[int, str],
) -> list[int]:
    """Insert the papers no story holds yet; return every write's paper id, in order."""
    inserts: list[dict[str, Any]] = [
        {
            "key": write.key,
            "arxiv_id": write.arxiv_id,
            "backfill_pending": write.backfill_pending,
            "record": write.revisions[-1].record.to_dict(),
            "record_hash": hashes[id(write.revisions[-1].record)],
            "created_at": when,
            "updated_at": when,
            "changed_at": when,
        }
        for write, paper_id in zip(writes, paper_ids, strict=True)
        if paper_id is None
    ]
    if inserts:
        conn.execute(papers_table.insert(), inserts)
    new_ids = _paper_ids(conn, [row["key"] for row in inserts])
    return [
        paper_id if paper_id is not None else new_ids[w.key]
        for w, paper_id in zip(writes, paper_ids, strict=True)
    ]


def _update_stories(
    conn: Connection,
    pairs: Sequence[tuple[PaperWrite, int]],
    appended: Sequence[bool],
    before: Mapping[int, Story],
    *,
    when: datetime,
    hashes: Mapping[int, str],
    last_seq: Mapping[int, int],
) -> None:
    """Update the known papers, after their new revisions are written.

    A paper's record is its latest revision's, copied in SQL rather than
    encoded a second time: a busy cycle rewrites thousands of records.  The
    record changes only from the hash the write found (a compare-and-set:
    a concurrent author's write to the same paper makes this one stale).
    """
    p, r = papers_table, revisions_table
    latest_record = (
        sa.select(r.c.record)
        .where(r.c.paper_id == p.c.id, r.c.seq == sa.bindparam("b_seq"))
        .scalar_subquery()
    )
    by_shape: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    for (write, paper_id), new in zip(pairs, appended, strict=True):
        story = before.get(paper_id)
        if story is None:
            continue  # inserted by this write
        row: dict[str, Any] = {
            "b_id": paper_id,
            "b_arxiv_id": write.arxiv_id,  # set when a seed paper is linked
            "b_backfill": write.backfill_pending,
            "updated_at": when,
        }
        if new:
            row["record_hash"] = hashes[id(write.revisions[-1].record)]
            row["b_seq"] = last_seq.get(paper_id, 0) + len(write.revisions)
            row["b_read"] = story.record_hash
        by_shape[new].append(row)
    # executemany needs one shape per statement: with or without a new record
    for with_record, same_shape in by_shape.items():
        if not same_shape:
            continue
        values: dict[str, Any] = {
            "updated_at": sa.bindparam("updated_at"),
            "arxiv_id": sa.func.coalesce(p.c.arxiv_id, sa.bindparam("b_arxiv_id", sa.String)),
            # Only a backfill clears the flag: a later write must not drop it.
            "backfill_pending": sa.or_(
                p.c.backfill_pending, sa.bindparam("b_backfill", type_=sa.Boolean)
            ),
        }
        statement = p.update().where(p.c.id == sa.bindparam("b_id"))
        if with_record:
            values |= {"record_hash": sa.bindparam("record_hash"), "record": latest_record}
            statement = statement.where(p.c.record_hash == sa.bindparam("b_read"))
        result = conn.execute(statement.values(values), same_shape)
        if with_record and result.rowcount != len(same_shape):
            raise StalePlan("another author's write changed a paper after this plan read it")


def _write_ties(
    conn: Connection, author_id: int, pairs: Sequence[tuple[PaperWrite, int]], when: datetime
) -> set[int]:
    """Insert the author's ties to papers new to them, update the others; return the ids of
    the papers newly tied."""
    t = paper_authors_table
    held: set[int] = set()
    for chunk in chunks(sorted({paper_id for _, paper_id in pairs})):
        query = sa.select(t.c.paper_id).where(
            t.c.author_id == author_id, among(conn, t.c.paper_id, chunk)
        )
        held |= set(conn.scalars(query))
    inserts = [
        {
            "paper_id": paper_id,
            "author_id": author_id,
            "status": write.status,
            "origin": write.origin,
            "absent_syncs": write.absent_syncs,
            "candidate_reason": write.candidate_reason,
            "created_at": when,
            "updated_at": when,
        }
        for write, paper_id in pairs
        if paper_id not in held
    ]
    if inserts:
        conn.execute(t.insert(), inserts)
    tied = {paper_id for write, paper_id in pairs if paper_id not in held}
    updates = [
        {
            "b_id": paper_id,
            "status": write.status,
            "absent_syncs": write.absent_syncs,
            "b_reason": write.candidate_reason,
            "updated_at": when,
        }
        for write, paper_id in pairs
        if paper_id in held
    ]
    if not updates:
        return tied
    values: dict[str, Any] = {c: sa.bindparam(c) for c in ("status", "absent_syncs", "updated_at")}
    # Only candidates have a reason; a write without one keeps the held one's.
    values["candidate_reason"] = sa.case(
        (sa.bindparam("status") != PaperStatus.CANDIDATE, sa.null()),
        else_=sa.func.coalesce(sa.bindparam("b_reason", type_=sa.String), t.c.candidate_reason),
    )
    statement = (
        t.update()
        .where(t.c.paper_id == sa.bindparam("b_id"), t.c.author_id == author_id)
        .values(values)
    )
    conn.execute(statement, updates)
    return tied


def _paper_ids(conn: Connection, keys: Sequence[str]) -> dict[str, int]:
    ids: dict[str, int] = {}
    for chunk in chunks(keys):
        query = sa.select(papers_table.c.key, papers_table.c.id).where(
            among(conn, papers_table.c.key, chunk)
        )
        ids |= {row.key: row.id for row in conn.execute(query)}
    return ids


def current_revision_ids(conn: Connection, paper_ids: Sequence[int]) -> dict[int, int]:
    """The id of the revision holding each paper's current record, by paper id.

    The latest revision whose hash is the paper's: a version backfilled
    since is stored later but is not the paper's record.
    """
    p, r = papers_table, revisions_table
    found: dict[int, int] = {}
    for chunk in chunks(paper_ids):
        query = (
            sa.select(r.c.paper_id, sa.func.max(r.c.id))
            .join(p, sa.and_(p.c.id == r.c.paper_id, p.c.record_hash == r.c.record_hash))
            .where(r.c.paper_id.in_(chunk))
            .group_by(r.c.paper_id)
        )
        found |= {row[0]: row[1] for row in conn.execute(query)}
    return found


def _per_paper(
    conn: Connection, aggregate: sa.ColumnElement[Any], paper_ids: Sequence[int]
) -> dict[int, int]:
    """``aggregate`` over each paper's revisions, by paper id."""
    found: dict[int, int] = {}
    for chunk in chunks(paper_ids):
        query = (
            sa.select(revisions_table.c.paper_id, aggregate)
            .where(among(conn, revisions_table.c.paper_id, chunk))
            .group_by(revisions_table.c.paper_id)
        )
        found |= {row[0]: row[1] for row in conn.execute(query)}
    return found


def paper_select() -> sa.Select[Any]:
    """Papers as each author holds them: joined with the author's tie and name, as
    ``rows.paper`` reads them (one row per paper and author)."""
    p, t, a = papers_table, paper_authors_table, authors_table
    return sa.select(
        p,
        t.c.author_id,
        t.c.status,
        t.c.origin,
        t.c.absent_syncs,
        t.c.claimed,
        t.c.candidate_reason,
        a.c.name.label("author"),
    ).select_from(p.join(t, t.c.paper_id == p.c.id).join(a, a.c.id == t.c.author_id))
