"""Reads of where papers were published: one paper's links and notices, many papers' current.

What the faces show: a paper's page (its published version, the candidates
waiting for review, the notices), the author pages and the index (each
paper's published version), the API's paper object.  Each read opens its
own transaction, or runs in the caller's (``published``).  What a lookup or
a person's decision writes is ``syncd.storage.publications``'.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.publications import (
    LinkState,
    MatchLevel,
    Notice,
    PaperPublications,
    PublicationLink,
)
from syncd.storage import rows
from syncd.storage.database import Database, among, chunks
from syncd.storage.schema import publication_links_table, publication_notices_table

__all__ = ["PublicationReads", "published"]

# The states of a link announced as the paper's publication.
_CURRENT = (LinkState.ACCEPTED.value, LinkState.CONFIRMED.value)
_links = publication_links_table
_notices = publication_notices_table
# Should a paper hold two current links, the strongest is its publication: by
# match level, then score, then the newest.
_STRENGTH = (
    sa.case(
        (_links.c.level == MatchLevel.ARXIV.value, 0),
        (_links.c.level == MatchLevel.LINK.value, 1),
        else_=2,
    ),
    _links.c.score.desc(),
    _links.c.id.desc(),
)


class PublicationReads:
    """Reads of the publication_links and publication_notices tables."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def of_paper(self, paper_id: int) -> PaperPublications:
        """What the record knows of the paper's published versions: the current link, the
        candidates waiting for review (best score first), the current one's notices."""
        shown = (*_CURRENT, LinkState.CANDIDATE.value)
        query = (
            sa.select(_links)
            .where(_links.c.paper_id == paper_id, _links.c.state.in_(shown))
            .order_by(*_STRENGTH)
        )
        with self._db.transaction() as conn:
            found = conn.execute(query).all()
            current = next((row for row in found if row.state in _CURRENT), None)
            notices = _notices_of(conn, [current]) if current is not None else {}
        candidates = [row for row in found if row.state == LinkState.CANDIDATE]
        return PaperPublications(
            current=rows.publication_link(current) if current is not None else None,
            candidates=tuple(rows.publication_link(row) for row in candidates),
            notices=notices.get(paper_id, ()),
        )

    def current_of(self, paper_ids: Collection[int]) -> dict[int, PaperPublications]:
        """Each paper's current publication with its notices (the candidates left out), by
        paper id, for the lists; papers without one are left out."""
        with self._db.transaction() as conn:
            return {
                paper_id: PaperPublications(link, (), notices)
                for paper_id, (link, notices) in published(conn, paper_ids).items()
            }


def published(
    conn: Connection, paper_ids: Collection[int]
) -> dict[int, tuple[PublicationLink, tuple[Notice, ...]]]:
    """Each paper's current publication and its notices (oldest first), by paper id, in the
    caller's transaction; papers without one are left out."""
    current = _current_rows(conn, paper_ids)
    notices = _notices_of(conn, list(current.values()))
    return {
        paper_id: (rows.publication_link(row), notices.get(paper_id, ()))
        for paper_id, row in current.items()
    }


def _current_rows(conn: Connection, paper_ids: Collection[int]) -> dict[int, sa.Row[Any]]:
    """The row of each paper's current link, by paper id: one query per chunk of ids."""
    found: dict[int, sa.Row[Any]] = {}
    for chunk in chunks(sorted(paper_ids)):
        query = (
            sa.select(_links)
            .where(among(conn, _links.c.paper_id, chunk), _links.c.state.in_(_CURRENT))
            .order_by(_links.c.paper_id, *_STRENGTH)
        )
        for row in conn.execute(query):
            found.setdefault(row.paper_id, row)
    return found


def _notices_of(conn: Connection, links: Sequence[sa.Row[Any]]) -> dict[int, tuple[Notice, ...]]:
    """The notices on each of ``links`` (rows of publication_links), by paper id, oldest
    first: by the notice's own date (a date it lacks last), then as they were found."""
    by_id = {row.id: row for row in links}
    found: dict[int, list[tuple[Any, ...]]] = {}
    for chunk in chunks(sorted(by_id)):
        query = (
            sa.select(_notices)
            .where(among(conn, _notices.c.link_id, chunk))
            .order_by(_notices.c.found_at, _notices.c.id)
        )
        for order, row in enumerate(conn.execute(query)):
            link = by_id[row.link_id]
            notice = rows.publication_notice(row, link.doi or "")
            oldest_first = (row.date is None, row.date or "", order)
            found.setdefault(link.paper_id, []).append((*oldest_first, notice))
    return {
        paper_id: tuple(item[-1] for item in sorted(items, key=lambda item: item[:3]))
        for paper_id, items in found.items()
    }
