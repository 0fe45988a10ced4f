"""Lists of papers a page at a time: the index, an author's, a group's, the API's.

Every list is read latest change first by ``papers.changed_at`` and the id
(``syncd.storage.paper_index``), from a keyset cursor: the key of the last row
shown, so rows written between two pages never make one repeat or vanish.  A
list is of the papers some authors hold (``PaperScope``: everyone, one author,
a group's members, holds of some statuses), each once as the best of those holds
holds it (as ``Papers.all`` shows a story), narrowed by that status and by a
search (``search_terms``) done in the database.  Counts per status are SQL
aggregates; nothing here reads a whole list.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from syncd.domain.model import Paper
from syncd.domain.record import normalize_name, split_arxiv_id
from syncd.domain.vocabulary import PaperStatus
from syncd.storage.database import Database, utc
from syncd.storage.paper_index import matching
from syncd.storage.paper_reads import HOLDS, status_counts, stories_of
from syncd.storage.papers import paper_select
from syncd.storage.schema import (
    authors_table,
    group_members_table,
    groups_table,
    paper_authors_table,
    papers_table,
)

__all__ = ["PaperCursor", "PaperListQuery", "PaperLists", "PaperPage", "PaperScope", "search_terms"]

# A row's place in a list: its latest change, then its id.
PaperCursor = tuple[datetime, int]


@dataclass(frozen=True, slots=True)
class PaperScope:
    """Whose papers a list holds: everyone's, ``author``'s, the members' of ``group``
    (both: the author's when a member), by holds of one of ``statuses`` (any when None)."""

    author: str | None = None
    group: str | None = None
    statuses: tuple[PaperStatus, ...] | None = None


@dataclass(frozen=True, slots=True)
class PaperListQuery:
    """A page of a list: its ``scope``, the papers of one ``status`` in it, matching
    ``search``, after the row ``after`` names, at most ``limit``."""

    scope: PaperScope = PaperScope()
    status: PaperStatus | None = None
    search: str = ""
    after: PaperCursor | None = None
    limit: int = 50


@dataclass(frozen=True, slots=True)
class PaperPage:
    """A page of papers, latest change first, and the cursor of the page after it (None
    when it is the last)."""

    papers: list[Paper]
    next: PaperCursor | None


def search_terms(search: str) -> tuple[str | None, list[str]]:
    """What a search asks for: the arXiv id it is (any pasted form, no version), else None
    and its folded words, each of which a paper's search text must hold."""
    text = search.strip()
    if text[:6].lower() == "arxiv:":
        text = text[6:]
    try:
        return split_arxiv_id(text)[0], []
    except ValueError:
        return None, normalize_name(search).split()


class PaperLists:
    """Pages of papers and their counts; each read opens its own transaction."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def page(self, query: PaperListQuery) -> PaperPage:
        """The papers of ``query``'s page, latest change first (then by id, newest first)."""
        p = papers_table
        keys = (
            sa.select(p.c.id, p.c.changed_at)
            .where(*self._conditions(query))
            .order_by(p.c.changed_at.desc(), p.c.id.desc())
            .limit(query.limit + 1)
        )
        with self._db.transaction() as conn:
            found = conn.execute(keys).all()
            shown = found[: query.limit]
            ids = [row.id for row in shown]
            holds = paper_select().where(p.c.id.in_(ids), _held(query.scope, paper_authors_table))
            by_id = {paper.id: paper for paper in stories_of(conn, conn.execute(holds).all())}
        last = shown[-1] if len(found) > query.limit else None
        return PaperPage(
            [by_id[i] for i in ids if i in by_id],
            (utc(last.changed_at), last.id) if last is not None else None,
        )

    def counts(self, scope: PaperScope) -> dict[PaperStatus, int]:
        """How many papers of ``scope`` have each status (a paper's best hold in it)."""
        with self._db.transaction() as conn:
            found = status_counts(conn, _held(scope, paper_authors_table))
        return {status: found.get(status, 0) for status in PaperStatus}

    def authors(self, scope: PaperScope, limit: int) -> list[str]:
        """The first ``limit`` names, in order, of the authors a list of ``scope`` may be
        narrowed to whatever its author: its group's members, else the followed authors
        and those holding papers."""
        a, t, m, g = authors_table, paper_authors_table, group_members_table, groups_table
        query = sa.select(a.c.name).order_by(a.c.name).limit(limit)
        if scope.group is not None:
            group = sa.select(g.c.id).where(g.c.name == scope.group).scalar_subquery()
            query = query.where(a.c.id.in_(sa.select(m.c.author_id).where(m.c.group_id == group)))
        else:
            holding = sa.select(t.c.paper_id).where(t.c.author_id == a.c.id).exists()
            query = query.where(sa.or_(a.c.removed_at.is_(None), holding))
        with self._db.transaction() as conn:
            return list(conn.scalars(query))

    def _conditions(self, query: PaperListQuery) -> list[sa.ColumnElement[bool]]:
        p, t = papers_table, paper_authors_table
        scope = query.scope
        if scope.author is None and scope.group is None:
            conditions = [_holding(scope)]
        else:
            # Some people's papers: read from their holds (an index), not by a walk of all.
            conditions = [p.c.id.in_(sa.select(t.c.paper_id).where(_held(scope, t)))]
        if query.status is not None:
            conditions.append(_holding(query.scope, (query.status,)))
            better = HOLDS[: HOLDS.index(query.status)]
            if better:
                conditions.append(~_holding(query.scope, better))
        arxiv_id, words = search_terms(query.search)
        if arxiv_id is not None:
            conditions.append(p.c.arxiv_id == arxiv_id)
        elif words:
            conditions.append(matching(self._db.engine.dialect.name, words))
        if query.after is not None:
            at, paper_id = query.after
            # A row value: both databases read it off the (changed_at, id) index.
            conditions.append(sa.tuple_(p.c.changed_at, p.c.id) < sa.tuple_(at, paper_id))
        return conditions


def _holding(
    scope: PaperScope, statuses: Collection[PaperStatus] | None = None
) -> sa.ColumnElement[bool]:
    """Whether a paper has a hold in ``scope`` (of one of ``statuses`` too, when given)."""
    t = paper_authors_table.alias("hold")
    held = sa.select(t.c.paper_id).where(t.c.paper_id == papers_table.c.id, _held(scope, t))
    if statuses is not None:
        held = held.where(t.c.status.in_(sorted(statuses)))
    return held.exists()


def _held(scope: PaperScope, t: Any) -> sa.ColumnElement[bool]:
    """Whether a ``paper_authors`` row (of ``t``) is a hold in ``scope``."""
    conditions: list[sa.ColumnElement[bool]] = [sa.true()]
    if scope.author is not None:
        author = sa.select(authors_table.c.id).where(authors_table.c.name == scope.author)
        conditions.append(t.c.author_id == author.scalar_subquery())
    if scope.group is not None:
        m, g = group_members_table, groups_table
        group = sa.select(g.c.id).where(g.c.name == scope.group).scalar_subquery()
        conditions.append(t.c.author_id.in_(sa.select(m.c.author_id).where(m.c.group_id == group)))
    if scope.statuses is not None:
        conditions.append(t.c.status.in_(sorted(scope.statuses)))
    return sa.and_(*conditions)
