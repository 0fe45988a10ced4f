"""Every Prometheus metric of syncd, with its help text and labels, in one place.

The metrics live in the module's own ``REGISTRY`` rather than prometheus-client's
global one, so tests and embedders never collide with other libraries' metrics.
The rest of the code calls the small ``observe_*`` functions, one line per call
site, and never touches a metric object.  Label values come from short, fixed
vocabularies (``CYCLE_RESULTS``, ``EVENT_TYPES``, ...): a value outside one is
counted as ``other`` so a bug can never grow a series per paper, URL or event.

Database-backed gauges (papers per status, the webhook outbox, versions set aside, the
harvest's dates, the cooldowns of hosts that throttle us, publication links) are read
at scrape time by a ``StoreCollector``; when the database does not answer the scrape
still succeeds, without those gauges, and ``syncd_metrics_collection_errors_total``
goes up.
"""

from __future__ import annotations

import contextlib
import itertools
import platform
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    disable_created_metrics,
    make_asgi_app,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from syncd import __version__
from syncd.domain.vocabulary import EVENT_TYPES, KINDS, PaperStatus, ResultSource

__all__ = [
    "AUTHOR_FEED_RESULTS",
    "CYCLE_RESULTS",
    "DELIVERY_OUTCOMES",
    "EVENT_KINDS",
    "EVENT_TYPES",
    "HTTP_DROP_REASONS",
    "OTHER",
    "PAPER_STATUSES",
    "PUBLICATION_REQUESTS",
    "REGISTRY",
    "RESULT_SOURCES",
    "STATUS_CLASSES",
    "SWEEP_RESULTS",
    "StoreCollector",
    "StoreSnapshot",
    "asgi_app",
    "observe_author_feed",
    "observe_cycle",
    "observe_delivery",
    "observe_events",
    "observe_harvest_page",
    "observe_http_dropped",
    "observe_pacing",
    "observe_publication_request",
    "observe_retry",
    "observe_revisions",
    "observe_sweeps",
    "observe_throttled",
    "observe_truncated",
    "observe_upstream",
    "observe_version_refused",
    "register_store_collector",
    "status_class",
    "unregister_store_collector",
]

_log = structlog.get_logger(__name__)

# The `_created` gauges prometheus-client adds next to every counter and
# histogram double the series count in the text format and nothing reads them
# (rate() copes with resets on its own).  The switch is process-wide; syncd is
# the only user of prometheus-client in its process.
disable_created_metrics()  # type: ignore[no-untyped-call]  # the library has no annotation here

REGISTRY = CollectorRegistry()

# -- label vocabularies ---------------------------------------------------------

OTHER = "other"
CYCLE_RESULTS = ("ok", "failed")
# An author's own arXiv feed: read, no usable answer (5xx, a timeout, ...), emptied
# (it listed claims before and none now), or unknown (arXiv knows no author by its
# id: the author's data, kept as their state); failed and emptied fail the cycle.
AUTHOR_FEED_RESULTS = ("ok", "failed", "emptied", "unknown")
# While harvesting, each cycle finds every author's full API sweep due (its slot
# of sweep_interval not yet swept) or not due.
SWEEP_RESULTS = ("due", "not_due")
# What an author's cycle reads up to [arxiv] max_results_per_author: name query, own feed.
RESULT_SOURCES: tuple[str, ...] = tuple(ResultSource)
STATUS_CLASSES = ("2xx", "3xx", "4xx", "5xx", "error")
EVENT_KINDS = KINDS
DELIVERY_OUTCOMES = ("delivered", "retry", "gone", "dead")
PAPER_STATUSES: tuple[str, ...] = tuple(PaperStatus)
# Why the HTTP server dropped a connection: past max_connections; silent past
# head_timeout before a request began (idle) or within its head; or not
# reading an answer for as long (response).
HTTP_DROP_REASONS = ("over_limit", "idle_timeout", "head_timeout", "response_timeout")

