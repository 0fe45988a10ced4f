"""Where papers were published (issue 33), through the real CLI on both databases: from
arXiv's own DOI, Crossref's relations in both forms, OpenAlex's merged works (only with a
key), a bibliographic match, and an author's baseline recorded quietly."""

from __future__ import annotations

import pytest

from syncd.domain.vocabulary import EventType
from tests.conftest import ON_BOTH_DATABASES
from tests.fakecrossref import FakeCrossref, arxiv_doi
from tests.fakeopenalex import FakeOpenAlex
from tests.integration.conftest import Syncd, sync_ok
from tests.integration.publications import (
    COAUTHORS,
    OPENALEX_KEY,
    PUBLICATION_TYPES,
    arrive,
    asked_about,
    check_ok,
    configure,
    delivered_once,
    events,
    link_filters,
    links,
    publication_events,
    published_year,
    the_publication,
)
from tests.receiver import Receiver
from tests.scenario import AUTHOR, NESTPIPE, OXYGEN

pytestmark = [ON_BOTH_DATABASES, pytest.mark.usefixtures("loopback_only")]

ALL_AUTHORS = (AUTHOR, *COAUTHORS)


def test_a_doi_on_arxiv_is_published_without_a_lookup(
    syncd: Syncd, crossref: FakeCrossref, receiver: Receiver
) -> None:
    """arXiv's record names the DOI: ``paper.published`` from arXiv alone, certain; Crossref
    is never asked for its link nor searched for it (only its notices are watched)."""
    configure(syncd, crossref, receiver)
    doi = "10.1103/PhysRevLett.130.123456"
    arrive(syncd, {"2607.00101": "Engines of the published kind"}, doi=doi)
    crossref.requests.clear()

    check_ok(syncd)

    publication = the_publication(syncd, "2607.00101")
    assert publication["doi"] == doi.lower()
    assert (publication["source"], publication["match"], publication["how"]) == (
        "arxiv",
        "arxiv",
        "arxiv-doi",
    )
    assert publication["score"] == 1.0
    assert set(asked_about(crossref, "2607.00101")) == set()
    assert not [r for r in crossref.requests_of("search") if "published kind" in str(r.query)]
    assert [r.param("filter") for r in crossref.requests_of("notices")] == [
        f"updates:{doi.lower()}"
    ]
    delivered_once(receiver, syncd, "2607.00101")


def test_crossref_relations_in_both_forms_link_papers_in_one_request(
    syncd: Syncd, crossref: FakeCrossref, receiver: Receiver
) -> None:
    """One publication names its preprint by arXiv DOI, another by bare id: both are found
    by ONE link request for the whole batch, announced with how each was linked."""
    papers = {
        "2607.00201": "Nested pipelines for sparse recommendation",
        "2607.00202": "Decoupled training of vision-language models",
        "2607.00203": "A paper nobody published",
    }
    configure(syncd, crossref, receiver)
    arrive(syncd, papers)
    year = published_year(syncd, "2607.00201")
    crossref.publish(
        "10.1038/s42256-026-00001-1",
        title=papers["2607.00201"],
        authors=ALL_AUTHORS,
        year=year,
        venue="Nature Machine Intelligence",
        preprint="2607.00201",
        link="doi",
    )
    crossref.publish(
        "10.1145/3600006.3613111",
        title=papers["2607.00202"],
        authors=ALL_AUTHORS,
        year=year,
        venue="Proceedings of SOSP",
        type="proceedings-article",
        preprint="2607.00202",
        link="arxiv",
    )

    check_ok(syncd)

    by_doi = the_publication(syncd, "2607.00201")
    by_id = the_publication(syncd, "2607.00202")
    assert (by_doi["doi"], by_doi["venue"], by_doi["how"]) == (
        "10.1038/s42256-026-00001-1",
        "Nature Machine Intelligence",
        "crossref-relation-doi",
    )
    assert (by_id["doi"], by_id["type"], by_id["how"]) == (
        "10.1145/3600006.3613111",
        "proceedings-article",
        "crossref-relation-arxiv-id",
    )
    for publication in (by_doi, by_id):
        assert (publication["source"], publication["match"]) == ("crossref", "link")
    assert publication_events(syncd, "2607.00203") == []
    # The baseline's papers and the new ones, in one request, each in both forms.
    (asked,) = link_filters(crossref)
    for arxiv_id in papers:
        assert {arxiv_doi(arxiv_id), arxiv_id} <= asked
    assert {NESTPIPE, OXYGEN} <= asked
    delivered_once(receiver, syncd, "2607.00201")
    delivered_once(receiver, syncd, "2607.00202")


