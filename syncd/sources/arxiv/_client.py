"""A polite, suspicious client of the arXiv API (``/api/query``).

Polite: every request goes through ``ArxivConnection``
(``syncd.sources.arxiv._connection``): one connection, paced, retried while
worth it, throttling heeded for every replica.

Suspicious: every body is read with a size cap and parsed as it arrives
(``FeedReader``), and a search is paged only while the pages add up: a page that is empty, short,
too long, repeats an id, or disagrees about ``totalResults`` fails the search
with ``FeedError`` instead of yielding an incomplete result set.  An answer
for listed ids must hold each of them, at the version asked for, and no other.

Bounded: a search stops at the number of results it is asked for, and an
author's own feed keeps at most ``[arxiv] max_results_per_author`` entries
(the rest counted, not read), so an author with 50,000 papers costs the
memory of the cap, never of the whole answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import quote

from syncd.domain.record import Record, split_arxiv_id, versioned_id
from syncd.errors import FeedError, RequestRefused, UnknownAuthorId
from syncd.sources.arxiv._connection import ArxivConnection
from syncd.sources.arxiv._pacing import retry_delay
from syncd.sources.arxiv._parser import AuthorFeedFormat
from syncd.sources.arxiv._reader import FeedPage, FeedReader, parse_author_feed, parse_feed

__all__ = [
    "AUTHOR_FEED_FORMAT",
    "MAX_IDS_PER_REQUEST",
    "MAX_ID_LIST_CHARS",
    "ArxivClient",
    "id_list_batches",
    "retry_delay",
]


# An author's feed is read as ``.atom``, one <author> per person: ``.atom2``
# joins them in one <name>, which only arXiv's own joining rule splits back.
AUTHOR_FEED_FORMAT: AuthorFeedFormat = "atom"


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


class ArxivClient(ArxivConnection):
    """Searches and fetches arXiv records through the API; use it as a context manager.

    Every request goes through ``ArxivConnection.request``: paced, retried
    and counted (``requests``, ``retries``, ``backoff_seconds``) as every
    other request to arXiv.
    """

    def search(self, query: str, limit: int | None = None) -> Iterator[FeedPage]:
        """Yield every page of ``search_query=query``, newest submission first, as it arrives.

        With ``limit``, stop once that many results are read: the caller
        knows the search was cut when it read ``limit`` of them (the rest,
        older, is then unread, not absent).  Raises ``FeedError`` as soon as
        the pages stop adding up to ``totalResults``.
        """
        start = 0
        total: int | None = None
        seen: set[str] = set()
        while True:
            size = self._settings.page_size
            if limit is not None:
                if start >= limit:
                    return
                size = min(size, limit - start)
            params: dict[str, str | int] = {
                "search_query": query,
                "sortBy": "submittedDate",
                "sortOrder": "descending",
                "start": start,
                "max_results": size,
            }
            page = self._get(params, {"query": query, "start": start}, keep=size)
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

    def author_feed(self, feed_id: str) -> FeedPage:
        """An author's own arXiv feed (``<author_feed_url><feed_id>.atom``), read as it arrives.

        ``feed_id`` is an arXiv author id or an ORCID iD.  One request, paced
        and retried like every other.  Its first ``max_results_per_author``
        entries are kept as records, the rest counted (``FeedPage.dropped``).
        The feed is not paged, so an answer whose ``totalResults`` says more
        than it holds, or that lists a paper twice, is refused (``FeedError``).
        """
        url = f"{self._settings.author_feed_url}{quote(feed_id, safe='')}.{AUTHOR_FEED_FORMAT}"
        context = {"author_feed": feed_id}
        keep = self._settings.max_results_per_author

        def reader() -> FeedReader:
            return FeedReader(paged=False, joined=AUTHOR_FEED_FORMAT == "atom2", keep=keep)

        try:
            page = self.request(
                url, {}, context, _unpaged_feed, setting="arxiv.author_feed_url", reader=reader
            )
        except RequestRefused as exc:
            # arxiv-browse answers an id it finds no user by with BadRequest("Author <id> not
            # found"), a 400 (browse/controllers/list_page/author.py); no other 400 comes
            # from that route for a well-formed id.
            if exc.status == _UNKNOWN_AUTHOR_STATUS:
                raise UnknownAuthorId(feed_id) from exc
            raise
        if page.total_results != page.entries:
            raise FeedError(
                f"the feed of {feed_id} holds {page.entries} entries"
                f" but says totalResults {page.total_results}"
            )
        _check_page(page, start=0, size=page.entries, total=None, seen=set())
        return page

    def _fetch_listed(self, ids: list[str]) -> list[Record]:
        """One ``id_list`` request for ``ids``, its answer checked against them."""
        params: dict[str, str | int] = {
            "id_list": ",".join(ids),
            "start": 0,
            "max_results": len(ids),
        }
        page = self._get(params, {"id_count": len(ids), "start": 0}, keep=len(ids))
        _check_id_page(page, ids)
        return list(page.records)

    def _get(self, params: dict[str, str | int], context: dict[str, Any], *, keep: int) -> FeedPage:
        """One logical API request: paced, retried while worth it, parsed as it arrives.

        ``keep``: the entries asked for; a page holding more counts them
        (``FeedPage.dropped``) without reading them, for the checks to refuse.
        """

        def reader() -> FeedReader:
            return FeedReader(paged=True, keep=keep)

        return self.request(self._settings.api_url, params, context, parse_feed, reader=reader)


def _check_page(page: FeedPage, *, start: int, size: int, total: int | None, seen: set[str]) -> int:
    """Check that a search page fits the ones before it; return the result set's size."""
    if total is not None and page.total_results != total:
        raise FeedError(
            f"totalResults changed from {total} to {page.total_results} between pages"
            " (the result set moved while paging)"
        )
    total = page.total_results
    count = page.entries
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
    count = page.entries
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