# 0.1 s (an empty cycle against a fast arXiv) up to 30 min (a big author,
# paced at 3 s per request, with backoff).
_CYCLE_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 900, 1200, 1800)
# 50 ms (delivered in the cycle that committed the event) up to 3 days (an
# endpoint that was down over a weekend and retried with backoff).
_DELIVERY_BUCKETS: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900)
_DELIVERY_BUCKETS += tuple(hours * 3600.0 for hours in (1, 4, 12, 24, 48, 72))

# -- the metrics ------------------------------------------------------------------

_BUILD_INFO = Info("syncd_build", "The running syncd's version and Python.", registry=REGISTRY)

_SYNC_CYCLES = Counter(
    "syncd_sync_cycles",
    "Sync cycles (one author each) by result.",
    ["result"],
    registry=REGISTRY,
)
_SYNC_CYCLE_DURATION = Histogram(
    "syncd_sync_cycle_duration_seconds",
    "Wall-clock duration of sync cycles, failed ones included.",
    buckets=_CYCLE_BUCKETS,
    registry=REGISTRY,
)
_LAST_SUCCESSFUL_SYNC = Gauge(
    "syncd_last_successful_sync_timestamp_seconds",
    "Unix time at which the most recent successful sync cycle finished.",
    registry=REGISTRY,
)

_AUTHOR_FEEDS = Counter(
    "syncd_author_feeds",
    "Authors' own arXiv feeds (ORCID iD or arXiv author id) read, by result.",
    ["result"],
    registry=REGISTRY,
)
_AUTHOR_SWEEPS = Counter(
    "syncd_author_sweeps",
    "While harvesting, authors whose full API sweep each cycle found due or not due.",
    ["result"],
    registry=REGISTRY,
)
_TRUNCATED = Counter(
    "syncd_author_results_truncated",
    "Reads of an author's results cut at arxiv.max_results_per_author (the older papers left"
    " unread, never counted absent), by source: query (name query) or feed (own arXiv feed).",
    ["source"],
    registry=REGISTRY,
)
_HARVESTED_RECORDS = Counter(
    "syncd_harvest_records",
    "arXivRaw records read by the OAI-PMH harvester from pages it applied.",
    registry=REGISTRY,
)
_HARVESTED_PAGES = Counter(
    "syncd_harvest_pages",
    "OAI-PMH pages the harvester applied.",
    registry=REGISTRY,
)

_UPSTREAM_REQUESTS = Counter(
    "syncd_upstream_requests",
    "Requests sent to the arXiv API by HTTP status class (error: no response).",
    ["status_class"],
    registry=REGISTRY,
)
_UPSTREAM_RETRIES = Counter(
    "syncd_upstream_retries",
    "Requests to the arXiv API retried after a failure.",
    registry=REGISTRY,
)
_UPSTREAM_BACKOFF = Counter(
    "syncd_upstream_backoff_seconds",
    "Seconds slept in backoff before retrying arXiv API requests (after a throttle: the"
    " host's cooldown).",
    registry=REGISTRY,
)
# The host label's values are the hosts of the configured arXiv URLs: a handful.
_THROTTLED = Counter(
    "syncd_arxiv_throttled",
    "Throttles arXiv answered this process (a 429, or a 503 with Retry-After), by host.",
    ["host"],
    registry=REGISTRY,
)

_UPSTREAM_PACING = Counter(
    "syncd_upstream_pacing_wait_seconds",
    "Seconds arXiv API requests waited for their turn under arxiv.request_interval;"
    " on PostgreSQL the budget is shared by every replica.",
    registry=REGISTRY,
)

# Their label values are fixed: the sources and the kinds of request service.publications makes.
_PUBLICATION_REQUESTS = Counter(
    "syncd_publication_requests",
    "Lookups of where papers were published, by source, kind (link, search, notices) and"
    " result (ok, failed: the papers that needed it are tried again later).",
    ["source", "kind", "result"],
    registry=REGISTRY,
)
PUBLICATION_REQUESTS = ("crossref", "openalex"), ("link", "search", "notices"), ("ok", "failed")

