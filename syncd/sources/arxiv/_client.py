"""A polite, suspicious client of the arXiv API (``/api/query``).

Polite: one connection, a descriptive User-Agent, and never two requests of
this process starting closer than ``request_interval`` seconds apart, whatever
client instance or thread sends them (arXiv asks for 3 s).  Failures that may
pass (timeouts, connection errors, 429, 5xx) are retried with exponential
backoff and full jitter, honouring ``Retry-After``.  ``timeout`` bounds a whole
attempt, from connecting to the body's last byte, so a server dripping its
headers or body cannot hold a cycle past it.

With several replicas on PostgreSQL the pacer is the database's
(``syncd.storage.pacer``), so the interval holds for all of them together.

When arXiv throttles us (a 429, or a 503 with ``Retry-After``), the host
that answered cools down for every request of every replica: the cooldown
(``syncd.domain.throttle``) lives in the store the client is given
(``syncd.storage.cooldowns`` in the database; by default this process's
memory), and is read before every request.  A throttled request is retried
once the cooldown ends, without a backoff of its own; a cooldown longer than
``backoff_max`` is not waited out in place: the request fails with
``Throttled``, saying when the next try is, and its caller resumes then.

Suspicious: every body is read with a size cap and parsed by ``parse_feed``,
and a search is paged only while the pages add up: a page that is empty, short,
too long, repeats an id, or disagrees about ``totalResults`` fails the search
with ``FeedError`` instead of yielding an incomplete result set.  An answer
for listed ids must hold each of them, at the version asked for, and no other.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self, TypeVar
from urllib.parse import quote

import httpx
import structlog

from syncd import metrics
from syncd.config import ArxivSettings
from syncd.domain.record import Record, split_arxiv_id, versioned_id
from syncd.errors import (
    FeedError,
    PermanentUpstreamError,
    RequestRefused,
    RetryableUpstreamError,
    UnknownAuthorId,
)
from syncd.httpclient import (
    RETRY_AFTER_STATUSES,
    DeadlineTransport,
    attempt_deadline,
    failure_reason,
    parse_retry_after,
    read_capped,
    response_time,
)
from syncd.sources.arxiv._pacing import (
    _COOLDOWNS,
    _PACER,
    CooldownStore,
    Pacer,
    Politeness,
    arxiv_host,
    retry_delay,
)
from syncd.sources.arxiv._parser import AuthorFeedFormat, FeedPage, parse_author_feed, parse_feed

__all__ = [
    "AUTHOR_FEED_FORMAT",
    "MAX_IDS_PER_REQUEST",
    "MAX_ID_LIST_CHARS",
    "ArxivClient",
    "id_list_batches",
    "retry_delay",
]

_log = structlog.get_logger(__name__)

T = TypeVar("T")

# An author's feed is read as ``.atom``, one <author> per person: ``.atom2``
# joins them in one <name>, which only arXiv's own joining rule splits back.
AUTHOR_FEED_FORMAT: AuthorFeedFormat = "atom"

# Transport failures that another try may cure.  The rest of httpx's errors
# (unsupported scheme, a request we built wrongly, an undecodable body) will not.
_RETRYABLE_ERRORS: tuple[type[httpx.HTTPError], ...] = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
    httpx.ProxyError,
)


# How many ids one id_list request carries.  arXiv documents no URL limit,
# but web front ends commonly refuse request lines over 8 KiB (Apache's
# LimitRequestLine defaults to 8190 bytes, nginx's header buffers to 8 KiB), so
# the encoded id_list stays under 7,000 characters, leaving room for the rest
# of the URL: about 460 versioned new-style ids (``2602.09578v1%2C``, 15
# characters) or 310 old-style ones.  arXiv also returns at most 2,000
# entries per request (manual, 3.1.1.2).
MAX_ID_LIST_CHARS = 7000
MAX_IDS_PER_REQUEST = 2000
# What an author's feed answers for an id arXiv knows no author by.
_UNKNOWN_AUTHOR_STATUS = 400


def id_list_batches(
    ids: Sequence[str], max_chars: int = MAX_ID_LIST_CHARS, max_ids: int = MAX_IDS_PER_REQUEST
) -> list[list[str]]:
    """``ids`` in order, cut into the fewest requests whose encoded id_list fits ``max_chars``."""
    batches: list[list[str]] = []
    current: list[str] = []
    size = 0
    for raw in ids:
        item = raw.strip()
        # As httpx sends it: a comma is %2C, a slash (old-style ids) %2F.
        cost = len(quote(item, safe="")) + (3 if current else 0)
        if current and (size + cost > max_chars or len(current) >= max_ids):
            batches.append(current)
            current, size, cost = [], 0, cost - 3
        current.append(item)
        size += cost
    if current:
        batches.append(current)
    return batches


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class _Answer:
    """A response read under the size cap; ``body`` is ``None`` when it exceeded the cap."""

    status: int
    reason: str
    headers: httpx.Headers
    body: bytes | None


class ArxivClient:
    """Searches and fetches arXiv records through the API; use it as a context manager.

    ``requests``, ``retries`` and ``backoff_seconds`` count this instance's
    requests sent, retries made and seconds slept in backoff (or cooldown).
    ``pacer`` and ``cooldowns`` are ``syncd.sources.arxiv._pacing``'s: by
    default this process's own.  ``now`` (UTC) dates cooldowns.
    """

    def __init__(
        self,
        settings: ArxivSettings,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = _utc_now,
        rng: random.Random | None = None,
        pacer: Pacer | None = None,
        cooldowns: CooldownStore | None = None,
    ) -> None:
        self._settings = settings
        self._politeness = Politeness(
            settings,
            pacer if pacer is not None else _PACER,
            cooldowns if cooldowns is not None else _COOLDOWNS,
            sleep=sleep,
            clock=clock,
            now=now,
            rng=rng if rng is not None else random.Random(),
        )
        self._sleep = sleep
        self._clock = clock
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        if transport is None:
            transport = DeadlineTransport(limits)
        user_agent = settings.user_agent
        if settings.contact:
            user_agent = f"{user_agent} mailto:{settings.contact}"
        self._http = httpx.Client(
            transport=transport,
            limits=limits,
            timeout=httpx.Timeout(settings.timeout),
            follow_redirects=False,
            headers={"User-Agent": user_agent, "Accept": "application/atom+xml"},
        )
        self.requests = 0
        self.retries = 0
        self.backoff_seconds = 0.0

    @property
    def settings(self) -> ArxivSettings:
        """The ``[arxiv]`` settings this client follows."""
        return self._settings

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self._http.close()

    def check_throttle(self, url: str) -> None:
        """``Throttled`` when ``url``'s host cools down longer than a request waits: work
        about to start (a batch of cycles, a harvest) is then left for later."""
        self._politeness.cooldown_wait(arxiv_host(url), None, None)

    def search(self, query: str) -> Iterator[FeedPage]:
        """Yield every page of ``search_query=query``, newest submission first, as it arrives.

        Raises ``FeedError`` as soon as the pages stop adding up to ``totalResults``.
        """
        size = self._settings.page_size
        start = 0
        total: int | None = None
        seen: set[str] = set()
        while True:
            params: dict[str, str | int] = {
                "search_query": query,
                "sortBy": "submittedDate",
                "sortOrder": "descending",
                "start": start,
                "max_results": size,
            }
            page = self._get(params, {"query": query, "start": start})
            if start and start >= (total or 0):
                # The probe below: a full last page must be followed by nothing.
                if page.records:
                    raise FeedError(
                        f"totalResults said {total} but entries follow at start={start};"
                        " the result set is larger than announced"
                    )
                return
            total = _check_page(page, start=start, size=size, total=total, seen=seen)
            yield page
            start += len(page.records)
            # A full last page proves nothing: a totalResults lowered to a
            # multiple of the page size would hide the rest as "absent".
            # One more request confirms the end.
            if start >= total and len(page.records) < size:
                return

    def fetch_ids(self, ids: Sequence[str]) -> list[Record]:
        """The records of ``ids`` (versioned or not), one request per ``page_size`` ids.

        Fewer ids go in a request when more would not fit a URL
        (``id_list_batches``).  Every id must come back: callers ask for
        entries they know exist, so a missing one means an answer that
        cannot be trusted (``FeedError``).
        """
        batches = id_list_batches(ids, max_ids=self._settings.page_size)
        return [record for batch in batches for record in self._fetch_listed(batch)]

    def fetch_versions(self, ids: Sequence[str]) -> Iterator[list[Record]]:
        """The records of versioned ids (``2602.09578v1``), one list per request, as they arrive.

        As many ids go in one request as ``id_list_batches`` fits.  Each
        entry must carry exactly an id and version asked for: arXiv's
        ``<id>`` of a versioned entry names its version (manual, 5.1.1), and
        any other answer fails the fetch with ``FeedError``.
        """
        for batch in id_list_batches(ids):
            yield self._fetch_listed(batch)

    def author_feed(self, feed_id: str) -> list[Record]:
        """The papers of an author's own arXiv feed (``<author_feed_url><feed_id>.atom``).

        ``feed_id`` is an arXiv author id or an ORCID iD.  One request, paced
        and retried like every other; the feed is not paged, so an answer
        whose ``totalResults`` says more than it holds, or that lists a
        paper twice, is refused (``FeedError``).
        """
        url = f"{self._settings.author_feed_url}{quote(feed_id, safe='')}.{AUTHOR_FEED_FORMAT}"
        context = {"author_feed": feed_id}
        try:
            page = self.request(url, {}, context, _unpaged_feed, setting="arxiv.author_feed_url")
        except RequestRefused as exc:
            # arxiv-browse answers an id it finds no user by with BadRequest("Author <id> not
            # found"), a 400 (browse/controllers/list_page/author.py); no other 400 comes
            # from that route for a well-formed id.
            if exc.status == _UNKNOWN_AUTHOR_STATUS:
                raise UnknownAuthorId(feed_id) from exc
            raise
        if page.total_results != len(page.records):
            raise FeedError(
                f"the feed of {feed_id} holds {len(page.records)} entries"
                f" but says totalResults {page.total_results}"
            )
        _check_page(page, start=0, size=len(page.records), total=None, seen=set())
        return list(page.records)

    def _fetch_listed(self, ids: list[str]) -> list[Record]:
        """One ``id_list`` request for ``ids``, its answer checked against them."""
        params: dict[str, str | int] = {
            "id_list": ",".join(ids),
            "start": 0,
            "max_results": len(ids),
        }
        page = self._get(params, {"id_count": len(ids), "start": 0})
        _check_id_page(page, ids)
        return list(page.records)

    # -- one request, with retries -------------------------------------------------

    def _get(self, params: dict[str, str | int], context: dict[str, Any]) -> FeedPage:
        """One logical API request: paced, retried while worth it, parsed."""
        return self.request(self._settings.api_url, params, context, parse_feed)

    def request(
        self,
        url: str,
        params: dict[str, str | int],
        context: dict[str, Any],
        parse: Callable[[bytes], T],
        *,
        setting: str = "arxiv.api_url",
    ) -> T:
        """One logical request to any arXiv service: paced, retried while worth it, parsed.

        ``parse`` reads a 200's body, and a 4xx's to find the service's own
        error (it raises it); the API's feeds and OAI-PMH's pages share the
        pacing, deadlines, size cap and retries this way.  ``setting`` is the
        configuration key that holds ``url``, which a redirect's error names.
        """
        settings = self._settings
        host = arxiv_host(url)
        failure = "no attempt made"
        cause: BaseException | None = None
        retry_after: float | None = None
        throttled = False
        for attempt in range(settings.max_retries + 1):
            if attempt:
                delay = self._politeness.retry_wait(
                    attempt, host, failure, retry_after, throttled=throttled
                )
                _log.warning(
                    "arxiv_retry",
                    **context,
                    attempt=attempt + 1,
                    reason=failure,
                    retry_delay_in_seconds=round(delay, 3),
                )
                self.retries += 1
                self.backoff_seconds += delay
                metrics.observe_retry(delay)
                self._sleep(delay)
            sent_at = self._politeness.take_turn(host, failure if throttled else None, retry_after)
            self.requests += 1
            started = self._clock()
            try:
                answer = self._send(url, params)
            except httpx.HTTPError as exc:
                reason = failure_reason(exc)
                self._log_attempt(context, attempt, None, started, error=reason)
                if not isinstance(exc, _RETRYABLE_ERRORS):
                    raise PermanentUpstreamError(f"the request to arXiv failed: {reason}") from exc
                failure, cause, retry_after, throttled = reason, exc, None, False
                continue
            self._log_attempt(context, attempt, answer.status, started)
            status = answer.status
            if status == 429 or status >= 500:
                retry_after = None
                if status in RETRY_AFTER_STATUSES:
                    retry_after = parse_retry_after(
                        answer.headers.get("retry-after"), response_time(answer.headers)
                    )
                throttled = status == 429 or retry_after is not None
                failure = f"HTTP {status} {answer.reason}".rstrip()
                if retry_after is not None:
                    failure += f" (Retry-After {retry_after:g} s)"
                cause = None
                if throttled:
                    self._politeness.note_throttle(host, sent_at, retry_after, status)
                continue
            self._politeness.note_answer(host, sent_at)
            return _accepted(answer, parse, setting, self._settings.max_response_bytes)
        if throttled:
            raise self._politeness.throttled(host, failure, retry_after) from cause
        raise RetryableUpstreamError(
            f"arXiv did not answer usefully in {settings.max_retries + 1} attempts;"
            f" last failure: {failure}"
        ) from cause

    def _send(self, url: str, params: dict[str, str | int]) -> _Answer:
        """Send one GET and read the body, streamed and capped, when it may be of use."""
        # httpx's timeout bounds each read; a server dripping its headers or
        # body a byte at a time could stretch one attempt forever, and later
        # scheduled cycles would be skipped as still running.  The deadline
        # bounds the whole attempt (on the default transport; the body read
        # checks it on any transport).
        deadline = time.monotonic() + self._settings.timeout
        with (
            attempt_deadline(deadline),
            self._http.stream("GET", url, params=params) as response,
        ):
            status = response.status_code
            wanted = status == 200 or (400 <= status < 500 and status != 429)
            body: bytes | None = b""
            if wanted:
                body = read_capped(response, self._settings.max_response_bytes, deadline)
            return _Answer(status, response.reason_phrase, response.headers, body)

    def _log_attempt(
        self,
        context: dict[str, Any],
        attempt: int,
        status: int | None,
        started: float,
        *,
        error: str | None = None,
    ) -> None:
        fields: dict[str, Any] = {
            **context,
            "status": status,
            "attempt": attempt + 1,
            "duration_ms": round((self._clock() - started) * 1000.0, 1),
        }
        if error is not None:
            fields["error"] = error
        _log.info("arxiv_request", **fields)
        metrics.observe_upstream(status)


def _accepted(answer: _Answer, parse: Callable[[bytes], T], setting: str, max_bytes: int) -> T:
    """Turn a final (non-retryable) answer into a page or the right permanent error."""
    status = answer.status
    if status == 200:
        if answer.body is None:
            raise FeedError(
                f"the response exceeds arxiv.max_response_bytes ({max_bytes} bytes); not reading it"
            )
        return parse(answer.body)
    if 300 <= status < 400:
        location = answer.headers.get("location", "(no Location)")
        raise PermanentUpstreamError(
            f"arXiv answered HTTP {status} redirecting to {location[:200]};"
            f" point {setting} at the final address"
        )
    if 400 <= status < 500 and answer.body:
        # Not the service's error answer: report the status below.
        with contextlib.suppress(FeedError):
            parse(answer.body)
    raise RequestRefused(f"arXiv answered HTTP {status} {answer.reason}".rstrip(), status)


def _check_page(page: FeedPage, *, start: int, size: int, total: int | None, seen: set[str]) -> int:
    """Check that a search page fits the ones before it; return the result set's size."""
    if total is not None and page.total_results != total:
        raise FeedError(
            f"totalResults changed from {total} to {page.total_results} between pages"
            " (the result set moved while paging)"
        )
    total = page.total_results
    count = len(page.records)
    if page.start_index != start:
        raise FeedError(f"asked for start={start} but the page says startIndex {page.start_index}")
    if count > size:
        raise FeedError(
            f"the page at start={start} holds {count} entries, more than max_results={size}"
        )
    if count == 0 and start < total:
        raise FeedError(
            f"the page at start={start} is empty although totalResults is {total}"
            " (arXiv's old backend did this under load; retry the sync later)"
        )
    end = start + count
    if end > total:
        raise FeedError(f"the pages hold at least {end} entries but totalResults is {total}")
    if count < size and end < total:
        raise FeedError(
            f"the page at start={start} holds {count} of {size} entries but is not the last"
            f" (totalResults {total}); the results would be incomplete"
        )
    for record in page.records:
        key = record.arxiv_id or ""
        if key in seen:
            raise FeedError(
                f"{key} appears twice in the results (they shifted during paging); retry the sync"
            )
        seen.add(key)
    return total


