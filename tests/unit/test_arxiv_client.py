"""Tests for syncd.sources.arxiv._client: httpx.MockTransport with a fake clock, and loopback."""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from structlog.testing import capture_logs

from syncd import metrics
from syncd.domain.record import split_arxiv_id
from syncd.domain.throttle import Cooldown
from syncd.errors import (
    ApiError,
    FeedError,
    PermanentUpstreamError,
    RateLimited,
    RetryableUpstreamError,
    Throttled,
    UnknownAuthorId,
)
from syncd.httpclient import MAX_RETRY_AFTER, parse_retry_after
from syncd.sources.arxiv import (
    MAX_ID_LIST_CHARS,
    ArxivClient,
    FeedPage,
    arxiv_host,
    id_list_batches,
)
from syncd.sources.arxiv import _pacing as pacing
from syncd.sources.arxiv._client import retry_delay
from syncd.sources.polite import LocalCooldowns
from tests.dripper import HeaderDripper
from tests.fakearxiv import unknown_author_page
from tests.scriptedarxiv import API_URL, FakeTime, Server, make_client, ok, settings

pytestmark = pytest.mark.usefixtures("fresh_pacer")

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "arxiv-api"


def make_feed(ids: list[str], *, total: int, start: int, per_page: int = 10) -> bytes:
    """A feed of one entry per id, at v1 unless the id names its version."""
    entries = "".join(
        f"<entry><id>http://arxiv.org/abs/{_at_version(i)}</id><title>Paper {i}</title>"
        f"<summary>Abstract of {i}.</summary><author><name>Ada Lovelace</name></author>"
        f'<arxiv:primary_category term="cs.LG"/><category term="cs.LG"/></entry>'
        for i in ids
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom"'
        ' xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
        f"<opensearch:totalResults>{total}</opensearch:totalResults>"
        f"<opensearch:startIndex>{start}</opensearch:startIndex>"
        f"<opensearch:itemsPerPage>{per_page}</opensearch:itemsPerPage>"
        f"{entries}</feed>"
    ).encode()


def _at_version(arxiv_id: str) -> str:
    return arxiv_id if split_arxiv_id(arxiv_id)[1] is not None else f"{arxiv_id}v1"


def paper_ids(count: int, first: int = 1) -> list[str]:
    return [f"2401.{n:05d}" for n in range(first, first + count)]


ONE = make_feed(["2401.00001"], total=1, start=0)


class TestRetryDelay:
    """The pure backoff decision."""

    def test_full_jitter_within_exponential_ceiling(self) -> None:
        """Each delay lies in [0, base * 2**attempt]."""
        rng = random.Random(1)
        for attempt in range(6):
            ceiling = 2.0 * 2**attempt
            delays = [retry_delay(attempt, None, 2.0, 1000.0, rng) for _ in range(200)]
            assert all(0.0 <= d <= ceiling for d in delays)
            assert max(delays) > ceiling / 2  # jitter spreads over the range

    def test_capped(self) -> None:
        """The exponential ceiling never exceeds the cap."""
        rng = random.Random(2)
        assert all(retry_delay(30, None, 2.0, 60.0, rng) <= 60.0 for _ in range(100))

    def test_retry_after_is_a_floor(self) -> None:
        """A server's Retry-After is never undercut."""
        rng = random.Random(3)
        assert all(retry_delay(0, 120.0, 2.0, 300.0, rng) >= 120.0 for _ in range(100))

    def test_retry_after_capped(self) -> None:
        """A Retry-After beyond the cap waits the cap."""
        assert retry_delay(0, 10_000.0, 2.0, 300.0, random.Random(4)) == 300.0

    def test_deterministic_with_seeded_rng(self) -> None:
        """The same seed gives the same delays."""
        first = [retry_delay(a, None, 2.0, 300.0, random.Random(5)) for a in range(5)]
        second = [retry_delay(a, None, 2.0, 300.0, random.Random(5)) for a in range(5)]
        assert first == second

    def test_huge_attempt_does_not_overflow(self) -> None:
        """Absurd attempt numbers still give a capped delay."""
        assert 0.0 <= retry_delay(10_000, None, 2.0, 300.0, random.Random(6)) <= 300.0


class TestParseRetryAfter:
    """Retry-After values per RFC 9110 §10.2.3."""

    NOW = datetime(2015, 10, 21, 7, 28, 0, tzinfo=UTC)

    def test_delta_seconds(self) -> None:
        """A number of seconds is taken as is."""
        assert parse_retry_after("120", self.NOW) == 120.0
        assert parse_retry_after(" 0 ", self.NOW) == 0.0

    def test_http_date(self) -> None:
        """An HTTP-date becomes the seconds from now until then."""
        assert parse_retry_after("Wed, 21 Oct 2015 07:30:00 GMT", self.NOW) == 120.0

    def test_past_date_is_zero(self) -> None:
        """A date already past means no wait."""
        assert parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", self.NOW) == 0.0

    @pytest.mark.parametrize("value", [None, "", "soon", "-5", "1.5", "١٢"])
    def test_unreadable(self, value: str | None) -> None:
        """Missing or unreadable values are ignored."""
        assert parse_retry_after(value, self.NOW) is None


