"""Followed authors: ``[[authors]]`` reconciled at start, others added and removed at run time,
and the review decisions on their candidates.

A cycle reads ``followed()`` each time, so a running daemon (every replica, on
PostgreSQL) picks up an author added or removed since the last one.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.author_names import name_key, spelled_otherwise
from syncd.domain.authors import (
    Author,
    AuthorSummary,
    FollowedAuthor,
)
from syncd.domain.basis import NEEDS_REVIEW
from syncd.domain.model import Event, SyncStanding
from syncd.domain.planner import review
from syncd.domain.vocabulary import AuthorOrigin, Decision, PaperStatus, Put, RunStatus
from syncd.errors import ConflictError, NotFoundError
from syncd.storage import rows
from syncd.storage.author_feeds import truncations
from syncd.storage.database import Database, chunks, now, utc
from syncd.storage.events import publish
from syncd.storage.groups import group_member_ids
from syncd.storage.papers import paper_select, write_papers
from syncd.storage.runs import standing_is
from syncd.storage.schema import (
    author_decisions_table,
    authors_table,
    paper_authors_table,
    papers_table,
    sync_runs_table,
)

__all__ = ["Authors"]

_DEFINING = ("orcid", "arxiv_author_id", "query", "seeds")


def _configured_elsewhere(name: str, given: str | None = None) -> ConflictError:
    spelled = "" if given in (None, name) else f" ({given!r} is the same name)"
    return ConflictError(
        f"author {name!r}{spelled} is configured in the config file ([[authors]]):"
        " change or remove it there"
    )


def _definition(row: Any) -> Author:
    """The author a row keeps (``include_ids`` and ``exclude_ids`` are the file's alone)."""
    return Author(
        name=row.name,
        origin=AuthorOrigin(row.origin),
        orcid=row.orcid,
        arxiv_author_id=row.arxiv_author_id,
        query=row.query,
        seeds=tuple(Path(seed) for seed in row.seeds or ()),
    )


def _values(definition: Author) -> dict[str, Any]:
    return {
        "orcid": definition.orcid,
        "arxiv_author_id": definition.arxiv_author_id,
        "query": definition.query,
        "seeds": [str(seed) for seed in definition.seeds],
    }


class Authors:
    """The authors table as the set of followed authors."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def reconcile(self, configured: Sequence[Author]) -> None:
        """Make the ``config`` authors match the file: upsert those in it, remove the rest.

        An author of the same name without regard to case (a run-time one, or
        one the file spelled otherwise before) becomes the configured one,
        under the file's spelling.  Removing only sets ``removed_at``:
        papers, history and events stay.
        """
        when = now()
        a = authors_table
        with self._db.transaction() as conn:
            for definition in configured:
                key = name_key(definition.name)
                values = _values(definition) | {"origin": AuthorOrigin.CONFIG, "removed_at": None}
                known = sa.select(a.c.id, a.c.name, a.c.orcid, a.c.arxiv_author_id).where(
                    a.c.name_key == key
                )
                if conn.execute(known).first() is None:
                    conn.execute(
                        self._db.insert_ignoring_conflicts(a, "name_key").values(
                            name=definition.name, name_key=key, created_at=when, **values
                        )
                    )
                row = conn.execute(known).one()
                if row.name != definition.name:
                    _check_name_free(conn, definition.name, row.name)
                    values |= {"name": definition.name}
                values |= _feed_reset(row, definition)
                conn.execute(a.update().where(a.c.id == row.id).values(values))
            names = [d.name for d in configured]
            conn.execute(
                a.update()
                .where(a.c.origin == AuthorOrigin.CONFIG, a.c.removed_at.is_(None))
                .where(a.c.name.not_in(names))
                .values(removed_at=when)
            )

    def put(self, definitions: Sequence[Author]) -> list[Put]:
        """Follow run-time authors, all or none (one transaction); what each one did.

        An author already followed with the same definition is left alone, so
        importing a file twice changes nothing.  A configured author is refused
        (``ConflictError``): it is changed in the file.  So is another spelling
        of a known author's name ("jane smith" for "Jane Smith"): one name
        without regard to case is one author.
        """
        when = now()
        a = authors_table
        done: list[Put] = []
        inserts: dict[str, dict[str, Any]] = {}
        keys = [name_key(d.name) for d in definitions]
        with self._db.transaction() as conn:
            existing = {
                row.name_key: row
                for chunk in chunks(keys)
                for row in conn.execute(sa.select(a).where(a.c.name_key.in_(chunk)))
            }
            for definition, key in zip(definitions, keys, strict=True):
                row = existing.get(key)
                values = _values(definition) | {"origin": AuthorOrigin.RUNTIME, "removed_at": None}
                if row is None and key in inserts:
                    first = inserts[key]["name"]
                    raise ConflictError(f"{first!r} and {definition.name!r} are one author")
                if row is None:
                    inserts[key] = {"name": definition.name, "name_key": key, "created_at": when}
                    inserts[key] |= values
                    done.append(Put.ADDED)
                elif row.origin == AuthorOrigin.CONFIG and row.removed_at is None:
                    raise _configured_elsewhere(row.name, definition.name)
                elif row.name != definition.name:
                    raise ConflictError(spelled_otherwise(definition.name, row.name))
                elif row.removed_at is None and _definition(row) == definition:
                    done.append(Put.UNCHANGED)
                else:
                    values |= _feed_reset(row, definition)
                    conn.execute(a.update().where(a.c.id == row.id).values(values))
                    done.append(Put.UPDATED)
            if inserts:
                conn.execute(a.insert(), list(inserts.values()))  # one executemany for a file
        return done

    def remove(self, name: str) -> None:
        """Stop following a run-time author; its papers, history and events stay."""
        a = authors_table
        with self._db.transaction() as conn:
            row = _followed_row(conn, name)
            if row.origin == AuthorOrigin.CONFIG:
                raise _configured_elsewhere(row.name)
            conn.execute(a.update().where(a.c.id == row.id).values(removed_at=now()))

    def followed(self) -> list[FollowedAuthor]:
        """The authors a cycle syncs now, by name, with their review decisions."""
        a, d = authors_table, author_decisions_table
        with self._db.transaction() as conn:
            found = conn.execute(sa.select(a).where(a.c.removed_at.is_(None)).order_by(a.c.name))
            authors = {row.id: _definition(row) for row in found}
            decided: dict[int, dict[str, list[str]]] = {i: {} for i in authors}
            # Joined, not an IN list: 100,000 authors are past a statement's parameters.
            query = (
                sa.select(d.c.author_id, d.c.arxiv_id, d.c.decision)
                .join(a, a.c.id == d.c.author_id)
                .where(a.c.removed_at.is_(None))
                .order_by(d.c.arxiv_id)
            )
            for row in conn.execute(query):
                if row.author_id in decided:  # not one followed since the first read
                    decided[row.author_id].setdefault(row.decision, []).append(row.arxiv_id)
        return [
            FollowedAuthor(
                definition,
                confirmed=tuple(decided[i].get(Decision.CONFIRMED, ())),
                rejected=tuple(decided[i].get(Decision.REJECTED, ())),
            )
            for i, definition in authors.items()
        ]

    def followed_names(self) -> list[str]:
        """The names of the authors followed now, by name."""
        a = authors_table
        query = sa.select(a.c.name).where(a.c.removed_at.is_(None)).order_by(a.c.name)
        with self._db.transaction() as conn:
            return list(conn.scalars(query))

    def names(self) -> list[str]:
        """The name of every author syncd follows or has followed, by name.

        Not the duplicates migration 0016 stopped following: they hold no key,
        and another spelling of their name means the author who does.
        """
        a = authors_table
        query = sa.select(a.c.name).where(a.c.name_key.is_not(None)).order_by(a.c.name)
        with self._db.transaction() as conn:
            return list(conn.scalars(query))

    def stored_name(self, name: str) -> str:
        """The name syncd keeps for the author ``name`` names, in any spelling of it.

        ``name`` itself when an author has exactly that name (a duplicate that
        migration 0016 stopped following keeps its own); else the author of
        the same ``name_key`` ("jane smith" finds "Jane Smith"); else ``name``
        unchanged, for the caller to find nobody by.
        """
        a = authors_table
        with self._db.transaction() as conn:
            if conn.execute(sa.select(a.c.id).where(a.c.name == name)).first() is not None:
                return name
            same = conn.scalar(sa.select(a.c.name).where(a.c.name_key == name_key(name)))
        return same if same is not None else name

    def known(self, name: str) -> bool:
        """Whether syncd follows or has followed an author of that name."""
        query = sa.select(authors_table.c.id).where(authors_table.c.name == name)
        with self._db.transaction() as conn:
            return conn.execute(query).first() is not None

    def followed_now(self, name: str) -> bool:
        """Whether the author is followed (not removed)."""
        query = sa.select(authors_table.c.id).where(
            authors_table.c.name == name, authors_table.c.removed_at.is_(None)
        )
        with self._db.transaction() as conn:
            return conn.execute(query).first() is not None

    def summaries(self, name: str | None = None) -> list[AuthorSummary]:
        """Every author syncd follows or has followed (or the one named), by name."""
        query = sa.select(authors_table).order_by(authors_table.c.name)
        if name is not None:
            query = query.where(authors_table.c.name == name)
        with self._db.transaction() as conn:
            return _summaries(conn, query)

    def page(
        self,
        after: str | None,
        limit: int,
        standing: SyncStanding | None = None,
        group: str | None = None,
    ) -> list[AuthorSummary]:
        """At most ``limit`` authors by name after ``after``, as ``summaries``; given, only
        followed ones at ``standing``, in the group named ``group``."""
        with self._db.transaction() as conn:
            return _summaries(conn, _listed(after, limit, standing, group))

    def claimed_ids(self, name: str) -> set[int]:
        """The ids of the author's papers that are in their own arXiv feed."""
        t = paper_authors_table
        query = (
            sa.select(t.c.paper_id)
            .join(authors_table)
            .where(authors_table.c.name == name, t.c.claimed.is_(True))
        )
        with self._db.transaction() as conn:
            return set(conn.scalars(query))

    def decide(self, name: str, arxiv_ids: Sequence[str], decision: Decision) -> list[Event]:
        """Confirm or reject candidates of a followed author, all or none; the events published.

        Confirmed: tracked, and ``paper.added`` published (with its deliveries)
        in the same transaction, as a cycle would; a rejected paper confirmed
        is theirs again.  Rejected: "not theirs" (``rejected``) without an
        event, a decision rather than a removal; later cycles exclude it.  An
        id already decided the same way is left alone; any other id that is
        not a candidate of the author is a ``NotFoundError`` and nothing is
        written.
        """
        when = now()
        d = author_decisions_table
        with self._db.transaction() as conn:
            author = _followed_row(conn, name, lock=True)
            earlier = dict(
                conn.execute(
                    sa.select(d.c.arxiv_id, d.c.decision).where(
                        d.c.author_id == author.id, d.c.arxiv_id.in_(arxiv_ids)
                    )
                ).all()
            )
            candidates = conn.execute(
                paper_select().where(
                    paper_authors_table.c.author_id == author.id,
                    papers_table.c.arxiv_id.in_(arxiv_ids),
                    # A confirmation takes a rejection back; a rejection decides candidates.
                    paper_authors_table.c.status.in_(
                        (PaperStatus.CANDIDATE, PaperStatus.REJECTED)
                        if decision == Decision.CONFIRMED
                        else (PaperStatus.CANDIDATE,)
                    ),
                )
            )
            plan = review(name, arxiv_ids, decision, earlier, [rows.paper(c) for c in candidates])
            if plan.decided:
                conn.execute(
                    d.delete().where(d.c.author_id == author.id, d.c.arxiv_id.in_(plan.decided))
                )
                conn.execute(
                    d.insert(),
                    [
                        {"author_id": author.id, "arxiv_id": i, "decision": decision}
                        | {"decided_at": when}
                        for i in plan.decided
                    ],
                )
            if decision == Decision.REJECTED:
                t = paper_authors_table
                conn.execute(
                    t.update()
                    .where(t.c.author_id == author.id, t.c.paper_id.in_(plan.rejected))
                    .values(status=PaperStatus.REJECTED, updated_at=when)
                )
                return []
            written = write_papers(conn, author.id, plan.writes, run_id=None, when=when)
            return publish(conn, name, author.id, written, run_id=None, when=when)


def _listed(
    after: str | None, limit: int, standing: SyncStanding | None, group: str | None
) -> sa.Select[Any]:
    """The rows of ``Authors.page``."""
    a = authors_table
    query = sa.select(a).order_by(a.c.name).limit(limit)
    if after is not None:
        query = query.where(a.c.name > after)
    if standing is not None or group is not None:
        query = query.where(a.c.removed_at.is_(None))
    if standing is not None:
        query = query.where(standing_is(standing))
    if group is not None:
        query = query.where(a.c.id.in_(group_member_ids(group)))
    return query


def _summaries(conn: Connection, query: sa.Select[Any]) -> list[AuthorSummary]:
    """The authors' rows ``query`` selects, with their papers counted and cycles' ends."""
    found = conn.execute(query).all()
    ids = [row.id for row in found]
    counts = _paper_counts(conn, ids)
    runs = _run_ends(conn, ids)
    return [_summary(row, counts.get(row.id, {}), runs.get(row.id, {})) for row in found]


def _feed_reset(row: Any, definition: Author) -> dict[str, Any]:
    """What changes of the author's feed state when their identifiers change: the new id's
    feed is read at the next cycle, and what arXiv said of the old id is forgotten."""
    if (row.orcid, row.arxiv_author_id) == (definition.orcid, definition.arxiv_author_id):
        return {}
    return {"feed_fetched_at": None, "feed_unknown_id": None, "feed_unknown_since": None}


def _check_name_free(conn: Connection, name: str, current: str) -> None:
    """Refuse to rename the author ``current`` to a name another row keeps.

    Only a duplicate that migration 0016 stopped following can: it keeps its
    name, and its history under it, but no key.
    """
    query = sa.select(authors_table.c.id).where(authors_table.c.name == name)
    holder = conn.execute(query).first()
    if holder is not None:
        raise ConflictError(
            f"the name {name!r} is kept by author #{holder.id}, a duplicate no longer"
            f" followed; write it {current!r}, as the followed author is named"
        )


def _followed_row(conn: Connection, name: str, *, lock: bool = False) -> Any:
    query = sa.select(authors_table).where(
        authors_table.c.name == name, authors_table.c.removed_at.is_(None)
    )
    if lock:
        query = query.with_for_update()
    row = conn.execute(query).first()
    if row is None:
        raise NotFoundError(f"no followed author named {name!r}")
    return row


def _paper_counts(conn: Connection, author_ids: Sequence[int]) -> dict[int, dict[str, int]]:
    """Per author: papers by status, and ``claimed`` for tracked papers in their own feed."""
    p = paper_authors_table
    claimed = sa.func.sum(sa.case((p.c.claimed, 1), else_=0))
    unsure = sa.func.sum(sa.case((p.c.candidate_reason.startswith(NEEDS_REVIEW), 1), else_=0))
    query = (
        sa.select(p.c.author_id, p.c.status, sa.func.count(), claimed, unsure)
        .where(p.c.author_id.in_(author_ids))
        .group_by(p.c.author_id, p.c.status)
    )
    counts: dict[int, dict[str, int]] = {}
    for author_id, status, count, claims, unsures in conn.execute(query):
        mine = counts.setdefault(author_id, {})
        mine[status] = int(count)
        if status == PaperStatus.TRACKED:
            mine["claimed"] = int(claims or 0)
        if status == PaperStatus.CANDIDATE:
            mine[NEEDS_REVIEW] = int(unsures or 0)
    return counts


def _run_ends(conn: Connection, author_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """Per author: the last cycle's start, the last success's end, the last failure and why."""
    r = sync_runs_table
    ends: dict[int, dict[str, Any]] = {i: {} for i in author_ids}
    started = sa.select(r.c.author_id, sa.func.max(r.c.started_at)).group_by(r.c.author_id)
    for author_id, when in conn.execute(started.where(r.c.author_id.in_(author_ids))):
        ends[author_id]["started"] = utc(when)
    succeeded = (
        sa.select(r.c.author_id, sa.func.max(r.c.finished_at))
        .where(r.c.status == RunStatus.OK, r.c.author_id.in_(author_ids))
        .group_by(r.c.author_id)
    )
    for author_id, when in conn.execute(succeeded):
        ends[author_id]["success"] = utc(when)
    last_failed = (
        sa.select(sa.func.max(r.c.id))
        .where(r.c.status == RunStatus.FAILED, r.c.author_id.in_(author_ids))
        .group_by(r.c.author_id)
    )
    failures = sa.select(r.c.author_id, r.c.finished_at, r.c.started_at, r.c.error)
    for row in conn.execute(failures.where(r.c.id.in_(last_failed))):
        ends[row.author_id]["failure"] = utc(row.finished_at or row.started_at)
        ends[row.author_id]["error"] = row.error
    return ends


def _summary(row: Any, counts: dict[str, int], runs: dict[str, Any]) -> AuthorSummary:
    removed_at: datetime | None = utc(row.removed_at) if row.removed_at is not None else None
    return AuthorSummary(
        definition=_definition(row),
        removed_at=removed_at,
        tracked=counts.get(PaperStatus.TRACKED, 0),
        claimed=counts.get("claimed", 0),
        candidates=counts.get(PaperStatus.CANDIDATE, 0),
        needs_review=counts.get(NEEDS_REVIEW, 0) > 0,
        unknown_id=row.feed_unknown_id,
        unknown_id_since=utc(row.feed_unknown_since) if row.feed_unknown_since else None,
        truncated=truncations(row),
        last_started=runs.get("started"),
        last_success=runs.get("success"),
        last_failure=runs.get("failure"),
        last_error=runs.get("error"),
    )
