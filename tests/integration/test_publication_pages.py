"""Where papers were published, as the pages, the feeds, the API and the CLI show it.

The publication rows are written as a lookup would (``tests.publications``):
NestPipe published in a journal and corrected, FedCG matched by its
bibliography and retracted, FlowTrain a candidate waiting for review.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
import sqlalchemy as sa
from lxml import etree
from lxml import html as lxml_html

from syncd.domain.publications import link_json, notice_json
from syncd.web.schemas import EventOut, PaperOut
from tests.conftest import BOTH_DATABASES, database_for
from tests.integration.conftest import Site, Syncd, serving, sync_ok
from tests.integration.schemas import api_operations, check_against_its_schema
from tests.publications import (
    FEDCG_LINK,
    FEDCG_RETRACTION,
    FLOWTRAIN_CANDIDATE,
    NESTPIPE_CORRECTION,
    NESTPIPE_LINK,
    insert_link,
    paper_id,
    record_publications,
)
from tests.scenario import AUTHOR, FEDCG, FLOWTRAIN, NESTPIPE, OXYGEN

ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: the reads pick each paper's current link and its notices in SQL,
    with PostgreSQL's arrays for the many papers of a list."""
    return database_for(request)


@pytest.fixture
def site(syncd: Syncd) -> Iterator[Site]:
    """Served after a first sync, with the scenario's publications recorded."""
    sync_ok(syncd)
    record_publications(syncd.database_url, NESTPIPE, FEDCG, FLOWTRAIN)
    with serving(syncd) as running:
        yield running


def _tree(site: Site, path: str) -> Any:
    answer = site.get(path)
    assert answer.status_code == 200, answer.text[:300]
    return lxml_html.fromstring(answer.text)


def _text(element: Any) -> str:
    return " ".join(element.text_content().split())


class TestPaperPage:
    def test_the_published_version_with_its_evidence_and_correction(self, site: Site) -> None:
        page = _tree(site, f"/papers/{NESTPIPE}")
        section = page.xpath("//section[@class='published-version']")[0]
        fields = dict(
            zip(
                [_text(dt) for dt in section.xpath(".//dl/dt")],
                [_text(dd) for dd in section.xpath(".//dl/dd")],
                strict=True,
            )
        )
        assert fields == {
            "Venue": "Nature Machine Intelligence",
            "DOI": NESTPIPE_LINK.doi,
            "Type": "journal article",
            "Date": "2026-09-14",
            "Title": NESTPIPE_LINK.title,
            "Matched": "Found by Crossref's preprint link",
        }
        assert section.xpath(".//dd[@class='doi']/a/@href") == [
            f"https://doi.org/{NESTPIPE_LINK.doi}"
        ]
        [notice] = section.xpath(".//ul[@class='notices']/li")
        assert _text(notice) == (
            f"Correction of 2026-11-02 · DOI {NESTPIPE_CORRECTION.doi} · recorded by the publisher"
        )
        assert notice.get("class") == "correction"
        assert page.xpath("//p[contains(@class, 'retracted')]") == []
        summaries = page.xpath("//ol[@class='announced']/li/span[@class='summary']")
        announced = [_text(s) for s in summaries]
        assert announced[:2] == [
            "Correction to the version published in Nature Machine Intelligence"
            f" (DOI {NESTPIPE_LINK.doi}): notice DOI {NESTPIPE_CORRECTION.doi}, dated 2026-11-02",
            f"Published in Nature Machine Intelligence (DOI {NESTPIPE_LINK.doi}), found by"
            " Crossref's preprint link",
        ]

    def test_a_retracted_version_has_a_banner_first(self, site: Site) -> None:
        page = _tree(site, f"/papers/{FEDCG}")
        main = page.xpath("//main")[0]
        banner = main.xpath("./*")[0]
        assert banner.get("class") == "banner retracted"
        assert _text(banner) == (
            "Retracted: the version published in IEEE Transactions on Neural Networks and"
            f" Learning Systems (DOI {FEDCG_LINK.doi}) has been retracted (2025-04-10):"
            f" Retraction notice, DOI {FEDCG_RETRACTION.doi}, recorded by Retraction Watch."
        )
        assert banner.xpath(".//a/@href") == [
            f"https://doi.org/{FEDCG_LINK.doi}",
            f"https://doi.org/{FEDCG_RETRACTION.doi}",
        ]
        matched = page.xpath("//dd[@class='matched']")[0]
        assert _text(matched) == (
            "A bibliographic match scored 0.93 (title 0.97, all authors in common, year +1)"
        )

    def test_a_candidate_is_marked_as_not_confirmed(self, site: Site) -> None:
        page = _tree(site, f"/papers/{FLOWTRAIN}")
        section = page.xpath("//section[@class='published-version']")[0]
        assert section.xpath(".//dl") == []
        [candidate] = section.xpath(".//ul[@class='candidates']/li")
        assert _text(candidate).startswith(
            f"not confirmed {FLOWTRAIN_CANDIDATE.venue} · DOI {FLOWTRAIN_CANDIDATE.doi}"
            " · 2026-08-03 “FlowTrain: flow-based decoupled training for vision-language models”"
        )
        assert _text(candidate).endswith(
            "A bibliographic match scored 0.74 (title 0.81, 67 % of authors in common, same year)"
        )

    def test_a_paper_without_publication_shows_no_section(self, site: Site) -> None:
        """Off by default: a page says nothing of publications syncd does not look for."""
        page = _tree(site, f"/papers/{OXYGEN}")
        assert page.xpath("//section[@class='published-version']") == []

    def test_a_hostile_venue_is_text(self, syncd: Syncd, site: Site) -> None:
        engine = sa.create_engine(syncd.database_url)
        hostile = "<script>window.pwned = 1</script>\u202eEvil"
        with engine.begin() as conn:
            hostile_link = replace(NESTPIPE_LINK, venue=hostile, doi='10.1/x"><b>')
            insert_link(conn, paper_id(conn, OXYGEN), hostile_link)
        engine.dispose()
        answer = site.get(f"/papers/{OXYGEN}")
        page = lxml_html.fromstring(answer.text)
        assert page.xpath("//script") == []
        assert page.xpath("//dd[@class='venue']/bdi")[0].text == hostile
        assert page.xpath("//dd[@class='doi']/a/@href") == ["https://doi.org/10.1/x%22%3E%3Cb%3E"]
        listed = _tree(site, "/").xpath("//span[@class='meta published']//bdi[@class='venue']")
        assert hostile in [bdi.text for bdi in listed]