class TestPacing:
    """No two requests of the process start closer than request_interval."""

    def test_first_request_does_not_wait(self, fake_time: FakeTime) -> None:
        """The process's first request goes out at once."""
        server = Server(fake_time, ok(ONE))
        with make_client(server) as client:
            client.fetch_ids(["2401.00001"])
        assert fake_time.sleeps == []

    def test_requests_of_one_client_are_spaced(self, fake_time: FakeTime) -> None:
        """Consecutive requests start request_interval apart."""
        server = Server(fake_time, ok(ONE))
        with make_client(server) as client:
            for _ in range(3):
                client.fetch_ids(["2401.00001"])
        assert server.times == [1000.0, 1003.0, 1006.0]
        assert client.backoff_seconds == 0.0

    def test_requests_of_two_clients_are_spaced(self, fake_time: FakeTime) -> None:
        """Two client instances share one process-wide pacer."""
        server = Server(fake_time, ok(ONE))
        with make_client(server) as first, make_client(server) as second:
            first.fetch_ids(["2401.00001"])
            second.fetch_ids(["2401.00001"])
            first.fetch_ids(["2401.00001"])
        assert server.times == [1000.0, 1003.0, 1006.0]

    def test_each_client_waits_its_own_interval(self, fake_time: FakeTime) -> None:
        """A client with a shorter interval waits only that long after another's request."""
        server = Server(fake_time, ok(ONE))
        with make_client(server) as slow, make_client(server, request_interval=1.0) as fast:
            slow.fetch_ids(["2401.00001"])
            fast.fetch_ids(["2401.00001"])
        assert server.times == [1000.0, 1001.0]

    def test_time_already_passed_is_not_waited_again(self, fake_time: FakeTime) -> None:
        """Time spent elsewhere since the last request counts toward the interval."""
        server = Server(fake_time, ok(ONE))
        with make_client(server) as client:
            client.fetch_ids(["2401.00001"])
            fake_time.now += 2.0
            client.fetch_ids(["2401.00001"])
        assert fake_time.sleeps == [pytest.approx(1.0)]

    def test_wait_never_exceeds_the_interval(self) -> None:
        """A last start from another clock cannot make a client wait more than one interval."""
        early, late = FakeTime(now=1_000_000.0), FakeTime(now=5.0)
        with make_client(Server(early, ok(ONE))) as first:
            first.fetch_ids(["2401.00001"])
        with make_client(Server(late, ok(ONE))) as second:
            second.fetch_ids(["2401.00001"])
        assert late.sleeps == [3.0]

    def test_retries_are_paced_too(self, fake_time: FakeTime) -> None:
        """A retry whose backoff is shorter than the interval still waits the interval."""
        server = Server(fake_time, httpx.Response(500), ok(ONE))
        with make_client(server, backoff_base=0.0) as client:
            client.fetch_ids(["2401.00001"])
        assert server.times == [1000.0, 1003.0]


