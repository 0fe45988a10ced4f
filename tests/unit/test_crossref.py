"""Crossref: the parser on Crossref's recorded answers, and the client against the fake."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from syncd.config import ArxivSettings, PublicationsSettings
from syncd.domain.publications import Notice, PublicationSource
from syncd.errors import PublicationSourceError, RetryableUpstreamError
from syncd.sources.crossref import (
    HOW_ARXIV_ID,
    HOW_DOI,
    LINK_BATCH,
    NOTICE_BATCH,
    SEARCH_ROWS,
    CrossrefClient,
    clean_title,
    linked_works,
    notice_targets,
    parse_work_list,
    readable_works,
    work_from_item,
)
from syncd.sources.polite import ProcessPacer, host_of, process_pacer
from tests.fakecrossref import FakeCrossref
from tests.recordedservice import FIXTURES, recorded

CONTACT = "lab@example.org"


def _body(name: str) -> bytes:
    return (FIXTURES / "crossref" / name).read_bytes()


def _list_body(items: list[dict[str, Any]]) -> bytes:
    answer = recorded("crossref/works-filter-bibliographic.json")
    answer["message"]["items"] = items
    return json.dumps(answer).encode()


def _settings(url: str, **arxiv: Any) -> tuple[PublicationsSettings, ArxivSettings]:
    publications = PublicationsSettings(crossref_url=url, crossref_interval=0)
    values: dict[str, Any] = {"contact": CONTACT, "max_retries": 2, "backoff_base": 0.0}
    values.update(arxiv)
    return publications, ArxivSettings(**values)


def _client(url: str, **arxiv: Any) -> CrossrefClient:
    publications, arxiv_settings = _settings(url, **arxiv)
    return CrossrefClient(publications, arxiv_settings, pacer=ProcessPacer(), sleep=lambda _: None)


@pytest.fixture
def crossref() -> Iterator[FakeCrossref]:
    with FakeCrossref() as fake:
        yield fake


class TestParser:
    def test_a_recorded_filtered_list_reads_as_works_with_markup_stripped(self) -> None:
        page = parse_work_list(_body("works-filter-bibliographic.json"))
        assert page.total == 230 and len(page.items) == 20
        works = {work.doi: work for work in readable_works(page.items)}
        assert len(works) == 20
        threadfin = works["10.7717/peerj.14688"]
        assert threadfin.title.startswith(
            "Feeding habits of four-finger threadfin fish, Eleutheronema tetradactylum, and its"
        )
        assert "<" not in threadfin.title and "\n" not in threadfin.title
        assert threadfin.venue == "PeerJ" and threadfin.year == 2023
        assert threadfin.date == "2023-01-30" and threadfin.source is PublicationSource.CROSSREF

    def test_a_recorded_work_lists_its_correction_from_updated_by(self) -> None:
        work = work_from_item(json.loads(_body("work-updated-by.json"))["message"])
        assert work.doi == "10.1371/journal.pone.0033693"
        assert work.venue == "PLoS ONE" and work.date == "2012-03-21"
        assert work.authors[0].endswith("Sadasivan")
        assert work.notices == (
            Notice(
                doi="10.1371/annotation/c76da2c1-ccb8-4797-94c1-359d3ceceeda",
                type="correction",
                date="2012-05-08",
                source="publisher",
                target_doi="10.1371/journal.pone.0033693",
            ),
        )

    def test_a_preprint_record_is_never_a_published_version(self) -> None:
        item = json.loads(_body("work-is-preprint-of.json"))["message"]
        assert item["type"] == "posted-content"
        assert readable_works([item]) == []

    def test_a_recorded_relation_to_another_preprint_server_links_no_arxiv_paper(self) -> None:
        items = parse_work_list(_body("works-filter-bibliographic.json")).items
        assert linked_works(items, ["2401.01234", "10.7287/peerj.preprints.3020"]) == []

    def test_has_preprint_names_the_arxiv_paper_by_doi_or_by_id(self) -> None:
        items = parse_work_list(_body("works-filter-bibliographic.json")).items
        linked = next(item for item in items if item.get("relation", {}).get("has-preprint"))
        by_doi, by_id = copy.deepcopy(linked), copy.deepcopy(items[0])
        by_doi["relation"]["has-preprint"][0]["id"] = "10.48550/arXiv.2401.01234"
        by_id["relation"] = {"has-preprint": [{"id-type": "arxiv", "id": "arXiv:2312.00007v3"}]}
        found = linked_works([by_doi, by_id], ["2401.01234", "2312.00007", "2301.99999"])
        assert {(link.arxiv_id, link.work.doi, link.how) for link in found} == {
            ("2401.01234", by_doi["DOI"].lower(), HOW_DOI),
            ("2312.00007", by_id["DOI"].lower(), HOW_ARXIV_ID),
        }

    def test_notices_come_from_update_to_and_skip_new_versions(self) -> None:
        items = parse_work_list(_body("works-filter-update-to.json")).items
        noticed = [item for item in items if item.get("update-to")]
        targets = {entry["DOI"].lower() for item in noticed for entry in item["update-to"]}
        assert notice_targets(items, targets) == []  # PLOS lists new_version updates only
        retraction = copy.deepcopy(noticed[0])
        retraction["DOI"] = "10.1371/journal.ppat.9999999"
        retraction["update-to"][0].update(type="retraction", source="retraction-watch")
        target = retraction["update-to"][0]["DOI"].lower()
        assert notice_targets([retraction], {target}) == [
            Notice(
                "10.1371/journal.ppat.9999999",
                "retraction",
                "2018-03-26",
                "retraction-watch",
                target,
            )
        ]

    def test_titles_lose_jats_and_html_markup(self) -> None:
        assert clean_title("H<sub>2</sub>O &amp; <i>E. coli</i>\n  <scp>DNA</scp>") == (
            "H2O & E. coli DNA"
        )

    @pytest.mark.parametrize(
        "body",
        [
            b"<html>Bad gateway</html>",
            b"[1, 2]",
            b'{"status": "failed", "message-type": "validation-failure", "message": []}',
            b'{"status": "ok", "message-type": "work-list", "message": {"items": {}}}',
            b'{"status": "ok", "message-type": "work", "message": {"items": []}}',
            b"[" * 100_000,
            b"\xff\xfe",
        ],
    )
    def test_a_body_that_is_not_a_work_list_is_refused(self, body: bytes) -> None:
        with pytest.raises(PublicationSourceError):
            parse_work_list(body)

    def test_items_of_the_wrong_shape_are_skipped_and_the_rest_read(self) -> None:
        good = recorded("crossref/works-query-title.json")["message"]["items"][0]
        bad = [
            {**good, "DOI": "not a doi"},
            {**good, "title": [7]},
            {**good, "title": ["x" * 5000]},
            {**good, "author": {"given": "A"}},
            {**good, "published": {"date-parts": [[2024, 13, 1]]}},
            {**good, "issued": "2024", "published": None},
            {**good, "title": []},
        ]
        page = parse_work_list(_list_body([*bad, "an item", good]))
        assert [work.doi for work in readable_works(page.items)] == [good["DOI"].lower()]

    def test_a_work_without_a_title_is_refused(self) -> None:
        answer = recorded("crossref/work-updated-by.json")
        answer["message"]["title"] = []
        with pytest.raises(ValueError, match="no title"):
            work_from_item(answer["message"])


class TestClient:
    def test_links_are_asked_in_batches_in_both_forms(self, crossref: FakeCrossref) -> None:
        crossref.publish(
            "10.1038/s41567-024-00001-1",
            title="Quantum thing",
            authors=("Ada Lovelace",),
            year=2024,
            preprint="2401.00003",
            link="doi",
        )
        crossref.publish(
            "10.1145/3600000.3600001",
            title="Proceedings thing",
            authors=("Alan Turing",),
            year=2024,
            venue="Proceedings of STOC",
            type="proceedings-article",
            preprint="2402.00020",
            link="arxiv",
        )
        ids = [f"24{month:02d}.{n:05d}" for month in (1, 2) for n in range(25)]
        with _client(crossref.url) as client:
            found = client.linked_works(ids)
        assert client.requests == {"link": 3}
        assert {(link.arxiv_id, link.work.doi, link.how) for link in found} == {
            ("2401.00003", "10.1038/s41567-024-00001-1", HOW_DOI),
            ("2402.00020", "10.1145/3600000.3600001", HOW_ARXIV_ID),
        }
        first = crossref.requests_of("link")[0]
        values = (first.param("filter") or "").split(",")
        assert len(values) == 2 * LINK_BATCH
        assert "relation.object:10.48550/arXiv.2401.00000" in values
        assert "relation.object:2401.00000" in values
        assert first.param("mailto") == CONTACT
        assert first.user_agent is not None and f"mailto:{CONTACT}" in first.user_agent

    def test_search_asks_few_rows_in_a_year_window(self, crossref: FakeCrossref) -> None:
        crossref.publish(
            "10.1038/s42256-024-00832-8",
            title="Augmenting large language models with chemistry tools",
            authors=("Andres M. Bran", "Philippe Schwaller"),
            year=2024,
        )
        crossref.publish(
            "10.1000/too-old", title="Augmenting chemistry", authors=("A Bran",), year=2015
        )
        with _client(crossref.url) as client:
            works = client.search(
                "ChemCrow: Augmenting large-language models with chemistry tools",
                ["Andres M. Bran", "Sam Cox"],
                2023,
            )
        assert [work.doi for work in works] == ["10.1038/s42256-024-00832-8"]
        assert works[0].venue == "Nature Machine Intelligence" and works[0].year == 2024
        (request,) = crossref.requests_of("search")
        assert request.param("rows") == str(SEARCH_ROWS)
        assert request.param("filter") == "from-pub-date:2022,until-pub-date:2027"
        assert (request.param("query.bibliographic") or "").endswith(" Bran")
        assert client.requests == {"search": 1}

    def test_notices_are_batched_and_name_their_target(self, crossref: FakeCrossref) -> None:
        crossref.add_notice(
            "10.1016/s0140-6736(97)11096-0",
            "10.1016/s0140-6736(10)60175-4",
            type="retraction",
            date=(2010, 2, 6),
            source="retraction-watch",
        )
        crossref.add_notice("10.1000/other", "10.1000/other-erratum", type="erratum")
        dois = ["10.1016/S0140-6736(97)11096-0"] + [f"10.1000/{n}" for n in range(NOTICE_BATCH)]
        with _client(crossref.url) as client:
            notices = client.notices(dois)
        assert notices == [
            Notice(
                doi="10.1016/s0140-6736(10)60175-4",
                type="retraction",
                date="2010-02-06",
                source="retraction-watch",
                target_doi="10.1016/s0140-6736(97)11096-0",
            )
        ]
        assert client.requests == {"notices": 2}

    def test_a_linked_work_carries_the_notices_its_updated_by_lists(
        self, crossref: FakeCrossref
    ) -> None:
        crossref.publish(
            "10.1000/paper",
            title="A paper",
            authors=("Ada Lovelace",),
            year=2024,
            preprint="2401.00003",
            link="doi",
        )
        crossref.add_notice("10.1000/paper", "10.1000/paper-fix", date=(2025, 2, 1))
        with _client(crossref.url) as client:
            (linked,) = client.linked_works(["2401.00003"])
        assert [n.doi for n in linked.work.notices] == ["10.1000/paper-fix"]
        assert linked.work.notices[0].date == "2025-02-01"

    def test_a_source_that_is_down_fails_visibly(self, crossref: FakeCrossref) -> None:
        crossref.fail(503)
        with _client(crossref.url) as client, pytest.raises(RetryableUpstreamError):
            client.search("A title", ["Ada Lovelace"], 2024)
        assert len(crossref.requests) == 3  # max_retries 2: three attempts
        crossref.fail(None)
        crossref.stop()
        with _client(crossref.url) as client, pytest.raises(RetryableUpstreamError):
            client.linked_works(["2401.00001"])

    def test_a_throttle_is_waited_out_as_retry_after_asks(self) -> None:
        answers = [
            httpx.Response(429, headers={"Retry-After": "2"}),
            httpx.Response(200, content=_body("works-query-title.json")),
        ]
        slept: list[float] = []
        publications, arxiv = _settings("https://api.crossref.test", throttle_cooldown=1.0)
        transport = httpx.MockTransport(lambda request: answers.pop(0))
        with CrossrefClient(
            publications, arxiv, transport=transport, pacer=ProcessPacer(), sleep=slept.append
        ) as client:
            works = client.search("Augmenting large language models", ["Bran"], 2024)
        assert [work.doi for work in works] == ["10.1038/s42256-024-00832-8"]
        assert sum(slept) >= 2.0

    def test_an_answer_over_the_size_cap_is_refused(self) -> None:
        publications = PublicationsSettings(
            crossref_url="https://api.crossref.test", max_response_bytes=1024
        )
        transport = httpx.MockTransport(
            lambda request: httpx.Response(200, content=_body("works-query-title.json"))
        )
        with (
            CrossrefClient(publications, ArxivSettings(), transport=transport) as client,
            pytest.raises(PublicationSourceError, match=r"publications\.max_response_bytes"),
        ):
            client.search("A title", [], None)


class TestPoliteness:
    def test_requests_to_one_host_keep_the_interval(self, crossref: FakeCrossref) -> None:
        """Two clients of one host share its process pacer: the second request waits the
        rest of ``crossref_interval``; another host's pacer is its own."""
        publications = PublicationsSettings(crossref_url=crossref.url, crossref_interval=0.2)
        arxiv = ArxivSettings()
        slept: list[float] = []
        host = host_of(crossref.url)
        assert process_pacer(host) is process_pacer(host)
        assert process_pacer(host) is not process_pacer("api.openalex.org")
        process_pacer(host).reset()
        for _ in range(2):
            with CrossrefClient(
                publications, arxiv, clock=lambda: 100.0, sleep=slept.append
            ) as client:
                client.notices(["10.1000/unknown"])
        assert slept == [pytest.approx(0.2)]

    def test_without_a_contact_no_mailto_is_sent(self, crossref: FakeCrossref) -> None:
        with _client(crossref.url, contact=None) as client:
            client.notices(["10.1000/unknown"])
        (request,) = crossref.requests
        assert request.param("mailto") is None
        assert request.user_agent is not None and "mailto:" not in request.user_agent
