"""An author's own arXiv feed in a cycle: their claims, or that arXiv knows no author by its id.

With ``orcid`` or ``arxiv_author_id``, a cycle reads the author's feed at
most once per ``[arxiv] author_feed_interval`` (claims change rarely).  A
feed that cannot be read (5xx after the retries, a timeout), or that lists
nothing after listing claims, fails the author's cycle: never a removal.
An id arXiv knows no author by (it answers 400) is the author's data, not a
failure: the cycle goes on without claims, the name query and the co-author
basis judging the papers as for an author without identifiers, and the
state is stored with it until a read succeeds or the identifiers change.

The feed is read as it arrives and keeps its first ``[arxiv]
max_results_per_author`` entries (``ArxivClient.author_feed``); a feed
holding more is "truncated at N" (``FeedReading.truncated``).  The claims
left unread are not taken back: a claim never is, and a claimed paper is
never counted absent.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import structlog

from syncd import metrics
from syncd.domain.authors import Author
from syncd.domain.cadence import feed_due
from syncd.domain.identifiers import unknown_id_advice
from syncd.domain.model import AuthorSyncState, Truncation
from syncd.domain.record import Record
from syncd.domain.vocabulary import ResultSource
from syncd.errors import FeedError, Throttled, UnknownAuthorId, UpstreamError
from syncd.sources.arxiv import ArxivClient

__all__ = ["FeedReading", "read_feed"]

_log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class FeedReading:
    """What the author's own feed said this cycle; both None when it was not read.

    ``claims``: the papers it lists (the author's excluded ids left out), up
    to the cap; ``truncated``: when it listed more; ``unknown_id``: its id,
    which arXiv knows no author by.
    """

    claims: list[Record] | None = None
    unknown_id: str | None = None
    truncated: Truncation | None = None


def read_feed(
    client: ArxivClient, author: Author, state: AuthorSyncState, now: datetime
) -> FeedReading:
    """Read the author's own feed when they have one and it is due at ``now`` (see the
    module's doc)."""
    feed_id = author.feed_id
    interval = client.settings.author_feed_interval
    if feed_id is None or not feed_due(author.name, state.feed_fetched_at, now, interval):
        return FeedReading()
    try:
        page = client.author_feed(feed_id)
    except UnknownAuthorId as exc:
        metrics.observe_author_feed("unknown")
        _log.warning("author_feed_unknown", feed=feed_id, advice=unknown_id_advice(feed_id))
        return FeedReading(unknown_id=exc.feed_id)
    except Throttled:
        metrics.observe_author_feed("failed")
        raise  # as it is: it says when to try again
    except UpstreamError as exc:
        metrics.observe_author_feed("failed")
        raise UpstreamError(f"the arXiv feed of {feed_id} could not be read: {exc}") from exc
    records = page.records
    if not records and state.claimed:
        metrics.observe_author_feed("emptied")
        raise FeedError(
            f"the arXiv feed of {feed_id} lists no papers, but {state.claimed} were claimed;"
            " treating the answer as a glitch, not as removals"
        )
    metrics.observe_author_feed("ok")
    truncated = None
    if page.dropped:
        truncated = Truncation(ResultSource.FEED, len(records), page.entries)
        metrics.observe_truncated(ResultSource.FEED)
        _log.warning("author_feed_truncated", feed=feed_id, kept=len(records), entries=page.entries)
    claims = [r for r in records if r.arxiv_id is not None and r.arxiv_id not in author.exclude_ids]
    _log.info("author_feed_read", feed=feed_id, claimed=len(claims))
    return FeedReading(claims=claims, truncated=truncated)