class TestRetries:
    """Which failures are retried, how long the client waits, and what it raises at the end."""

    def test_503_with_retry_after_is_honoured(self, fake_time: FakeTime) -> None:
        """A 503 asking for 120 s is retried after at least 120 s."""
        server = Server(fake_time, httpx.Response(503, headers={"Retry-After": "120"}), ok(ONE))
        with make_client(server) as client:
            records = client.fetch_ids(["2401.00001"])
        assert [r.arxiv_id for r in records] == ["2401.00001"]
        assert fake_time.sleeps[0] >= 120.0
        assert server.times[1] - server.times[0] >= 120.0
        assert (client.requests, client.retries) == (2, 1)
        assert client.backoff_seconds == pytest.approx(fake_time.sleeps[0])

    def test_retry_after_http_date(self, fake_time: FakeTime) -> None:
        """An HTTP-date Retry-After is measured against the response's Date header."""
        headers = {
            "Date": "Wed, 21 Oct 2015 07:28:00 GMT",
            "Retry-After": "Wed, 21 Oct 2015 07:29:30 GMT",
        }
        server = Server(fake_time, httpx.Response(503, headers=headers), ok(ONE))
        with make_client(server) as client:
            client.fetch_ids(["2401.00001"])
        assert fake_time.sleeps[0] >= 90.0

    def test_a_retry_after_past_backoff_max_is_not_waited_in_place(
        self, fake_time: FakeTime
    ) -> None:
        """A 429 asking for a day stops the request at once: Throttled says when to come back,
        at most throttle_cooldown_max later."""
        server = Server(fake_time, httpx.Response(429, headers={"Retry-After": "86400"}), ok(ONE))
        client = make_client(server, backoff_max=60.0)
        with client, pytest.raises(Throttled) as caught:
            client.fetch_ids(["2401.00001"])
        assert fake_time.sleeps == []
        assert len(server.requests) == 1
        assert caught.value.retry_after == 86400.0
        assert caught.value.next_try_at == fake_time.wall() + timedelta(hours=1)

    @pytest.mark.parametrize(
        "headers",
        [
            pytest.param({"Retry-After": "9" * 400}, id="400-digit-retry-after"),
            pytest.param({"Retry-After": "9" * 4301}, id="4301-digit-retry-after"),
            pytest.param(
                {
                    "Date": "Mon, 01 Jan 99999999999999999999999 00:00:00 GMT",
                    "Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT",
                },
                id="huge-year-date",
            ),
        ],
    )
    def test_a_hostile_retry_after_is_a_capped_cooldown(
        self, fake_time: FakeTime, headers: dict[str, str]
    ) -> None:
        """A 503 asking for more than a float holds, or dated in no year a datetime holds,
        is a throttle: the error carries a wait no bigger than a day, and the host's cooldown
        ends no later than throttle_cooldown_max."""
        server = Server(fake_time, httpx.Response(503, headers=headers))
        client = make_client(server, backoff_max=60.0, max_retries=2)
        with client, pytest.raises(Throttled) as caught:
            client.fetch_ids(["2401.00001"])
        assert fake_time.sleeps == []
        assert caught.value.retry_after == MAX_RETRY_AFTER
        assert caught.value.next_try_at == fake_time.wall() + timedelta(hours=1)

    def test_429_is_retried(self, fake_time: FakeTime) -> None:
        """A 429 without Retry-After is retried with backoff."""
        server = Server(fake_time, httpx.Response(429), ok(ONE))
        with make_client(server) as client:
            assert len(client.fetch_ids(["2401.00001"])) == 1
        assert client.retries == 1

    def test_429_exhausted_raises_rate_limited(self, fake_time: FakeTime) -> None:
        """Retries exhausted on 429 raise RateLimited carrying the server's wait."""
        server = Server(fake_time, httpx.Response(429, headers={"Retry-After": "30"}))
        with make_client(server, max_retries=2) as client, pytest.raises(RateLimited) as caught:
            client.fetch_ids(["2401.00001"])
        assert caught.value.retry_after == 30.0
        assert "429" in str(caught.value)
        assert len(server.requests) == 3

    @pytest.mark.parametrize(
        "error",
        [
            httpx.ReadTimeout("read timed out"),
            httpx.ConnectTimeout("connect timed out"),
            httpx.ConnectError("connection refused"),
            httpx.ReadError("connection reset by peer"),
            httpx.RemoteProtocolError("server disconnected without sending a response"),
        ],
    )
    def test_transport_errors_are_retried(self, fake_time: FakeTime, error: Exception) -> None:
        """Timeouts, connection errors and protocol errors are retried."""
        server = Server(fake_time, error, ok(ONE))
        with make_client(server) as client:
            assert len(client.fetch_ids(["2401.00001"])) == 1
        assert len(server.requests) == 2

    def test_timeouts_exhausted(self, fake_time: FakeTime) -> None:
        """Every try timing out raises RetryableUpstreamError naming the timeout, with its cause."""
        server = Server(fake_time, httpx.ReadTimeout("read timed out"))
        with make_client(server, max_retries=3) as client:
            with pytest.raises(RetryableUpstreamError, match="ReadTimeout") as caught:
                client.fetch_ids(["2401.00001"])
            assert not isinstance(caught.value, RateLimited)
            assert isinstance(caught.value.__cause__, httpx.ReadTimeout)
            assert (client.requests, client.retries) == (4, 3)
        assert len(fake_time.sleeps) >= 3

    def test_backoff_grows(self, fake_time: FakeTime) -> None:
        """Backoff delays stay within the exponential ceilings attempt after attempt."""
        server = Server(fake_time, httpx.Response(502))
        client = make_client(server, max_retries=5, request_interval=0.0)
        with client, pytest.raises(RetryableUpstreamError, match="502"):
            client.fetch_ids(["2401.00001"])
        assert len(fake_time.sleeps) == 5
        for attempt, slept in enumerate(fake_time.sleeps):
            assert 0.0 <= slept <= 2.0 * 2**attempt
        assert client.backoff_seconds == pytest.approx(sum(fake_time.sleeps))

    def test_no_retries_configured(self, fake_time: FakeTime) -> None:
        """With max_retries=0 a 500 fails at once."""
        server = Server(fake_time, httpx.Response(500))
        with make_client(server, max_retries=0) as client, pytest.raises(RetryableUpstreamError):
            client.fetch_ids(["2401.00001"])
        assert len(server.requests) == 1
        assert fake_time.sleeps == []

    def test_400_error_feed_is_not_retried(self, fake_time: FakeTime) -> None:
        """A 400 carrying arXiv's error feed raises ApiError with arXiv's message, once."""
        body = (FIXTURES / "error_http400_bad_id.xml").read_bytes()
        server = Server(fake_time, httpx.Response(400, content=body))
        with make_client(server) as client, pytest.raises(ApiError) as caught:
            client.fetch_ids(["abc"])
        assert str(caught.value) == "incorrect id format for abc"
        assert len(server.requests) == 1

    def test_other_4xx_is_permanent(self, fake_time: FakeTime) -> None:
        """A 404 HTML page raises PermanentUpstreamError naming the status, once."""
        server = Server(fake_time, httpx.Response(404, content=b"<html>Not Found</html>"))
        with make_client(server) as client:
            with pytest.raises(PermanentUpstreamError, match="404") as caught:
                client.fetch_ids(["2401.00001"])
            assert not isinstance(caught.value, FeedError | ApiError)
        assert len(server.requests) == 1

    def test_redirect_is_permanent(self, fake_time: FakeTime) -> None:
        """A redirect is not followed: PermanentUpstreamError names status, target and the
        setting to change."""
        response = httpx.Response(301, headers={"Location": "https://arxiv.org/api/query"})
        server = Server(fake_time, response)
        with (
            make_client(server) as client,
            pytest.raises(
                PermanentUpstreamError, match=r"301 .*https://arxiv\.org/api/query"
            ) as caught,
        ):
            client.fetch_ids(["2401.00001"])
        assert str(caught.value).endswith("; point arxiv.api_url at the final address")
        assert len(server.requests) == 1

    def test_a_feed_redirect_names_author_feed_url(self, fake_time: FakeTime) -> None:
        """An author feed's redirect names the setting that holds the feed's address."""
        moved = httpx.Response(302, headers={"Location": "https://arxiv.org/a/new/warner_s_1"})
        server = Server(fake_time, moved)
        with pytest.raises(PermanentUpstreamError) as caught:
            make_client(server).author_feed("warner_s_1")
        assert str(caught.value).endswith("; point arxiv.author_feed_url at the final address")

    def test_unparseable_200_is_not_retried(self, fake_time: FakeTime) -> None:
        """A 200 whose body is not a feed raises FeedError without retrying."""
        server = Server(fake_time, ok(b"<html><body>maintenance</body></html>"))
        with make_client(server) as client, pytest.raises(FeedError):
            client.fetch_ids(["2401.00001"])
        assert len(server.requests) == 1

    def test_non_retryable_transport_error(self, fake_time: FakeTime) -> None:
        """An httpx error another try cannot fix becomes PermanentUpstreamError with its cause."""
        server = Server(fake_time, httpx.UnsupportedProtocol("no such scheme"))
        with make_client(server) as client, pytest.raises(PermanentUpstreamError) as caught:
            client.fetch_ids(["2401.00001"])
        assert isinstance(caught.value.__cause__, httpx.UnsupportedProtocol)
        assert len(server.requests) == 1


class TestResponseCap:
    """Bodies beyond max_response_bytes are refused without retrying."""

    def test_declared_length_over_cap(self, fake_time: FakeTime) -> None:
        """A Content-Length over the cap is refused."""
        server = Server(fake_time, ok(b"x" * 2048))
        client = make_client(server, max_response_bytes=1024)
        with client, pytest.raises(FeedError, match="max_response_bytes"):
            client.fetch_ids(["2401.00001"])
        assert len(server.requests) == 1

    def test_streamed_body_over_cap(self, fake_time: FakeTime) -> None:
        """A body without Content-Length is cut off once it passes the cap, while it parses."""
        pulled: list[int] = []

        def chunks() -> Iterator[bytes]:
            yield ONE[: ONE.index(b"<entry>")]
            for n in range(100):
                pulled.append(n)
                yield b"<!-- " + b"x" * 500 + b" -->"

        server = Server(fake_time, lambda request: httpx.Response(200, content=chunks()))
        client = make_client(server, max_response_bytes=1024)
        with client, pytest.raises(FeedError, match="max_response_bytes"):
            client.fetch_ids(["2401.00001"])
        assert len(pulled) < 10
        assert len(server.requests) == 1

    def test_body_at_cap_is_read(self, fake_time: FakeTime) -> None:
        """A body of exactly the cap is accepted."""
        body = ONE + b" " * (2048 - len(ONE))
        server = Server(fake_time, ok(body))
        with make_client(server, max_response_bytes=2048) as client:
            assert len(client.fetch_ids(["2401.00001"])) == 1