_EVENTS = Counter(
    "syncd_events",
    "Events published, by type.",
    ["type"],
    registry=REGISTRY,
)
_EVENT_KINDS = Counter(
    "syncd_event_kinds",
    "Change kinds carried by published events (one event may carry several).",
    ["kind"],
    registry=REGISTRY,
)
_REVISIONS = Counter(
    "syncd_revisions",
    "Paper revisions stored.",
    registry=REGISTRY,
)
_VERSION_REFUSALS = Counter(
    "syncd_version_refusals",
    "Earlier versions arXiv refused when asked for alone by versioned id.",
    registry=REGISTRY,
)

_DELIVERIES = Counter(
    "syncd_webhook_deliveries",
    "Webhook delivery attempts by outcome.",
    ["outcome"],
    registry=REGISTRY,
)
_DELIVERY_LATENCY = Histogram(
    "syncd_webhook_delivery_latency_seconds",
    "Seconds from an event's commit to its webhook's 2xx answer.",
    buckets=_DELIVERY_BUCKETS,
    registry=REGISTRY,
)

_HTTP_DROPPED = Counter(
    "syncd_http_connections_dropped",
    "HTTP connections dropped, by reason: over_limit (max_connections reached), idle_timeout or"
    " head_timeout (no request head, or only part of one, within the deadline), response_timeout"
    " (the client stopped reading an answer).",
    ["reason"],
    registry=REGISTRY,
)

_COLLECTION_ERRORS = Counter(
    "syncd_metrics_collection_errors",
    "Scrapes whose database-backed gauges could not be read.",
    registry=REGISTRY,
)


def _initialise() -> None:
    """Create every labelled series at 0, so dashboards and rate() see them from the start."""
    _BUILD_INFO.info({"version": __version__, "python": platform.python_version()})
    for labels in itertools.product(*PUBLICATION_REQUESTS):
        _PUBLICATION_REQUESTS.labels(*labels)
    for counter, values in (
        (_SYNC_CYCLES, CYCLE_RESULTS),
        (_AUTHOR_FEEDS, AUTHOR_FEED_RESULTS),
        (_AUTHOR_SWEEPS, SWEEP_RESULTS),
        (_TRUNCATED, RESULT_SOURCES),
        (_UPSTREAM_REQUESTS, STATUS_CLASSES),
        (_EVENTS, EVENT_TYPES),
        (_EVENT_KINDS, EVENT_KINDS),
        (_DELIVERIES, DELIVERY_OUTCOMES),
        (_HTTP_DROPPED, HTTP_DROP_REASONS),
    ):
        for value in values:
            counter.labels(value)


_initialise()


# -- what the rest of syncd calls ---------------------------------------------------


def _known(value: str, vocabulary: Sequence[str]) -> str:
    """``value`` if it belongs to ``vocabulary``, else ``other`` (keeps label sets bounded)."""
    return value if value in vocabulary else OTHER


def _non_negative(value: float) -> float:
    """Clamp at 0: counters refuse negative increments and a metric must never crash a cycle."""
    return value if value > 0 else 0.0


def status_class(status: int | None) -> str:
    """The label for an HTTP status: ``2xx`` ... ``5xx``, or ``error`` (no usable response)."""
    if status is None or not 200 <= status <= 599:
        return "error"
    return f"{status // 100}xx"


def observe_cycle(ok: bool, duration: float, finished_at: float) -> None:
    """Count one sync cycle, time it, and on success record when it finished (Unix time)."""
    _SYNC_CYCLES.labels("ok" if ok else "failed").inc()
    _SYNC_CYCLE_DURATION.observe(_non_negative(duration))
    if ok:
        _LAST_SUCCESSFUL_SYNC.set(finished_at)


def observe_author_feed(result: str) -> None:
    """Count one author feed read by its result (``AUTHOR_FEED_RESULTS``)."""
    _AUTHOR_FEEDS.labels(_known(result, AUTHOR_FEED_RESULTS)).inc()


def observe_sweeps(due: int, not_due: int) -> None:
    """Count one cycle's authors whose sweep was due and not due."""
    _AUTHOR_SWEEPS.labels("due").inc(due)
    _AUTHOR_SWEEPS.labels("not_due").inc(not_due)


def observe_truncated(source: str) -> None:
    """Count one read of an author's results cut at the cap, by ``RESULT_SOURCES``."""
    _TRUNCATED.labels(_known(source, RESULT_SOURCES)).inc()