def test_openalex_links_a_merged_work_with_a_key(
    syncd: Syncd, crossref: FakeCrossref, openalex: FakeOpenAlex, receiver: Receiver
) -> None:
    """No Crossref relation names the preprint; OpenAlex merged it with its publication:
    announced from OpenAlex, asked with the key; no search is needed."""
    configure(syncd, crossref, receiver, openalex, key=OPENALEX_KEY)
    title = "Chemistry agents with tools"
    arrive(syncd, {"2607.00301": title})
    openalex.merged(
        "2607.00301",
        doi="10.1038/s41567-026-00042-7",
        venue="Nature Physics",
        title=title,
        authors=ALL_AUTHORS,
        year=published_year(syncd, "2607.00301"),
    )

    check_ok(syncd)

    publication = the_publication(syncd, "2607.00301")
    assert (publication["doi"], publication["venue"]) == (
        "10.1038/s41567-026-00042-7",
        "Nature Physics",
    )
    assert (publication["source"], publication["match"], publication["how"]) == (
        "openalex",
        "link",
        "openalex-merged",
    )
    asked = [r for r in openalex.requests if "2607.00301" in r.path]
    assert len(asked) == 1
    assert asked[0].param("api_key") == OPENALEX_KEY
    assert asked[0].status == 200
    assert "search" not in asked_about(crossref, "2607.00301")
    assert all(r.status != 401 for r in openalex.requests)
    delivered_once(receiver, syncd, "2607.00301")


def test_no_openalex_request_without_a_key(
    syncd: Syncd, crossref: FakeCrossref, openalex: FakeOpenAlex, receiver: Receiver
) -> None:
    """OpenAlex configured, knowing the merged work, but no key: it is never asked, and
    nothing is announced from it."""
    configure(syncd, crossref, receiver, openalex)
    arrive(syncd, {"2607.00401": "Chemistry agents without keys"})
    openalex.merged(
        "2607.00401",
        doi="10.1038/s41567-026-00043-8",
        venue="Nature Physics",
        title="Chemistry agents without keys",
        authors=ALL_AUTHORS,
        year=published_year(syncd, "2607.00401"),
    )

    check_ok(syncd)
    check_ok(syncd, "2607.00401")

    assert openalex.requests == []
    assert publication_events(syncd, "2607.00401") == []
    # Crossref was asked, so the lookups ran.
    assert "link" in asked_about(crossref, "2607.00401")


def test_a_bibliographic_match_above_accept_score_is_announced_with_its_evidence(
    syncd: Syncd, crossref: FakeCrossref, receiver: Receiver
) -> None:
    """No link names the preprint; Crossref's search finds the same title with the same
    authors: score 1 (title 1, authors 1, same year), announced with the evidence."""
    title = "Scaling laws of followed authors"
    configure(syncd, crossref, receiver)
    arrive(syncd, {"2607.00501": title})
    crossref.publish(
        "10.1016/j.artint.2026.104001",
        title=title,
        authors=ALL_AUTHORS,
        year=published_year(syncd, "2607.00501"),
        venue="Artificial Intelligence",
    )

    check_ok(syncd)

    publication = the_publication(syncd, "2607.00501")
    assert (publication["doi"], publication["venue"]) == (
        "10.1016/j.artint.2026.104001",
        "Artificial Intelligence",
    )
    assert (publication["source"], publication["match"]) == ("crossref", "bibliographic")
    assert publication["score"] == 1.0
    assert publication["evidence"] == {"title_similarity": 1.0, "author_share": 1.0, "year_gap": 0}
    (search,) = [r for r in crossref.requests_of("search") if title in str(r.query)]
    assert AUTHOR.split()[-1] in (search.param("query.bibliographic") or "")
    delivered_once(receiver, syncd, "2607.00501")


def test_an_authors_baseline_records_its_publications_quietly(
    syncd: Syncd, crossref: FakeCrossref, receiver: Receiver
) -> None:
    """An author followed without seeds: their first sync announces the author, not their
    papers (``author.added``).  Those papers, looked up for the first time, record their
    publication with no ``paper.published``; a correction found later is news, announced
    once.  (A seeded author's first sync announces its seed links, ``paper.linked``: their
    publications are announced, as any announced paper's.)"""
    syncd.seeds = ()
    configure(syncd, crossref, receiver)
    nestpipe = syncd.arxiv.current(NESTPIPE)
    doi = "10.1145/3711896.3736001"
    crossref.publish(
        doi,
        title=nestpipe.title or "",
        authors=nestpipe.authors,
        year=int((nestpipe.published or "2026")[:4]),
        venue="Proceedings of KDD",
        preprint=NESTPIPE,
        link="doi",
    )
    sync_ok(syncd)
    assert [e["type"] for e in events(syncd)] == [EventType.AUTHOR_ADDED]

    check_ok(syncd)

    assert [(link["doi"], link["state"]) for link in links(syncd)[NESTPIPE]] == [(doi, "accepted")]
    assert publication_events(syncd) == []
    # Quiet, not hidden: the paper's object says where it was published.
    (listed,) = [p for p in syncd.json("papers") if p["arxiv_id"] == NESTPIPE]
    assert (listed["publication"]["doi"], listed["publication"]["venue"]) == (
        doi,
        "Proceedings of KDD",
    )
    assert not [r for r in receiver.delivered if (r.json or {}).get("type") in PUBLICATION_TYPES]

    crossref.add_notice(doi, "10.1145/3711896.3736002", type="correction", date=(2026, 8, 3))
    check_ok(syncd, NESTPIPE)
    check_ok(syncd, NESTPIPE)

    (corrected,) = publication_events(syncd, NESTPIPE)
    assert corrected["type"] == EventType.CORRECTED
    assert corrected["changes"]["notice"]["doi"] == "10.1145/3711896.3736002"
    delivered_once(receiver, syncd, NESTPIPE)
