"""Publication links and notices for tests: realistic values, as events carry them, and rows.

``link``, ``notice`` and ``publication_event`` build what the renderers read
(``syncd.domain.publications.link_json``'s shapes inside an event's
changes); ``insert_link`` and ``insert_notice`` put rows in the
publication_links and publication_notices tables of a test database with
SQLAlchemy Core, as the storage writer would, for the pages and the API.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from syncd.domain.model import Event
from syncd.domain.publications import (
    Evidence,
    LinkState,
    MatchLevel,
    Notice,
    PublicationLink,
    PublicationSource,
    link_json,
    link_key,
    notice_json,
)
from syncd.domain.record import Record
from syncd.domain.vocabulary import EventType
from syncd.storage.schema import papers_table, publication_links_table, publication_notices_table

WHEN = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
ARXIV_ID = "2403.01234"
TITLE = "Augmenting large language models with chemistry tools"
VENUE = "Nature Machine Intelligence"
DOI = "10.1038/s42256-024-00832-8"
CORRECTION_DOI = "10.1038/s42256-024-00901-2"
RETRACTION_DOI = "10.1038/s42256-025-01010-7"

# Crossref names the preprint in the publication's has-preprint relation: certain.
CROSSREF_LINK = PublicationLink(
    doi=DOI,
    venue=VENUE,
    type="journal-article",
    date="2024-05-08",
    title="Augmenting large language models with chemistry tools",
    url=f"https://www.nature.com/articles/{DOI.split('/')[1]}",
    evidence=Evidence(MatchLevel.LINK, PublicationSource.CROSSREF, "crossref-relation-doi", 1.0),
    state=LinkState.ACCEPTED,
)
# A bibliographic match above accept_score, with the parts of its score.
SCORED_LINK = replace(
    CROSSREF_LINK,
    evidence=Evidence(
        MatchLevel.BIBLIOGRAPHIC,
        PublicationSource.CROSSREF,
        "crossref-search",
        0.93,
        title_similarity=0.97,
        author_share=1.0,
        year_gap=1,
    ),
)
CORRECTION = Notice(CORRECTION_DOI, "correction", "2024-08-01", "publisher", DOI)
RETRACTION = Notice(RETRACTION_DOI, "retraction", "2025-03-14", "retraction-watch", DOI)


def link(**changed: Any) -> dict[str, Any]:
    """``CROSSREF_LINK`` as an event carries it, with ``changed`` keys replaced."""
    return link_json(CROSSREF_LINK) | changed


def publication_event(
    type: str,
    changes: dict[str, Any],
    *,
    seq: int = 1,
    title: str = TITLE,
    arxiv_id: str = ARXIV_ID,
) -> Event:
    """A publication event about the preprint ``arxiv_id``, v2, as storage hands it out."""
    record = Record(arxiv_id=arxiv_id, version=2, title=title, authors=("Andres M. Bran",))
    return Event(
        seq=seq,
        id=f"evt_pub{seq}",
        type=type,
        created_at=WHEN,
        author="Andres M. Bran",
        paper_key=arxiv_id,
        arxiv_id=arxiv_id,
        kinds=(),
        changes=changes,
        record=record,
    )


def published(**changed: Any) -> Event:
    """``paper.published`` of ``link(**changed)``."""
    return publication_event(EventType.PUBLISHED, {"publication": link(**changed)})


def noticed(notice: Notice, publication: PublicationLink = CROSSREF_LINK) -> Event:
    """``paper.corrected`` or ``paper.retracted`` for ``notice`` on ``publication``."""
    kind = EventType.RETRACTED if notice.type == "retraction" else EventType.CORRECTED
    changes = {"publication": link_json(publication), "notice": notice_json(notice)}
    return publication_event(kind, changes)


def paper_id(conn: sa.Connection, key: str) -> int:
    """The id of the paper stored under ``key``."""
    query = sa.select(papers_table.c.id).where(papers_table.c.key == key)
    return int(conn.execute(query).scalar_one())


def insert_link(
    conn: sa.Connection, paper: int, link: PublicationLink, when: datetime = WHEN
) -> int:
    """A publication_links row for ``link`` of paper id ``paper``; its id."""
    evidence = link.evidence
    row = {
        "paper_id": paper,
        "key": link_key(link),
        "doi": link.doi,
        "venue": link.venue,
        "type": link.type,
        "date": link.date,
        "title": link.title,
        "url": link.url,
        "source": evidence.source.value,
        "level": evidence.level.value,
        "how": evidence.how,
        "score": evidence.score,
        "title_similarity": evidence.title_similarity,
        "author_share": evidence.author_share,
        "year_gap": evidence.year_gap,
        "state": link.state.value,
        "found_at": when,
        "decided_at": None,
    }
    inserted = conn.execute(publication_links_table.insert().values(row))
    return int(inserted.inserted_primary_key[0])


def insert_notice(
    conn: sa.Connection, paper: int, link_id: int, notice: Notice, when: datetime = WHEN
) -> None:
    """A publication_notices row for ``notice`` on the link ``link_id`` of paper ``paper``."""
    row = {
        "paper_id": paper,
        "link_id": link_id,
        "doi": notice.doi,
        "type": notice.type,
        "date": notice.date,
        "source": notice.source,
        "found_at": when,
    }
    conn.execute(publication_notices_table.insert().values(row))