def observe_harvest_page(records: int) -> None:
    """Count one applied OAI-PMH page and its records."""
    _HARVESTED_PAGES.inc()
    _HARVESTED_RECORDS.inc(records)


def observe_upstream(status: int | None) -> None:
    """Count one request to arXiv by its status; ``None`` means it got no response."""
    _UPSTREAM_REQUESTS.labels(status_class(status)).inc()


def observe_retry(delay: float) -> None:
    """Count one retry and the seconds of backoff before it."""
    _UPSTREAM_RETRIES.inc()
    _UPSTREAM_BACKOFF.inc(_non_negative(delay))


def observe_throttled(host: str) -> None:
    """Count one throttle from ``host`` (``export.arxiv.org``, ...)."""
    _THROTTLED.labels(host).inc()


def observe_pacing(waited: float) -> None:
    """Add the seconds one request waited for its turn in the politeness budget."""
    _UPSTREAM_PACING.inc(_non_negative(waited))


def observe_events(events: Iterable[tuple[str, Sequence[str]]]) -> None:
    """Count published events: each ``(type, kinds)`` adds one event and one per kind."""
    for event_type, kinds in events:
        _EVENTS.labels(_known(event_type, EVENT_TYPES)).inc()
        for kind in kinds:
            _EVENT_KINDS.labels(_known(kind, EVENT_KINDS)).inc()


def observe_publication_request(source: str, kind: str, *, ok: bool) -> None:
    """Count one request of a publication lookup, and whether it answered."""
    labels = _known(source, PUBLICATION_REQUESTS[0]), _known(kind, PUBLICATION_REQUESTS[1])
    _PUBLICATION_REQUESTS.labels(*labels, "ok" if ok else "failed").inc()


def observe_revisions(count: int) -> None:
    """Count ``count`` stored revisions."""
    _REVISIONS.inc(_non_negative(count))


def observe_version_refused() -> None:
    """Count one version arXiv refused (``syncd.domain.refusals``)."""
    _VERSION_REFUSALS.inc()


def observe_delivery(outcome: str, latency: float | None) -> None:
    """Count one webhook delivery attempt; a ``delivered`` one also records its latency."""
    known = _known(outcome, DELIVERY_OUTCOMES)
    _DELIVERIES.labels(known).inc()
    if known == "delivered" and latency is not None:
        _DELIVERY_LATENCY.observe(_non_negative(latency))


def observe_http_dropped(reason: str) -> None:
    """Count one connection the HTTP server closed unanswered, by ``HTTP_DROP_REASONS``."""
    _HTTP_DROPPED.labels(_known(reason, HTTP_DROP_REASONS)).inc()


def asgi_app() -> Callable[..., Any]:
    """prometheus-client's ASGI app over syncd's registry: what ``/metrics`` serves.

    Asked without an ``Accept`` header for more, it answers the classic 0.0.4
    text format (every name here is a legacy name), which every scraper knows.
    """
    return make_asgi_app(REGISTRY)


# -- gauges read from the database at scrape time -------------------------------


@dataclass(frozen=True, slots=True)
class StoreSnapshot:
    """What the database holds right now, as far as the gauges are concerned."""

    papers_by_status: Mapping[str, int]
    outbox_pending: int
    outbox_dead: int
    versions_set_aside: int = 0
    # The harvest's next ``from`` (midnight UTC) and its last completion, as Unix times;
    # None before the first.  Read from the database, so a harvest by `syncd harvest` counts.
    harvest_from: float | None = None
    last_harvest: float | None = None
    # Seconds until each throttling arXiv host may be asked again (0: now), by host.
    cooldowns: Mapping[str, float] = field(default_factory=dict)
    # Publication links by state, papers due a lookup and failing (when [publications] is on).
    publications: Mapping[str, int] = field(default_factory=dict)