class TestAttemptDeadline:
    """``timeout`` bounds a whole attempt on a real connection, not each read."""

    def test_dripped_headers_time_out_with_the_attempt(self) -> None:
        """Headers dripped a byte per 0.2 s fail a timeout=1 attempt, retryably, in about 1 s."""
        with HeaderDripper(interval=0.2, lifetime=5.0) as server:
            client = ArxivClient(
                settings(api_url=server.url, timeout=1.0, max_retries=0, request_interval=0.0)
            )
            started = time.monotonic()
            with client, pytest.raises(RetryableUpstreamError, match="Timeout") as caught:
                client.fetch_ids(["2401.00001"])
            elapsed = time.monotonic() - started
        assert isinstance(caught.value.__cause__, httpx.TimeoutException)
        assert 0.9 <= elapsed < 2.0
        assert server.connections == 1


def pages_server(fake_time: FakeTime, pages: list[bytes]) -> Server:
    return Server(fake_time, *[ok(p) for p in pages])


class TestSearch:
    """Paging a search_query and checking the pages add up."""

    def test_three_pages(self, fake_time: FakeTime) -> None:
        """25 results in pages of 10 take three requests with the right parameters."""
        ids = paper_ids(25)
        server = pages_server(
            fake_time,
            [
                make_feed(ids[0:10], total=25, start=0),
                make_feed(ids[10:20], total=25, start=10),
                make_feed(ids[20:25], total=25, start=20),
            ],
        )
        with make_client(server) as client:
            pages = list(client.search('au:"Ada Lovelace"'))
        assert [len(p.records) for p in pages] == [10, 10, 5]
        assert [r.arxiv_id for p in pages for r in p.records] == ids
        assert server.params == [
            {
                "search_query": 'au:"Ada Lovelace"',
                "sortBy": "submittedDate",
                "sortOrder": "descending",
                "start": str(start),
                "max_results": "10",
            }
            for start in (0, 10, 20)
        ]
        assert all(r.url.path == "/api/query" for r in server.requests)
        assert server.times == [1000.0, 1003.0, 1006.0]

    def test_a_limit_stops_the_search_at_that_many_results(self, fake_time: FakeTime) -> None:
        """``limit=15`` of 25 results: the second request asks for the 5 missing, and no
        third is sent (issue 34: an author's name query read up to the cap)."""
        ids = paper_ids(25)
        server = pages_server(
            fake_time,
            [make_feed(ids[0:10], total=25, start=0), make_feed(ids[10:15], total=25, start=10)],
        )
        with make_client(server) as client:
            pages = list(client.search('au:"Ada Lovelace"', limit=15))
        assert [r.arxiv_id for p in pages for r in p.records] == ids[:15]
        assert [(p["start"], p["max_results"]) for p in server.params] == [("0", "10"), ("10", "5")]

    def test_a_page_longer_than_asked_is_refused_unread(self, fake_time: FakeTime) -> None:
        """A page of 12 entries for max_results=10 keeps none past 10, and is refused."""
        server = pages_server(fake_time, [make_feed(paper_ids(12), total=25, start=0)])
        with make_client(server) as client, pytest.raises(FeedError, match="holds 12 entries"):
            list(client.search('au:"Ada Lovelace"'))

    def test_pages_are_yielded_as_they_arrive(self, fake_time: FakeTime) -> None:
        """The first page is yielded before the second is requested."""
        ids = paper_ids(15)
        server = pages_server(
            fake_time,
            [make_feed(ids[:10], total=15, start=0), make_feed(ids[10:], total=15, start=10)],
        )
        with make_client(server) as client:
            pages = client.search("all:x")
            first = next(pages)
            assert isinstance(first, FeedPage)
            assert len(server.requests) == 1
            assert len(list(pages)) == 1
        assert len(server.requests) == 2

    def test_exact_multiple_of_page_size(self, fake_time: FakeTime) -> None:
        """20 results in pages of 10 take a third request, which confirms nothing follows."""
        ids = paper_ids(20)
        server = pages_server(
            fake_time,
            [
                make_feed(ids[:10], total=20, start=0),
                make_feed(ids[10:], total=20, start=10),
                make_feed([], total=20, start=20),
            ],
        )
        with make_client(server) as client:
            assert sum(len(p.records) for p in client.search("all:x")) == 20
        assert len(server.requests) == 3

    def test_total_lowered_to_a_page_multiple_is_caught(self, fake_time: FakeTime) -> None:
        """A totalResults that hides a further page fails the search instead of hiding papers."""
        ids = paper_ids(15)
        server = pages_server(
            fake_time,
            [make_feed(ids[:10], total=10, start=0), make_feed(ids[10:], total=15, start=10)],
        )
        with make_client(server) as client, pytest.raises(FeedError, match="larger than announced"):
            list(client.search("all:x"))

    def test_no_results(self, fake_time: FakeTime) -> None:
        """An empty result set is one empty page."""
        server = pages_server(fake_time, [make_feed([], total=0, start=0)])
        with make_client(server) as client:
            pages = list(client.search("au:nobody"))
        assert [p.total_results for p in pages] == [0]
        assert len(server.requests) == 1

    def _search_fails(self, fake_time: FakeTime, pages: list[bytes], message: str) -> Server:
        server = pages_server(fake_time, pages)
        with make_client(server) as client, pytest.raises(FeedError, match=message):
            list(client.search("all:x"))
        return server

    def test_empty_page_before_total(self, fake_time: FakeTime) -> None:
        """An empty page while totalResults is not reached fails the search."""
        ids = paper_ids(10)
        pages = [make_feed(ids, total=25, start=0), make_feed([], total=25, start=10)]
        self._search_fails(fake_time, pages, "empty although totalResults is 25")

    def test_empty_first_page_with_results(self, fake_time: FakeTime) -> None:
        """An empty first page claiming results (the old backend's habit) fails the search."""
        self._search_fails(fake_time, [make_feed([], total=7, start=0)], "empty")

    def test_total_changes_between_pages(self, fake_time: FakeTime) -> None:
        """totalResults changing between pages fails the search."""
        ids = paper_ids(20)
        pages = [make_feed(ids[:10], total=25, start=0), make_feed(ids[10:], total=26, start=10)]
        self._search_fails(fake_time, pages, "changed from 25 to 26")

    def test_short_page_that_is_not_the_last(self, fake_time: FakeTime) -> None:
        """A short page before the end means fewer entries than totalResults: failure."""
        ids = paper_ids(8)
        self._search_fails(fake_time, [make_feed(ids, total=25, start=0)], "8 of 10 entries")

    def test_more_entries_than_total(self, fake_time: FakeTime) -> None:
        """A page with more entries than totalResults leaves fails the search."""
        self._search_fails(
            fake_time, [make_feed(paper_ids(5), total=3, start=0)], "totalResults is 3"
        )

    def test_page_larger_than_max_results(self, fake_time: FakeTime) -> None:
        """A page holding more entries than max_results fails the search."""
        self._search_fails(
            fake_time, [make_feed(paper_ids(11), total=30, start=0)], "more than max_results=10"
        )

    def test_id_repeated_across_pages(self, fake_time: FakeTime) -> None:
        """An id seen on an earlier page (results shifted) fails the search."""
        ids = paper_ids(19)
        pages = [
            make_feed(ids[:10], total=20, start=0),
            make_feed([ids[9], *ids[10:19]], total=20, start=10),
        ]
        self._search_fails(fake_time, pages, "2401.00010 appears twice")

    def test_start_index_mismatch(self, fake_time: FakeTime) -> None:
        """A page whose startIndex is not the requested start fails the search."""
        ids = paper_ids(20)
        pages = [make_feed(ids[:10], total=20, start=0), make_feed(ids[10:], total=20, start=0)]
        self._search_fails(fake_time, pages, "startIndex 0")

    def test_error_feed_during_search(self, fake_time: FakeTime) -> None:
        """arXiv's error feed on a 200 page surfaces as ApiError."""
        body = (FIXTURES / "error_http400_bad_id.xml").read_bytes()
        server = Server(fake_time, ok(body))
        with make_client(server) as client, pytest.raises(ApiError, match="abc"):
            list(client.search("all:x"))


