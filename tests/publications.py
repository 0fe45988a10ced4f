"""Publication links and notices for tests: realistic values, as events carry them, and rows.

``link``, ``published``, ``noticed`` and ``publication_event`` build what the
renderers read (``syncd.domain.publications.link_json``'s shapes inside an
event's changes); ``insert_link``, ``insert_notice`` and ``insert_event``
put rows in the publication_links, publication_notices and events tables of
a test database with SQLAlchemy Core, as the storage writer would (the
contract's shapes: the lowest-id author holding the paper, no revision, no
run), for the pages, the feeds and the API.
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
from syncd.storage.rows import publication_link_values
from syncd.storage.schema import (
    authors_table,
    events_table,
    paper_authors_table,
    papers_table,
    publication_links_table,
    publication_notices_table,
)

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


def paper_id(conn: sa.Connection, ref: str) -> int:
    """The id of the paper stored under the key or arXiv id ``ref``."""
    query = sa.select(papers_table.c.id).where(
        sa.or_(papers_table.c.key == ref, papers_table.c.arxiv_id == ref)
    )
    return int(conn.execute(query).scalar_one())


def insert_link(
    conn: sa.Connection, paper: int, link: PublicationLink, when: datetime = WHEN
) -> int:
    """A publication_links row for ``link`` of paper id ``paper``; its id."""
    row = publication_link_values(link) | {
        "paper_id": paper,
        "key": link_key(link),
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


def insert_event(conn: sa.Connection, paper: int, type: str, changes: dict[str, Any]) -> str:
    """A publication event's row about paper id ``paper``, published now (after the
    revisions it carries the last of), filed under the lowest-id author holding it and
    naming every holder; its id."""
    holders = conn.execute(
        sa.select(authors_table.c.id, authors_table.c.name)
        .join(paper_authors_table, paper_authors_table.c.author_id == authors_table.c.id)
        .where(paper_authors_table.c.paper_id == paper)
        .order_by(authors_table.c.id)
    ).all()
    event_id = f"evt_pub{paper:08x}{type.rsplit('.', 1)[-1][:8]}"
    row = {
        "id": event_id,
        "type": type,
        "created_at": datetime.now(UTC),
        "author_id": holders[0].id,
        "paper_id": paper,
        "revision_id": None,
        "sync_run_id": None,
        "kinds": [],
        "changes": changes,
        "authors": sorted(holder.name for holder in holders),
    }
    conn.execute(events_table.insert().values(row))
    return event_id


# The scenario's papers (tests.scenario) followed to where they were published, for the
# pages and the browser: NestPipe in a journal and corrected, the federated learning
# paper (FEDCG) matched by its bibliography and retracted, FlowTrain only a candidate
# for a person to review.
NESTPIPE_LINK = replace(
    CROSSREF_LINK,
    title="NestPipe: scaling recommendation training to 1,500+ accelerators with nested pipelining",
    date="2026-09-14",
    url=None,
)
NESTPIPE_CORRECTION = Notice(CORRECTION_DOI, "correction", "2026-11-02", "publisher", DOI)
FEDCG_DOI = "10.1109/tnnls.2023.3241092"
FEDCG_LINK = replace(
    SCORED_LINK,
    doi=FEDCG_DOI,
    venue="IEEE Transactions on Neural Networks and Learning Systems",
    date="2023-03-01",
    title="Adaptive control of client selection and gradient compression for efficient"
    " federated learning",
    url=None,
)
FEDCG_RETRACTION = Notice(
    "10.1109/tnnls.2025.3550017", "retraction", "2025-04-10", "retraction-watch", FEDCG_DOI
)
FLOWTRAIN_CANDIDATE = PublicationLink(
    doi="10.1145/3711896.3737012",
    venue="Proceedings of the 32nd ACM SIGKDD Conference on Knowledge Discovery and Data Mining",
    type="proceedings-article",
    date="2026-08-03",
    title="FlowTrain: flow-based decoupled training for vision-language models",
    url=None,
    evidence=Evidence(
        MatchLevel.BIBLIOGRAPHIC,
        PublicationSource.CROSSREF,
        "crossref-search",
        0.74,
        title_similarity=0.81,
        author_share=0.67,
        year_gap=0,
    ),
    state=LinkState.CANDIDATE,
)


def record_publications(database_url: str, nestpipe: str, fedcg: str, flowtrain: str) -> None:
    """Write the scenario's publications and their events on the papers keyed ``nestpipe``,
    ``fedcg`` and ``flowtrain``, as a lookup would have."""
    engine = sa.create_engine(database_url)
    try:
        with engine.begin() as conn:
            paper = paper_id(conn, nestpipe)
            link_id = insert_link(conn, paper, NESTPIPE_LINK)
            insert_notice(conn, paper, link_id, NESTPIPE_CORRECTION)
            insert_event(
                conn, paper, EventType.PUBLISHED, {"publication": link_json(NESTPIPE_LINK)}
            )
            notice = {
                "publication": link_json(NESTPIPE_LINK),
                "notice": notice_json(NESTPIPE_CORRECTION),
            }
            insert_event(conn, paper, EventType.CORRECTED, notice)
            paper = paper_id(conn, fedcg)
            link_id = insert_link(conn, paper, FEDCG_LINK)
            insert_notice(conn, paper, link_id, FEDCG_RETRACTION)
            notice = {"publication": link_json(FEDCG_LINK), "notice": notice_json(FEDCG_RETRACTION)}
            insert_event(conn, paper, EventType.RETRACTED, notice)
            insert_link(conn, paper_id(conn, flowtrain), FLOWTRAIN_CANDIDATE)
    finally:
        engine.dispose()