class TestLists:
    def test_the_index_and_the_author_page_show_where_each_was_published(self, site: Site) -> None:
        for path in ("/", f"/authors/{AUTHOR.replace(' ', '%20')}"):
            page = _tree(site, path)
            published = {}
            for item in page.xpath("//ul[@class='papers']/li"):
                arxiv_id = item.findtext(".//span[@class='arxiv']")
                line = item.xpath("./span[@class='meta published']")
                published[arxiv_id] = _text(line[0]) if line else None
            assert published[NESTPIPE] == (
                f"published in Nature Machine Intelligence · DOI {NESTPIPE_LINK.doi}"
            ), path
            assert published[FEDCG] == (
                "published in IEEE Transactions on Neural Networks and Learning Systems"
                f" · DOI {FEDCG_LINK.doi} · retracted"
            ), path
            assert published[FLOWTRAIN] is None, path  # a candidate is no publication
            assert published[OXYGEN] is None, path
        latest = _tree(site, "/").xpath("//ul[@class='papers']/li")[0]
        assert latest.findtext(".//span[@class='arxiv']") == FEDCG  # its retraction came last
        assert _text(latest.xpath(".//span[@class='what']")[0]) == "published version retracted"


class TestApiAndCli:
    def test_the_paper_object_carries_its_publication_and_notices(self, site: Site) -> None:
        one = site.get(f"/api/v1/papers/{NESTPIPE}").json()
        PaperOut.model_validate(one)
        assert one["publication"] == link_json(NESTPIPE_LINK)
        assert one["notices"] == [notice_json(NESTPIPE_CORRECTION)]
        listed = {p["arxiv_id"]: p for p in site.get("/api/v1/papers").json()}
        for paper in listed.values():
            PaperOut.model_validate(paper)
        assert listed[FEDCG]["publication"]["match"] == "bibliographic"
        assert listed[FEDCG]["notices"][0]["type"] == "retraction"
        assert listed[FLOWTRAIN]["publication"] is None
        assert listed[OXYGEN]["notices"] == []
        printed = {p["arxiv_id"]: p for p in site.syncd.json("papers")}  # syncd papers --json
        assert printed[NESTPIPE]["publication"] == link_json(NESTPIPE_LINK)

    def test_the_openapi_document_describes_it(self, site: Site) -> None:
        schemas = site.get("/api/v1/openapi.json").json()["components"]["schemas"]
        assert set(schemas["PublicationOut"]["properties"]) == set(link_json(NESTPIPE_LINK))
        assert set(schemas["NoticeOut"]["properties"]) == set(notice_json(NESTPIPE_CORRECTION))
        assert {"publication", "notices"} <= set(schemas["PaperOut"]["required"])

    def test_the_events_reach_the_api_the_feed_the_page_and_the_cli(self, site: Site) -> None:
        events = site.get("/api/v1/events", params={"type": "paper.retracted"}).json()
        [retracted] = events
        EventOut.model_validate(retracted)
        assert retracted["changes"]["notice"] == notice_json(FEDCG_RETRACTION)
        assert retracted["authors"] == [AUTHOR]
        feed = etree.fromstring(site.get(f"/feeds/papers/{FEDCG}.atom").content)
        titles = [entry.findtext(f"{ATOM}title") for entry in feed.iter(f"{ATOM}entry")]
        assert titles[0].endswith(f"({FEDCG}): published version retracted")
        page = _tree(site, "/events")
        headlines = [_text(a) for a in page.xpath("//ol[@class='events']/li//a[@class='headline']")]
        assert any(h.endswith(": published in Nature Machine Intelligence") for h in headlines)
        summaries = [_text(p) for p in page.xpath("//p[@class='summary']")]
        assert any(s.startswith("Retraction of the version published in IEEE") for s in summaries)
        table = site.syncd("events").out
        assert "published version retracted: Adaptive Control of Client Selection" in table
        assert "published in Nature Machine Intelligence: NestPipe" in table


@pytest.mark.slow
def test_the_paper_and_event_routes_keep_their_schema(site: Site) -> None:
    """With publications and notices recorded, what the read routes answer is what
    /api/v1/openapi.json says (schemathesis), nullable or not."""
    reads = [
        operation
        for operation in api_operations(site)
        if operation.method.upper() == "GET"
        and operation.path.startswith(("/api/v1/papers", "/api/v1/events"))
    ]
    assert len(reads) == 4
    for operation in reads:
        check_against_its_schema(operation, examples=15)