class TestFetchIds:
    """Fetching known ids in chunks of page_size."""

    def test_chunks(self, fake_time: FakeTime) -> None:
        """Five ids with page_size 2 take three requests of 2, 2 and 1 ids."""
        ids = paper_ids(5)

        def answer(request: httpx.Request) -> httpx.Response:
            wanted = request.url.params["id_list"].split(",")
            return ok(make_feed(wanted, total=len(wanted), start=0, per_page=len(wanted)))

        server = Server(fake_time, answer)
        with make_client(server, page_size=2) as client:
            records = client.fetch_ids(ids)
        assert [r.arxiv_id for r in records] == ids
        assert server.params == [
            {"id_list": "2401.00001,2401.00002", "start": "0", "max_results": "2"},
            {"id_list": "2401.00003,2401.00004", "start": "0", "max_results": "2"},
            {"id_list": "2401.00005", "start": "0", "max_results": "1"},
        ]

    def test_a_chunk_never_outgrows_a_url(self, fake_time: FakeTime) -> None:
        """With page_size 2000, 1,000 versioned ids still go 466 to a request at most."""

        def answer(request: httpx.Request) -> httpx.Response:
            wanted = request.url.params["id_list"].split(",")
            return ok(make_feed(wanted, total=len(wanted), start=0, per_page=len(wanted)))

        server = Server(fake_time, answer)
        with make_client(server, page_size=2000, max_response_bytes=64 * 1024 * 1024) as client:
            records = client.fetch_ids([f"{i}v1" for i in paper_ids(1000)])
        assert len(records) == 1000
        assert [p["max_results"] for p in server.params] == ["466", "466", "68"]

    def test_versioned_and_old_style_ids(self, fake_time: FakeTime) -> None:
        """Versioned and old-style ids are sent as given."""
        body = (FIXTURES / "single_affiliations_journalref_oldstyle_id.xml").read_bytes()
        server = Server(fake_time, ok(body))
        with make_client(server) as client:
            records = client.fetch_ids(["astro-ph/0601001v1"])
        assert records[0].arxiv_id == "astro-ph/0601001"
        assert server.params[0]["id_list"] == "astro-ph/0601001v1"

    def test_missing_id_is_an_untrustworthy_answer(self, fake_time: FakeTime) -> None:
        """An asked-for id that does not come back (an empty feed, say) fails the fetch."""
        server = Server(fake_time, ok((FIXTURES / "empty_total0.xml").read_bytes()))
        with make_client(server) as client, pytest.raises(FeedError, match="did not return"):
            client.fetch_ids(["2401.99999"])

    def test_no_ids_no_request(self, fake_time: FakeTime) -> None:
        """An empty id list sends nothing."""
        server = Server(fake_time, ok(ONE))
        with make_client(server) as client:
            assert client.fetch_ids([]) == []
        assert server.requests == []

    def test_record_not_asked_for(self, fake_time: FakeTime) -> None:
        """A record for an id that was not requested is refused."""
        server = Server(fake_time, ok(make_feed(["2401.09999"], total=1, start=0)))
        with make_client(server) as client, pytest.raises(FeedError, match="not asked for"):
            client.fetch_ids(["2401.00001"])

    def test_total_disagrees_with_entries(self, fake_time: FakeTime) -> None:
        """totalResults larger than the entries sent for an id list is refused."""
        server = Server(fake_time, ok(make_feed(["2401.00001"], total=2, start=0)))
        with make_client(server) as client, pytest.raises(FeedError, match="says 2 results"):
            client.fetch_ids(["2401.00001", "2401.00002"])


