"""Tests for syncd.sources.oai's client: the requests it sends and how it takes answers."""

from __future__ import annotations

from datetime import UTC, date, datetime

import httpx
import pytest

from syncd.config import HarvestSettings
from syncd.errors import BadArgument, BadResumptionToken, FeedError, PermanentUpstreamError
from syncd.sources.oai import OaiClient
from tests.oaixml import RawPaper, error_xml, list_records_xml
from tests.scriptedarxiv import FakeTime, Server, make_client, ok

pytestmark = pytest.mark.usefixtures("fresh_pacer")

OAI_URL = "https://oaipmh.arxiv.test/oai"
PAGE = list_records_xml([RawPaper("2603.00001")], token="tok|1")


def oai(server: Server) -> OaiClient:
    return OaiClient(make_client(server), HarvestSettings(url=OAI_URL))


def test_first_page_asks_from_a_date_never_until(fake_time: FakeTime) -> None:
    server = Server(fake_time, ok(PAGE))
    page = oai(server).first_page(date(2026, 3, 2), "physics:hep-th")
    assert page.token == "tok|1"
    assert str(server.requests[0].url).startswith(OAI_URL)
    assert server.params == [
        {
            "verb": "ListRecords",
            "metadataPrefix": "arXivRaw",
            "from": "2026-03-02",
            "set": "physics:hep-th",
        }
    ]


def test_a_redirect_names_harvest_url(fake_time: FakeTime) -> None:
    """OAI-PMH moved: the error names the harvester's own setting, not the API's."""
    moved = httpx.Response(301, headers={"Location": "https://oaipmh.arxiv.org/oai/"})
    with pytest.raises(PermanentUpstreamError) as caught:
        oai(Server(fake_time, moved)).first_page(date(2026, 3, 2), None)
    assert str(caught.value).endswith("; point harvest.url at the final address")


def test_next_page_sends_the_token_alone(fake_time: FakeTime) -> None:
    server = Server(fake_time, ok(PAGE))
    oai(server).next_page("tok|1")
    assert server.params == [{"verb": "ListRecords", "resumptionToken": "tok|1"}]


def test_503_with_retry_after_waits_and_goes_on(fake_time: FakeTime) -> None:
    busy = httpx.Response(503, headers={"Retry-After": "40"})
    server = Server(fake_time, busy, ok(PAGE))
    page = oai(server).first_page(None, None)
    assert [r.arxiv_id for r in page.records] == ["2603.00001"]
    assert max(fake_time.sleeps) >= 40
    assert server.times[1] - server.times[0] >= 40


def test_no_records_match_is_an_empty_last_page(fake_time: FakeTime) -> None:
    body = error_xml("noRecordsMatch", "nothing", response_date="2026-03-03T04:31:00Z")
    page = oai(Server(fake_time, ok(body))).first_page(date(2026, 3, 2), None)
    moment = datetime(2026, 3, 3, 4, 31, tzinfo=UTC)
    assert (page.records, page.token, page.response_date) == ((), None, moment)


@pytest.mark.parametrize(
    ("code", "error"), [("badResumptionToken", BadResumptionToken), ("badArgument", BadArgument)]
)
def test_typed_errors(fake_time: FakeTime, code: str, error: type[Exception]) -> None:
    server = Server(fake_time, ok(error_xml(code, "no")))
    with pytest.raises(error):
        oai(server).next_page("old")
    assert len(server.requests) == 1  # permanent: no retry


def test_error_in_a_400_body_is_typed(fake_time: FakeTime) -> None:
    answer = httpx.Response(400, content=error_xml("badArgument", "unknown set"))
    with pytest.raises(BadArgument, match="unknown set"):
        oai(Server(fake_time, answer)).first_page(None, "moo")


def test_oversized_page_is_refused(fake_time: FakeTime) -> None:
    big = list_records_xml([RawPaper(f"2603.{n:05d}") for n in range(1, 200)])
    assert len(big) > 64 * 1024
    with pytest.raises(FeedError, match="max_response_bytes"):
        oai(Server(fake_time, ok(big))).first_page(None, None)