def _check_id_page(page: FeedPage, requested: list[str]) -> None:
    """Check an ``id_list`` answer: no more than asked for, all on the page, all asked for."""
    count = len(page.records)
    if count > len(requested):
        raise FeedError(f"asked for {len(requested)} ids but arXiv sent {count} entries")
    if page.total_results != count:
        raise FeedError(
            f"asked for {len(requested)} ids; arXiv says {page.total_results} results"
            f" but sent {count}"
        )
    # (id, version) pairs; None for an id asked for without one (its latest version).
    wanted: set[tuple[str, int | None]] = set()
    for raw in requested:
        try:
            wanted.add(split_arxiv_id(raw))
        except ValueError:
            return  # arXiv accepted an id we cannot read; nothing to compare against
    answered: set[tuple[str, int | None]] = set()
    for record in page.records:
        arxiv_id = record.arxiv_id or ""
        key = (arxiv_id, record.version)
        if key not in wanted:
            key = (arxiv_id, None)
        if key not in wanted:
            raise FeedError(
                f"arXiv sent {_versioned(key[0], record.version)}, which was not asked for"
            )
        answered.add(key)
    missing = sorted(_versioned(*key) for key in wanted - answered)
    if missing:
        raise FeedError(f"arXiv did not return {', '.join(missing[:5])} although asked for it")


def _versioned(arxiv_id: str, version: int | None) -> str:
    return arxiv_id if version is None else versioned_id(arxiv_id, version)


def _unpaged_feed(body: bytes) -> FeedPage:
    """An author's own feed, in the format ``author_feed`` asks for."""
    return parse_author_feed(body, AUTHOR_FEED_FORMAT)