class TestIdListBatches:
    """How many versioned ids one id_list request carries."""

    def test_as_many_as_the_url_budget_holds(self) -> None:
        """1,000 versioned new-style ids (15 encoded characters each) take three requests."""
        ids = [f"{i}v1" for i in paper_ids(1000)]
        batches = id_list_batches(ids)
        assert [len(b) for b in batches] == [466, 466, 68]
        assert [i for b in batches for i in b] == ids
        for batch in batches:
            encoded = str(httpx.QueryParams({"id_list": ",".join(batch)}))
            assert len(encoded) - len("id_list=") <= MAX_ID_LIST_CHARS

    def test_encoded_slashes_count(self) -> None:
        """An old-style id's slash is sent as %2F, and a batch is measured as sent."""
        ids = ["math.GT/0309136v1"] * 3
        assert [len(b) for b in id_list_batches(ids, max_chars=45)] == [2, 1]

    def test_never_more_entries_than_arxiv_returns_at_once(self) -> None:
        """However short the ids, a request asks for at most max_ids of them."""
        assert [len(b) for b in id_list_batches(paper_ids(5), max_ids=2)] == [2, 2, 1]
        assert id_list_batches([]) == []


class TestFetchVersions:
    """Earlier versions by versioned id: many per request, each answer exactly as asked."""

    def test_one_request_for_many_papers_and_versions(self, fake_time: FakeTime) -> None:
        """Five versions of three papers come back in one request, in one yielded list."""
        ids = ["2401.00001v1", "2401.00001v2", "2401.00002v1", "2401.00003v1", "2401.00003v2"]

        def answer(request: httpx.Request) -> httpx.Response:
            wanted = request.url.params["id_list"].split(",")
            return ok(make_feed(wanted, total=len(wanted), start=0, per_page=len(wanted)))

        server = Server(fake_time, answer)
        with make_client(server, page_size=2) as client:
            answers = list(client.fetch_versions(ids))
        assert [[f"{r.arxiv_id}v{r.version}" for r in records] for records in answers] == [ids]
        assert server.params == [{"id_list": ",".join(ids), "start": "0", "max_results": "5"}]

    @pytest.mark.parametrize("sent", ["2401.00001v2", "2401.00009v1"])
    def test_an_entry_of_another_version_or_id_is_refused(
        self, fake_time: FakeTime, sent: str
    ) -> None:
        """Asked for v1, an entry carrying v2 or another id fails the fetch."""
        server = Server(fake_time, ok(make_feed([sent], total=1, start=0)))
        with make_client(server) as client, pytest.raises(FeedError, match="not asked for"):
            list(client.fetch_versions(["2401.00001v1"]))


TOO_MANY = httpx.Response(429)
FEED_URL = "https://arxiv.test/a/"


