"""The reads of where papers were published (``Storage.publication_reads``), on both databases.

Rows are written as the lookups write them (``tests.publications``): which
link is a paper's publication, which wait for review, which are left out,
and the order of the notices.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta

import pytest
import sqlalchemy as sa

from syncd.domain.authors import Author
from syncd.domain.model import NewRevision, PaperWrite
from syncd.domain.publications import (
    Evidence,
    LinkState,
    MatchLevel,
    Notice,
    PaperPublications,
    PublicationSource,
)
from syncd.domain.vocabulary import AuthorOrigin, Origin, PaperStatus
from syncd.storage import Storage
from tests.conftest import BOTH_DATABASES, database_for
from tests.fakearxiv import make_record
from tests.publications import (
    CORRECTION,
    CROSSREF_LINK,
    DOI,
    FLOWTRAIN_CANDIDATE,
    RETRACTION,
    SCORED_LINK,
    WHEN,
    insert_link,
    insert_notice,
    paper_id,
)

AUTHOR = "Andres M. Bran"
PAPERS = [f"2403.{number:05d}" for number in range(1, 604)]  # more than one chunk of 500


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: the current link is chosen in SQL, many papers' with PostgreSQL's
    arrays."""
    return database_for(request)


@pytest.fixture
def storage(database_url: str) -> Iterator[Storage]:
    """The repositories over a migrated database holding ``PAPERS`` of ``AUTHOR``."""
    opened = Storage(database_url)
    opened.authors.reconcile([Author(AUTHOR, AuthorOrigin.CONFIG)])
    writes = [
        PaperWrite(
            key=arxiv_id,
            arxiv_id=arxiv_id,
            status=PaperStatus.TRACKED,
            origin=Origin.ARXIV,
            revisions=(NewRevision(make_record(arxiv_id), "api"),),
        )
        for arxiv_id in PAPERS
    ]
    opened.import_seeds(AUTHOR, writes)
    yield opened
    opened.close()


def _ids(storage: Storage) -> dict[str, int]:
    with storage.db.transaction() as conn:
        return {ref: paper_id(conn, ref) for ref in PAPERS}


def test_a_paper_without_links_has_nothing(storage: Storage) -> None:
    ids = _ids(storage)
    assert storage.publication_reads.of_paper(ids[PAPERS[0]]) == PaperPublications(None, (), ())
    assert storage.publication_reads.current_of(list(ids.values())) == {}


def test_the_current_link_its_notices_oldest_first_and_the_candidates(storage: Storage) -> None:
    paper = _ids(storage)[PAPERS[0]]
    undated = Notice("10.1038/s42256-025-00001-0", "expression_of_concern", None, "publisher", DOI)
    with storage.db.transaction() as conn:
        replaced = replace(SCORED_LINK, doi="10.1234/old", state=LinkState.REPLACED)
        rejected = replace(FLOWTRAIN_CANDIDATE, doi="10.1234/no", state=LinkState.REJECTED)
        better_candidate = replace(
            FLOWTRAIN_CANDIDATE,
            doi="10.1234/better",
            evidence=replace(FLOWTRAIN_CANDIDATE.evidence, score=0.85),
        )
        for link in (replaced, rejected, FLOWTRAIN_CANDIDATE, better_candidate):
            insert_link(conn, paper, link)
        current = insert_link(conn, paper, CROSSREF_LINK)
        # Found in this order; dated: the retraction after the correction, the undated last.
        insert_notice(conn, paper, current, undated, WHEN)
        insert_notice(conn, paper, current, RETRACTION, WHEN + timedelta(1))
        insert_notice(conn, paper, current, CORRECTION, WHEN + timedelta(2))
    shown = storage.publication_reads.of_paper(paper)
    assert shown.current == CROSSREF_LINK
    assert [link.doi for link in shown.candidates] == ["10.1234/better", FLOWTRAIN_CANDIDATE.doi]
    assert shown.candidates[1] == FLOWTRAIN_CANDIDATE  # every column read back as written
    assert shown.notices == (CORRECTION, RETRACTION, undated)
    assert shown.retracted


def test_two_current_links_the_strongest_is_the_publication(storage: Storage) -> None:
    paper = _ids(storage)[PAPERS[0]]
    arxiv_doi = replace(
        CROSSREF_LINK,
        doi="10.1103/physrevd.99.123",
        evidence=Evidence(MatchLevel.ARXIV, PublicationSource.ARXIV, "arxiv-doi", 1.0),
    )
    with storage.db.transaction() as conn:
        insert_link(conn, paper, SCORED_LINK)
        notices_elsewhere = insert_link(conn, paper, replace(CROSSREF_LINK, doi="10.1/x"))
        insert_notice(conn, paper, notices_elsewhere, CORRECTION)
        insert_link(conn, paper, arxiv_doi)
    assert storage.publication_reads.of_paper(paper).current == arxiv_doi
    assert storage.publication_reads.of_paper(paper).notices == ()  # the other link's
    assert storage.publication_reads.current_of([paper]) == {
        paper: PaperPublications(arxiv_doi, (), ())
    }


def test_many_papers_current_in_one_read(storage: Storage) -> None:
    ids = _ids(storage)
    published = PAPERS[::2]
    with storage.db.transaction() as conn:
        for number, ref in enumerate(published):
            insert_link(conn, ids[ref], replace(CROSSREF_LINK, doi=f"10.1038/paper.{number}"))
        insert_link(conn, ids[PAPERS[1]], FLOWTRAIN_CANDIDATE)
    found = storage.publication_reads.current_of(list(ids.values()))
    assert set(found) == {ids[ref] for ref in published}
    last = found[ids[published[-1]]].current
    assert last is not None
    assert last.doi == f"10.1038/paper.{len(published) - 1}"
    details = storage.paper_sets.details(storage.papers.all(AUTHOR))
    assert sum(d.publication is not None for d in details.values()) == len(published)


def test_the_rows_are_the_schema_s(storage: Storage) -> None:
    """A link's evidence reads back with its types: a float score, an int year gap."""
    paper = _ids(storage)[PAPERS[0]]
    with storage.db.transaction() as conn:
        insert_link(conn, paper, SCORED_LINK)
        row = conn.execute(sa.text("SELECT score, year_gap FROM publication_links")).one()
    assert (row.score, row.year_gap) == (0.93, 1)
    assert storage.publication_reads.of_paper(paper).current == SCORED_LINK
