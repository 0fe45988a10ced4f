"""OpenAlex: the parser on OpenAlex's recorded works, and the client against the fake."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from syncd.config import ArxivSettings, PublicationsSettings
from syncd.domain.publications import PublicationSource
from syncd.errors import ConfigError, PublicationSourceError, RequestRefused
from syncd.sources.openalex import HOW_MERGED, OpenAlexClient, merged_publication, parse_work
from syncd.sources.polite import ProcessPacer
from tests.fakeopenalex import FakeOpenAlex
from tests.recordedservice import recorded

KEY = "test-openalex-key"


def _recorded_work(kind: str) -> dict[str, Any]:
    results = recorded("openalex/works-title-search.json")["results"]
    return next(work for work in results if work["type"] == kind)


def _client(url: str, key: str | None = KEY) -> OpenAlexClient:
    publications = PublicationsSettings(
        openalex_url=url,
        openalex_interval=0,
        openalex_key=SecretStr(key) if key is not None else None,
    )
    arxiv = ArxivSettings(contact="lab@example.org", max_retries=1, backoff_base=0.0)
    return OpenAlexClient(publications, arxiv, pacer=ProcessPacer(), sleep=lambda _: None)


@pytest.fixture
def openalex() -> Iterator[FakeOpenAlex]:
    with FakeOpenAlex(key=KEY) as fake:
        yield fake


class TestParser:
    def test_a_recorded_arxiv_work_kept_apart_links_nothing(self) -> None:
        preprint = _recorded_work("preprint")
        assert preprint["doi"] == "https://doi.org/10.48550/arxiv.2304.05376"
        assert merged_publication("2304.05376", preprint) is None

    def test_a_work_with_a_journal_location_gives_the_publication(self) -> None:
        linked = merged_publication("2304.05376", _recorded_work("article"))
        assert linked is not None and linked.how == HOW_MERGED
        work = linked.work
        assert work.source is PublicationSource.OPENALEX
        assert work.doi == "10.1038/s42256-024-00832-8"
        assert work.venue == "Nature Machine Intelligence"
        assert work.year == 2024 and work.date == "2024-05-08"
        assert work.authors[0] == "Andres M. Bran"
        assert work.title == "Augmenting large language models with chemistry tools"

    def test_a_recorded_single_work_answer_parses(self) -> None:
        body = json.dumps(recorded("openalex/work-published.json")).encode()
        linked = merged_publication("1401.00001", parse_work(body))
        assert linked is not None and linked.work.doi == "10.1073/pnas.1414271111"

    def test_only_a_publishing_source_counts(self) -> None:
        work = copy.deepcopy(_recorded_work("article"))
        for location in work["locations"]:
            if location["source"]:
                location["source"]["type"] = "repository"
        assert merged_publication("2304.05376", work) is None

    @pytest.mark.parametrize(
        "body", [b"<!doctype html>", b"[]", b'{"error": "x"}', b"{" * 100_000, b"\xff"]
    )
    def test_a_body_that_is_not_a_work_is_refused(self, body: bytes) -> None:
        with pytest.raises(PublicationSourceError):
            parse_work(body)

    def test_wrong_shapes_are_refused_or_skipped(self) -> None:
        work = copy.deepcopy(_recorded_work("article"))
        work["locations"] = ["a location", None, *work["locations"]]
        assert merged_publication("2304.05376", work) is not None
        work["locations"] = {"not": "a list"}
        with pytest.raises(PublicationSourceError):
            merged_publication("2304.05376", work)
        work = copy.deepcopy(_recorded_work("article"))
        work["title"] = "x" * 10_000
        with pytest.raises(PublicationSourceError):
            merged_publication("2304.05376", work)


class TestClient:
    def test_no_key_no_client(self) -> None:
        with pytest.raises(ConfigError, match="openalex_key"):
            _client("https://api.openalex.test", key=None)

    def test_a_merged_work_links_and_one_kept_apart_does_not(self, openalex: FakeOpenAlex) -> None:
        openalex.merged(
            "2401.00001",
            doi="10.1038/s41567-024-99999-9",
            venue="Nature Physics",
            title="A result",
            authors=("Ada Lovelace", "Alan Turing"),
            year=2024,
        )
        openalex.preprint("2304.05376", title="ChemCrow", authors=("A Bran",), year=2023)
        with _client(openalex.url) as client:
            linked = client.linked_work("2401.00001")
            assert client.linked_work("2304.05376") is None
            assert client.linked_work("2501.99999") is None
        assert linked is not None and linked.arxiv_id == "2401.00001"
        assert linked.work.doi == "10.1038/s41567-024-99999-9"
        assert linked.work.venue == "Nature Physics"
        assert linked.work.authors == ("Ada Lovelace", "Alan Turing")
        assert client.requests == {"work": 3}
        assert [r.status for r in openalex.requests] == [200, 200, 404]
        assert all(r.param("api_key") == KEY for r in openalex.requests)
        assert openalex.requests[0].path == "/works/doi:10.48550/arXiv.2401.00001"

    def test_a_wrong_key_is_refused(self, openalex: FakeOpenAlex) -> None:
        with _client(openalex.url, key="another") as client, pytest.raises(RequestRefused):
            client.linked_work("2401.00001")
        assert [r.status for r in openalex.requests] == [401]