class TestThrottling:
    """A 429, or a 503 with Retry-After, cools its host down for every request of every client."""

    def test_a_throttle_is_retried_once_the_host_cooled_down(self, fake_time: FakeTime) -> None:
        """The retry waits the first step (throttle_cooldown), not a jittered backoff."""
        server = Server(fake_time, TOO_MANY, ok(ONE))
        with make_client(server) as client:
            client.fetch_ids(["2401.00001"])
        assert server.times == [1000.0, 1060.0]
        assert client.backoff_seconds == 60.0

    def test_throttles_in_a_row_double_the_step(self, fake_time: FakeTime) -> None:
        """60, 120, 240 s between the tries of one request while arXiv keeps throttling."""
        server = Server(fake_time, TOO_MANY, TOO_MANY, TOO_MANY, ok(ONE))
        with make_client(server) as client:
            client.fetch_ids(["2401.00001"])
        assert server.times == [1000.0, 1060.0, 1180.0, 1420.0]

    def test_a_cooldown_past_backoff_max_stops_the_request(self, fake_time: FakeTime) -> None:
        """Longer than the client waits for anything: Throttled says when, nothing more is sent."""
        server = Server(fake_time, TOO_MANY, TOO_MANY, TOO_MANY, ok(ONE))
        client = make_client(server, backoff_max=100.0)
        with client, pytest.raises(Throttled) as caught:
            client.fetch_ids(["2401.00001"])
        assert server.times == [1000.0, 1060.0]
        assert caught.value.host == "export.arxiv.test"
        assert caught.value.next_try_at == FakeTime.EPOCH + timedelta(seconds=1180)
        assert str(caught.value) == (
            "arXiv is throttling us (export.arxiv.test: 2 throttled answers in a row),"
            " next try at 2026-12-01 12:19:40 UTC; its last answer: HTTP 429 Too Many Requests"
        )

    def test_every_attempt_throttled_raises_throttled(self, fake_time: FakeTime) -> None:
        """Retries used up on throttles: the error is Throttled, a RateLimited."""
        server = Server(fake_time, TOO_MANY)
        client = make_client(server, max_retries=1)
        with client, pytest.raises(Throttled) as caught:
            client.fetch_ids(["2401.00001"])
        assert isinstance(caught.value, RateLimited)
        assert caught.value.next_try_at == FakeTime.EPOCH + timedelta(seconds=1060 + 120)

    def test_another_client_waits_for_the_same_cooldown(self, fake_time: FakeTime) -> None:
        """The cooldown is the host's: a second client's first request waits for its end."""
        server = Server(fake_time, TOO_MANY, ok(ONE))
        first = make_client(server, max_retries=0)
        with first, pytest.raises(Throttled):
            first.fetch_ids(["2401.00001"])
        with make_client(server) as second:
            second.fetch_ids(["2401.00001"])
        assert server.times == [1000.0, 1060.0]

    def test_each_host_cools_down_on_its_own(self, fake_time: FakeTime) -> None:
        """A throttling API host does not slow the author feeds' host."""
        server = Server(fake_time, TOO_MANY, ok(ONE))
        client = make_client(server, max_retries=0, author_feed_url=FEED_URL)
        with client:
            with pytest.raises(Throttled):
                client.fetch_ids(["2401.00001"])
            client.author_feed("warner_s_1")
        assert server.times == [1000.0, 1003.0]  # the feed only waits request_interval

    def test_a_cooldown_set_while_waiting_for_the_turn_is_waited_too(
        self, fake_time: FakeTime
    ) -> None:
        """Another replica throttled while this one waited for its turn: it waits the cooldown."""
        server = Server(fake_time, ok(ONE))
        store = pacing._COOLDOWNS

        class OtherReplicaThrottled:
            def wait_turn(
                self, interval: float, clock: Callable[[], float], sleep: Callable[[float], None]
            ) -> float:
                if not store.read("export.arxiv.test").throttling:
                    store.update(
                        "export.arxiv.test",
                        lambda _: Cooldown(60.0, fake_time.wall() + timedelta(seconds=45), None, 1),
                    )
                return 0.0

        client = ArxivClient(
            settings(),
            transport=server.transport(),
            sleep=fake_time.sleep,
            clock=fake_time.clock,
            now=fake_time.wall,
            pacer=OtherReplicaThrottled(),
        )
        with client:
            client.fetch_ids(["2401.00001"])
        assert server.times == [1045.0]

    def test_answers_after_a_storm_decay_the_step_slowly(self, fake_time: FakeTime) -> None:
        """After throttles at 60 and 120 s, answers space the next requests 60 s, then 3 s."""
        server = Server(fake_time, TOO_MANY, TOO_MANY, ok(ONE), ok(ONE), ok(ONE))
        with make_client(server) as client:
            for _ in range(3):
                client.fetch_ids(["2401.00001"])
        assert server.times == [1000.0, 1060.0, 1180.0, 1240.0, 1243.0]

    def test_a_503_without_retry_after_is_no_throttle(self, fake_time: FakeTime) -> None:
        """A plain 503 is backed off as before and leaves the host without a cooldown."""
        server = Server(fake_time, httpx.Response(503), ok(ONE))
        with make_client(server) as client:
            client.fetch_ids(["2401.00001"])
        assert pacing._COOLDOWNS.read("export.arxiv.test") == Cooldown()
        assert server.times[1] - server.times[0] < 60.0

    def test_check_throttle_refuses_only_a_long_cooldown(self, fake_time: FakeTime) -> None:
        """Work about to start asks first: a wait the client would sleep through is no refusal."""
        server = Server(fake_time, TOO_MANY)
        client = make_client(server, max_retries=0)
        with client, pytest.raises(Throttled):
            client.fetch_ids(["2401.00001"])
        client.check_throttle(API_URL)  # 60 s left, at most backoff_max (300 s)
        pacing._COOLDOWNS.update(
            "export.arxiv.test", lambda c: Cooldown(600.0, fake_time.wall() + timedelta(hours=1))
        )
        with pytest.raises(Throttled, match="one request per 600 s"):
            client.check_throttle(API_URL)
        client.check_throttle(FEED_URL)

    def test_the_given_store_is_read_before_every_request(self, fake_time: FakeTime) -> None:
        """A client given a store (the database's) reads it before each request and writes
        it on each throttle, never the process's own."""
        reads: list[str] = []
        updates: list[str] = []
        local = LocalCooldowns()

        class Recording:
            def read(self, host: str) -> Cooldown:
                reads.append(host)
                return local.read(host)

            def update(self, host: str, change: Callable[[Cooldown], Cooldown]) -> Cooldown:
                updates.append(host)
                return local.update(host, change)

        server = Server(fake_time, TOO_MANY, ok(ONE))
        client = ArxivClient(
            settings(),
            transport=server.transport(),
            sleep=fake_time.sleep,
            clock=fake_time.clock,
            now=fake_time.wall,
            cooldowns=Recording(),
        )
        with client:
            client.fetch_ids(["2401.00001"])
        assert updates == ["export.arxiv.test", "export.arxiv.test"]  # the throttle, the answer
        assert reads.count("export.arxiv.test") >= 2
        assert pacing._COOLDOWNS.read("export.arxiv.test") == Cooldown()

    @pytest.mark.parametrize(
        ("url", "host"),
        [
            ("https://export.arxiv.org/api/query", "export.arxiv.org"),
            ("https://arxiv.org/a/", "arxiv.org"),
            ("http://127.0.0.1:8080/oai", "127.0.0.1:8080"),
            ("https://user:secret@OAIPMH.arxiv.org/oai", "oaipmh.arxiv.org"),
        ],
    )
    def test_a_cooldown_belongs_to_a_host(self, url: str, host: str) -> None:
        """The host name, lower-cased, with its port if the URL gives one; never the password."""
        assert arxiv_host(url) == host


class TestPacer:
    """Who spaces the requests: the process, or a pacer shared with other replicas."""

    def test_requests_go_through_the_given_pacer(self, fake_time: FakeTime) -> None:
        """A client given a pacer asks it before every attempt, and counts what it waited."""
        calls: list[float] = []

        class Recording:
            def wait_turn(
                self, interval: float, clock: Callable[[], float], sleep: Callable[[float], None]
            ) -> float:
                calls.append(interval)
                sleep(1.25)
                return 1.25

        before = _sample("syncd_upstream_pacing_wait_seconds_total")
        server = Server(fake_time, httpx.Response(503), ok(ONE))
        client = ArxivClient(
            settings(backoff_base=0.0),
            transport=server.transport(),
            sleep=fake_time.sleep,
            clock=fake_time.clock,
            pacer=Recording(),
        )
        with client:
            client.fetch_ids(["2401.00001"])
        assert calls == [3.0, 3.0]
        assert _sample("syncd_upstream_pacing_wait_seconds_total") - before == pytest.approx(2.5)


def _sample(name: str) -> float:
    return metrics.REGISTRY.get_sample_value(name) or 0.0