class StoreCollector(Collector):
    """Reads a ``StoreSnapshot`` on every scrape and exposes it as gauges.

    ``source`` is called once per scrape, from the scraping thread; it should
    be quick and bounded by the database's own timeouts.
    """

    def __init__(self, source: Callable[[], StoreSnapshot]) -> None:
        self._source = source
        self._failing = False

    def describe(self) -> Iterable[Metric]:
        """The families this collector exposes, without reading the database."""
        return _store_families()

    def collect(self) -> Iterable[Metric]:
        """The gauges from a fresh snapshot, or nothing when it cannot be read."""
        snapshot = self._snapshot()
        if snapshot is None:
            return []
        papers, pending, dead, set_aside, harvest_from, last_harvest, cooldowns, publications = (
            _store_families()
        )
        counts = dict.fromkeys(PAPER_STATUSES, 0) | dict(snapshot.papers_by_status)
        for status, count in sorted(counts.items()):
            papers.add_metric([status], count)
        pending.add_metric([], snapshot.outbox_pending)
        dead.add_metric([], snapshot.outbox_dead)
        set_aside.add_metric([], snapshot.versions_set_aside)
        for host, seconds in sorted(snapshot.cooldowns.items()):
            cooldowns.add_metric([host], seconds)
        for state, count in sorted(snapshot.publications.items()):
            publications.add_metric([state], count)
        found = [papers, pending, dead, set_aside, cooldowns, publications]
        # Absent before the first harvest: a 0 would read as a harvest in 1970.
        harvest = ((harvest_from, snapshot.harvest_from), (last_harvest, snapshot.last_harvest))
        for family, value in harvest:
            if value is not None:
                family.add_metric([], value)
                found.append(family)
        return found

    def _snapshot(self) -> StoreSnapshot | None:
        """The snapshot, or ``None`` after counting (and, once per outage, logging) a failure."""
        try:
            snapshot = self._source()
        except Exception as exc:
            _COLLECTION_ERRORS.inc()
            # Log the start of an outage, not every scrape of it: the counter
            # and /readyz already say it is going on.
            if not self._failing:
                _log.warning("metrics_collection_failed", error=f"{type(exc).__name__}: {exc}")
            self._failing = True
            return None
        if self._failing:
            _log.info("metrics_collection_recovered")
        self._failing = False
        return snapshot


def _store_families() -> tuple[GaugeMetricFamily, ...]:
    """Empty families for the database-backed gauges."""
    return (
        GaugeMetricFamily("syncd_papers", "Papers in the record, by status.", labels=["status"]),
        GaugeMetricFamily(
            "syncd_outbox_pending", "Webhook deliveries waiting to be sent or retried."
        ),
        GaugeMetricFamily(
            "syncd_outbox_dead_letters", "Webhook deliveries given up on after every retry."
        ),
        GaugeMetricFamily(
            "syncd_versions_set_aside",
            "Earlier versions arXiv kept refusing, waiting for their next try.",
        ),
        GaugeMetricFamily(
            "syncd_harvest_from_timestamp_seconds",
            "Unix time of the harvest's from date (midnight UTC); lag is time() minus it.",
        ),
        GaugeMetricFamily(
            "syncd_last_successful_harvest_timestamp_seconds",
            "Unix time at which the most recent complete harvest finished.",
        ),
        GaugeMetricFamily(
            "syncd_arxiv_cooldown_seconds",
            "Seconds until an arXiv host that throttled us may be asked again (0: now), by host;"
            " every replica reads the same cooldown.",
            labels=["host"],
        ),
        GaugeMetricFamily(
            "syncd_publications",
            "Publication links by state; due: papers due a lookup; failing: whose last failed.",
            labels=["state"],
        ),
    )


def register_store_collector(
    source: Callable[[], StoreSnapshot], registry: CollectorRegistry = REGISTRY
) -> StoreCollector:
    """Expose the database-backed gauges read through ``source``; return the collector.

    Raises ``ValueError`` if ``registry`` already has a store collector.
    """
    collector = StoreCollector(source)
    registry.register(collector)
    return collector


def unregister_store_collector(
    collector: StoreCollector, registry: CollectorRegistry = REGISTRY
) -> None:
    """Stop exposing ``collector``'s gauges; a collector not registered is ignored."""
    with contextlib.suppress(KeyError):
        registry.unregister(collector)