class TestClientSetup:
    """Headers, logging and lifecycle."""

    def test_user_agent_is_descriptive(self, fake_time: FakeTime) -> None:
        """The User-Agent names syncd, its version, a URL and the operator's contact."""
        server = Server(fake_time, ok(ONE))
        with make_client(server, contact="ops@example.org") as client:
            client.fetch_ids(["2401.00001"])
        agent = server.requests[0].headers["User-Agent"]
        assert agent.startswith("syncd/")
        assert "https://" in agent
        assert agent.endswith(" mailto:ops@example.org")

    def test_user_agent_without_contact(self, fake_time: FakeTime) -> None:
        """Without a contact the configured User-Agent is sent unchanged."""
        server = Server(fake_time, ok(ONE))
        with make_client(server, user_agent="syncd-test/1.0 (+https://example.org)") as client:
            client.fetch_ids(["2401.00001"])
        assert server.requests[0].headers["User-Agent"] == "syncd-test/1.0 (+https://example.org)"

    def test_logs_each_attempt_and_retry(self, fake_time: FakeTime) -> None:
        """One arxiv_request line per attempt and one arxiv_retry per retry, without URLs."""
        server = Server(fake_time, httpx.Response(503, headers={"Retry-After": "5"}), ok(ONE))
        with capture_logs() as logs, make_client(server) as client:
            client.fetch_ids(["2401.00001"])
        requests = [e for e in logs if e["event"] == "arxiv_request"]
        retries = [e for e in logs if e["event"] == "arxiv_retry"]
        assert [e["status"] for e in requests] == [503, 200]
        assert [e["attempt"] for e in requests] == [1, 2]
        assert all(e["id_count"] == 1 and e["start"] == 0 for e in requests)
        assert all("duration_ms" in e for e in requests)
        assert len(retries) == 1
        assert retries[0]["retry_delay_in_seconds"] >= 5
        assert "503" in retries[0]["reason"]
        assert not any("url" in e for e in logs)
        assert API_URL not in repr(logs)

    def test_search_logs_the_query(self, fake_time: FakeTime) -> None:
        """A search's request lines carry the query and start."""
        server = Server(fake_time, ok(make_feed([], total=0, start=0)))
        with capture_logs() as logs, make_client(server) as client:
            list(client.search("au:x"))
        assert logs[0]["query"] == "au:x"
        assert logs[0]["start"] == 0

    def test_close(self, fake_time: FakeTime) -> None:
        """The context manager closes the HTTP client."""
        server = Server(fake_time, ok(ONE))
        with make_client(server) as client:
            pass
        assert client._http.is_closed

    def test_default_transport(self) -> None:
        """Built without a transport, the client owns a one-connection pool and closes it."""
        client = ArxivClient(settings())
        client.close()
        assert client._http.is_closed


class TestAuthorFeed:
    """An author's own feed: the same client, pacing and trust, at ``author_feed_url``."""

    def test_reads_the_claimed_papers_at_the_feed_url(self, fake_time: FakeTime) -> None:
        """The feed asked for is ``.atom``, one <author> per person, not ``.atom2``."""
        server = Server(fake_time, ok(make_feed(paper_ids(3), total=3, start=0, per_page=3)))
        client = make_client(server, author_feed_url="http://arxiv.test/a/")
        records = client.author_feed("0000-0002-7970-7855").records
        assert [r.arxiv_id for r in records] == paper_ids(3)
        assert str(server.requests[0].url) == "http://arxiv.test/a/0000-0002-7970-7855.atom"
        assert client.requests == 1

    def test_a_feed_longer_than_the_cap_keeps_its_first_entries(self, fake_time: FakeTime) -> None:
        """``max_results_per_author = 2`` of a 5-entry feed: the first 2 are records, the
        other 3 counted (issue 34), the feed still checked whole against totalResults."""
        server = Server(fake_time, ok(make_feed(paper_ids(5), total=5, start=0, per_page=5)))
        page = make_client(server, max_results_per_author=2).author_feed("warner_s_1")
        assert [r.arxiv_id for r in page.records] == paper_ids(2)
        assert (page.dropped, page.entries) == (3, 5)
        short = Server(fake_time, ok(make_feed(paper_ids(5), total=6, start=0, per_page=5)))
        with pytest.raises(FeedError, match="holds 5 entries but says totalResults 6"):
            make_client(short, max_results_per_author=2).author_feed("warner_s_1")

    def test_a_feed_without_opensearch_counters_is_whole(self, fake_time: FakeTime) -> None:
        """arXiv's author feeds may leave the counters out: the feed is not paged."""
        body = re.sub(
            rb"<opensearch:\w+>\d+</opensearch:\w+>", b"", make_feed(paper_ids(2), total=2, start=0)
        )
        server = Server(fake_time, ok(body))
        assert len(make_client(server).author_feed("warner_s_1").records) == 2

    def test_a_feed_announcing_more_than_it_holds_is_refused(self, fake_time: FakeTime) -> None:
        server = Server(fake_time, ok(make_feed(paper_ids(2), total=5, start=0)))
        with pytest.raises(FeedError, match="totalResults 5"):
            make_client(server).author_feed("warner_s_1")

    def test_an_unknown_id_is_arxivs_400_asked_once(self, fake_time: FakeTime) -> None:
        """arXiv answers an id it knows no author by with 400 "Author <id> not found": that is
        ``UnknownAuthorId`` (the author's data, not an outage), and is not asked again."""
        page = unknown_author_page("0000-0002-1825-0097")
        server = Server(fake_time, httpx.Response(400, content=page))
        with pytest.raises(UnknownAuthorId, match="arXiv knows no author 0000-0002-1825-0097"):
            make_client(server).author_feed("0000-0002-1825-0097")
        assert len(server.requests) == 1

    def test_another_refusal_is_a_permanent_failure_saying_its_status(
        self, fake_time: FakeTime
    ) -> None:
        """A 404 (a wrong author_feed_url, say) is no verdict on the author: it fails as before."""
        server = Server(fake_time, httpx.Response(404, content=b"Not Found"))
        with pytest.raises(PermanentUpstreamError, match="404") as caught:
            make_client(server).author_feed("warner_s_1")
        assert not isinstance(caught.value, UnknownAuthorId)
        assert len(server.requests) == 1

    def test_paced_like_every_request(self, fake_time: FakeTime) -> None:
        server = Server(fake_time, ok(ONE))
        client = make_client(server)
        client.author_feed("warner_s_1")
        client.author_feed("warner_s_1")
        assert server.times[1] - server.times[0] >= 3.0
