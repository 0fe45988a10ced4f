"""Tests for syncd.metrics: the observe_* helpers, the store collector, naming rules,
and the readiness decision of syncd.web.server."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from structlog.testing import capture_logs

from syncd import metrics
from syncd.metrics import REGISTRY, StoreSnapshot
from syncd.web.ops import Readiness, readiness

FORBIDDEN_LABELS = {"paper", "arxiv_id", "url", "event_id"}


def value(name: str, labels: dict[str, str] | None = None) -> float:
    """A sample's current value in syncd's registry, 0 when the series does not exist."""
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


class Delta:
    """The change of one sample since the moment this object was made."""

    def __init__(self, name: str, labels: dict[str, str] | None = None) -> None:
        self.name, self.labels = name, labels
        self.before = value(name, labels)

    def __call__(self) -> float:
        return value(self.name, self.labels) - self.before


@pytest.fixture
def private_registry() -> CollectorRegistry:
    """A registry of its own, so reading it does not run other tests' collectors."""
    return CollectorRegistry()


class TestObserve:
    """Each observe_* function moves exactly the series it is meant to."""

    def test_successful_cycle(self) -> None:
        """A good cycle counts as ok, is timed, and sets the last-success timestamp."""
        ok = Delta("syncd_sync_cycles_total", {"result": "ok"})
        failed = Delta("syncd_sync_cycles_total", {"result": "failed"})
        count = Delta("syncd_sync_cycle_duration_seconds_count")
        total = Delta("syncd_sync_cycle_duration_seconds_sum")
        fast = Delta("syncd_sync_cycle_duration_seconds_bucket", {"le": "5.0"})
        metrics.observe_cycle(True, 4.5, 1_800_000_000.0)
        assert (ok(), failed(), count(), fast()) == (1, 0, 1, 1)
        assert total() == pytest.approx(4.5)
        assert value("syncd_last_successful_sync_timestamp_seconds") == 1_800_000_000.0

    def test_failed_cycle(self) -> None:
        """A failed cycle is counted and timed but leaves the last-success timestamp alone."""
        metrics.observe_cycle(True, 1.0, 1_700_000_000.0)
        failed = Delta("syncd_sync_cycles_total", {"result": "failed"})
        count = Delta("syncd_sync_cycle_duration_seconds_count")
        slow = Delta("syncd_sync_cycle_duration_seconds_bucket", {"le": "1800.0"})
        quick = Delta("syncd_sync_cycle_duration_seconds_bucket", {"le": "900.0"})
        metrics.observe_cycle(False, 1000.0, 1_700_000_999.0)
        assert (failed(), count(), slow(), quick()) == (1, 1, 1, 0)
        assert value("syncd_last_successful_sync_timestamp_seconds") == 1_700_000_000.0

    def test_cycle_buckets_span_a_tenth_of_a_second_to_half_an_hour(self) -> None:
        """The duration histogram's finite buckets run from 0.1 s to 1800 s."""
        bounds = _bucket_bounds("syncd_sync_cycle_duration_seconds")
        assert (bounds[0], bounds[-1]) == (0.1, 1800.0)

    @pytest.mark.parametrize(
        ("status", "label"),
        [
            (200, "2xx"),
            (204, "2xx"),
            (301, "3xx"),
            (404, "4xx"),
            (429, "4xx"),
            (503, "5xx"),
            (None, "error"),
            (101, "error"),
            (999, "error"),
        ],
    )
    def test_upstream_status_classes(self, status: int | None, label: str) -> None:
        """An upstream answer is counted under its status class; no response is an error."""
        moved = Delta("syncd_upstream_requests_total", {"status_class": label})
        metrics.observe_upstream(status)
        assert moved() == 1

    def test_retry_counts_and_adds_backoff(self) -> None:
        """A retry adds one retry and its delay to the backoff seconds."""
        retries = Delta("syncd_upstream_retries_total")
        backoff = Delta("syncd_upstream_backoff_seconds_total")
        metrics.observe_retry(2.5)
        metrics.observe_retry(-1.0)
        assert retries() == 2
        assert backoff() == pytest.approx(2.5)

    def test_throttles_are_counted_by_host(self) -> None:
        """Each throttle counts under the host that answered it, and no other."""
        api = Delta("syncd_arxiv_throttled_total", {"host": "export.arxiv.org"})
        oai = Delta("syncd_arxiv_throttled_total", {"host": "oaipmh.arxiv.org"})
        metrics.observe_throttled("export.arxiv.org")
        metrics.observe_throttled("export.arxiv.org")
        assert (api(), oai()) == (2, 0)

    def test_events_count_types_and_kinds(self) -> None:
        """Each event counts once by type and once per kind it carries."""
        revised = Delta("syncd_events_total", {"type": "paper.revised"})
        linked = Delta("syncd_events_total", {"type": "paper.linked"})
        title = Delta("syncd_event_kinds_total", {"kind": "title"})
        version = Delta("syncd_event_kinds_total", {"kind": "version"})
        doi = Delta("syncd_event_kinds_total", {"kind": "doi"})
        metrics.observe_events(
            [
                ("paper.revised", ("version", "title")),
                ("paper.revised", ["title"]),
                ("paper.linked", ()),
            ]
        )
        assert (revised(), linked(), title(), version(), doi()) == (2, 1, 2, 1, 0)

    def test_unknown_event_type_and_kind_count_as_other(self) -> None:
        """Values outside the vocabularies land in one bounded 'other' series."""
        other_type = Delta("syncd_events_total", {"type": "other"})
        other_kind = Delta("syncd_event_kinds_total", {"kind": "other"})
        metrics.observe_events([("paper.exploded", ("2606.03328",))])
        assert (other_type(), other_kind()) == (1, 1)
        assert REGISTRY.get_sample_value("syncd_events_total", {"type": "paper.exploded"}) is None

    def test_revisions(self) -> None:
        """Revisions are counted in bulk; zero or negative counts change nothing."""
        revisions = Delta("syncd_revisions_total")
        metrics.observe_revisions(3)
        metrics.observe_revisions(0)
        metrics.observe_revisions(-2)
        assert revisions() == 3

    def test_delivered_records_latency(self) -> None:
        """A delivered webhook is counted and its commit-to-2xx latency observed."""
        delivered = Delta("syncd_webhook_deliveries_total", {"outcome": "delivered"})
        count = Delta("syncd_webhook_delivery_latency_seconds_count")
        total = Delta("syncd_webhook_delivery_latency_seconds_sum")
        metrics.observe_delivery("delivered", 0.2)
        assert (delivered(), count()) == (1, 1)
        assert total() == pytest.approx(0.2)

    @pytest.mark.parametrize("outcome", ["retry", "gone", "dead"])
    def test_undelivered_outcomes_record_no_latency(self, outcome: str) -> None:
        """Retries, gone endpoints and dead letters are counted without a latency."""
        counted = Delta("syncd_webhook_deliveries_total", {"outcome": outcome})
        count = Delta("syncd_webhook_delivery_latency_seconds_count")
        metrics.observe_delivery(outcome, 12.0)
        assert (counted(), count()) == (1, 0)

    def test_delivery_buckets_span_fifty_milliseconds_to_three_days(self) -> None:
        """The latency histogram's finite buckets run from 0.05 s to 3 days."""
        bounds = _bucket_bounds("syncd_webhook_delivery_latency_seconds")
        assert (bounds[0], bounds[-1]) == (0.05, 3 * 86400.0)

    def test_labelled_series_exist_before_first_use(self) -> None:
        """Every known label value is exposed at start, so rate() works from the first event."""
        for kind in metrics.EVENT_KINDS:
            assert REGISTRY.get_sample_value("syncd_event_kinds_total", {"kind": kind}) is not None
        for outcome in metrics.DELIVERY_OUTCOMES:
            labels = {"outcome": outcome}
            assert REGISTRY.get_sample_value("syncd_webhook_deliveries_total", labels) is not None

    def test_build_info(self) -> None:
        """Build info carries syncd's version and the Python version."""
        samples = [s for m in REGISTRY.collect() for s in m.samples if s.name == "syncd_build_info"]
        assert len(samples) == 1
        assert set(samples[0].labels) == {"version", "python"}
        assert samples[0].value == 1.0


class TestStoreCollector:
    """Database-backed gauges, read at scrape time."""

    def test_values_come_from_the_snapshot(self, private_registry: CollectorRegistry) -> None:
        """Papers per status (missing statuses as 0), outbox sizes, versions set aside, and
        the seconds each throttling arXiv host cools down for."""
        snapshot = StoreSnapshot(
            {"tracked": 7, "candidate": 2},
            outbox_pending=3,
            outbox_dead=1,
            versions_set_aside=2,
            cooldowns={"export.arxiv.org": 120.0, "oaipmh.arxiv.org": 0.0},
        )
        metrics.register_store_collector(lambda: snapshot, registry=private_registry)
        read = private_registry.get_sample_value
        papers = {s: read("syncd_papers", {"status": s}) for s in metrics.PAPER_STATUSES}
        assert papers == {
            "unlinked": 0.0,
            "tracked": 7.0,
            "candidate": 2.0,
            "removed": 0.0,
            "rejected": 0.0,
        }
        assert read("syncd_outbox_pending") == 3.0
        assert read("syncd_outbox_dead_letters") == 1.0
        assert read("syncd_versions_set_aside") == 2.0
        cooldown = "syncd_arxiv_cooldown_seconds"
        assert read(cooldown, {"host": "export.arxiv.org"}) == 120.0
        assert read(cooldown, {"host": "oaipmh.arxiv.org"}) == 0.0

    def test_the_harvests_dates_come_from_the_snapshot(
        self, private_registry: CollectorRegistry
    ) -> None:
        """The harvest's from date and last completion are the database's (a harvest run by
        `syncd harvest` counts), and absent before the first rather than 0."""
        held = [StoreSnapshot({}, 0, 0)]
        metrics.register_store_collector(lambda: held[0], registry=private_registry)
        names = (
            "syncd_harvest_from_timestamp_seconds",
            "syncd_last_successful_harvest_timestamp_seconds",
        )
        read = private_registry.get_sample_value
        assert [read(name) for name in names] == [None, None]
        held[0] = StoreSnapshot(
            {}, 0, 0, harvest_from=1_780_000_000.0, last_harvest=1_780_050_000.0
        )
        assert [read(name) for name in names] == [1_780_000_000.0, 1_780_050_000.0]

    def test_read_on_every_scrape(self, private_registry: CollectorRegistry) -> None:
        """Each scrape calls the source again, so the gauges follow the database."""
        pending = iter(range(10))
        metrics.register_store_collector(
            lambda: StoreSnapshot({}, outbox_pending=next(pending), outbox_dead=0),
            registry=private_registry,
        )
        seen = [private_registry.get_sample_value("syncd_outbox_pending") for _ in range(3)]
        assert seen == [0.0, 1.0, 2.0]

    def test_raising_source_yields_nothing_and_counts(
        self, private_registry: CollectorRegistry
    ) -> None:
        """A failing database drops the gauges from the scrape and counts a collection error."""

        def broken() -> StoreSnapshot:
            raise ConnectionError("database is down")

        errors = Delta("syncd_metrics_collection_errors_total")
        metrics.register_store_collector(broken, registry=private_registry)
        with capture_logs() as logs:
            names = {m.name for m in private_registry.collect()}
            list(private_registry.collect())  # a second scrape of the same outage
        assert names == set()
        assert errors() == 2
        assert [e["event"] for e in logs] == ["metrics_collection_failed"]

    def test_recovers_after_failure(self, private_registry: CollectorRegistry) -> None:
        """Once the source answers again the gauges come back and the recovery is logged."""
        answers: list[BaseException | StoreSnapshot] = [
            OSError("down"),
            StoreSnapshot({"tracked": 1}, 0, 0),
        ]

        def flaky() -> StoreSnapshot:
            answer = answers.pop(0)
            if isinstance(answer, BaseException):
                raise answer
            return answer

        metrics.register_store_collector(flaky, registry=private_registry)
        with capture_logs() as logs:
            first = private_registry.get_sample_value("syncd_papers", {"status": "tracked"})
            second = private_registry.get_sample_value("syncd_papers", {"status": "tracked"})
        assert (first, second) == (None, 1.0)
        assert [e["event"] for e in logs] == [
            "metrics_collection_failed",
            "metrics_collection_recovered",
        ]

    def test_register_and_unregister_on_the_default_registry(self) -> None:
        """The helpers add the gauges to syncd's registry and take them away again."""
        collector = metrics.register_store_collector(lambda: StoreSnapshot({}, 5, 0))
        try:
            assert REGISTRY.get_sample_value("syncd_outbox_pending") == 5.0
            with pytest.raises(ValueError, match="Duplicated"):
                metrics.register_store_collector(lambda: StoreSnapshot({}, 6, 0))
        finally:
            metrics.unregister_store_collector(collector)
        assert REGISTRY.get_sample_value("syncd_outbox_pending") is None
        metrics.unregister_store_collector(collector)  # a second time is harmless

    def test_describe_does_not_read_the_database(self) -> None:
        """Registering only describes the families; the source is not called."""
        calls: list[int] = []

        def source() -> StoreSnapshot:
            calls.append(1)
            return StoreSnapshot({}, 0, 0)

        collector = metrics.StoreCollector(source)
        names = {m.name for m in collector.describe()}
        assert names == {
            "syncd_papers",
            "syncd_outbox_pending",
            "syncd_outbox_dead_letters",
            "syncd_versions_set_aside",
            "syncd_harvest_from_timestamp_seconds",
            "syncd_last_successful_harvest_timestamp_seconds",
            "syncd_arxiv_cooldown_seconds",
            "syncd_publications",
        }
        assert calls == []


class TestNaming:
    """Prometheus naming conventions and bounded cardinality."""

    def test_every_metric_is_prefixed(self, private_registry: CollectorRegistry) -> None:
        """Every family, the database-backed ones included, is named syncd_*."""
        metrics.register_store_collector(lambda: StoreSnapshot({}, 0, 0), registry=private_registry)
        families = [*REGISTRY.collect(), *private_registry.collect()]
        assert families
        assert all(m.name.startswith("syncd_") for m in families)

    def test_no_unbounded_labels(self, private_registry: CollectorRegistry) -> None:
        """No series is labelled by paper, arXiv id, URL or event id."""
        metrics.register_store_collector(lambda: StoreSnapshot({}, 0, 0), registry=private_registry)
        labels = {
            label
            for family in [*REGISTRY.collect(), *private_registry.collect()]
            for sample in family.samples
            for label in sample.labels
        }
        assert labels
        assert not labels & FORBIDDEN_LABELS

    def test_asgi_app_serves_prometheus_text(self) -> None:
        """The /metrics app answers the 0.0.4 text format by default, without _created series."""
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "GET", "path": "/metrics", "headers": []}
        asyncio.run(metrics.asgi_app()(scope, receive, send))
        headers = dict(sent[0]["headers"])
        assert headers[b"Content-Type"].startswith(b"text/plain; version=0.0.4")
        text = sent[1]["body"].decode()
        assert "# TYPE syncd_sync_cycles_total counter" in text
        assert "_created" not in text


def _bucket_bounds(histogram: str) -> list[float]:
    """The finite upper bounds of a histogram's buckets, in order."""
    return [
        float(s.labels["le"])
        for m in REGISTRY.collect()
        for s in m.samples
        if s.name == f"{histogram}_bucket" and s.labels["le"] != "+Inf"
    ]


NOW = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
HOUR = 3600.0


def ago(seconds: float) -> datetime:
    """The moment ``seconds`` before NOW."""
    return NOW - timedelta(seconds=seconds)


@pytest.mark.parametrize(
    ("database_ok", "last_success", "started_at", "ready", "cycle_prefix"),
    [
        pytest.param(True, ago(60), ago(7200), True, "ok", id="fresh-success"),
        pytest.param(True, ago(HOUR), ago(7200), True, "ok", id="exactly-max-age"),
        pytest.param(True, ago(HOUR + 1), ago(7200), False, "stale", id="stale-success"),
        pytest.param(False, ago(60), ago(7200), False, "ok", id="database-down"),
        pytest.param(True, None, ago(10), True, "starting", id="startup-grace"),
        pytest.param(True, None, ago(HOUR), True, "starting", id="grace-boundary"),
        pytest.param(True, None, ago(HOUR + 1), False, "missing", id="grace-over"),
        pytest.param(False, None, ago(10), False, "starting", id="grace-database-down"),
        pytest.param(True, ago(HOUR * 5), ago(10), False, "stale", id="restart-old-success"),
    ],
)
def test_readiness(
    database_ok: bool,
    last_success: datetime | None,
    started_at: datetime,
    ready: bool,
    cycle_prefix: str,
) -> None:
    """Readiness needs the database and a recent success (or the startup grace)."""
    verdict = readiness(database_ok, last_success, started_at, NOW, HOUR)
    assert isinstance(verdict, Readiness)
    assert verdict.ready is ready
    assert set(verdict.checks) == {"database", "last_cycle", "arxiv"}
    assert verdict.checks["arxiv"] == "ok"
    assert verdict.checks["database"] == ("ok" if database_ok else "unreachable")
    assert verdict.checks["last_cycle"].startswith(cycle_prefix)


@pytest.mark.parametrize(
    ("last_harvest", "ready", "prefix"),
    [
        pytest.param(ago(HOUR), True, "ok", id="harvested"),
        pytest.param(ago(3 * HOUR), False, "stale", id="late"),
        pytest.param(None, True, "starting", id="first-harvest-pending"),
    ],
)
def test_readiness_includes_the_harvester(
    last_harvest: datetime | None, ready: bool, prefix: str
) -> None:
    """With the harvester on, a late harvest makes syncd unready, as a late cycle does."""
    verdict = readiness(True, ago(60), ago(10), NOW, HOUR, harvest=(last_harvest, 2 * HOUR))
    assert verdict.ready is ready
    assert verdict.checks["last_harvest"].startswith(prefix)


@pytest.mark.parametrize("last_success", [None, ago(30 * HOUR)], ids=["never", "long-ago"])
def test_readiness_without_an_author_to_follow(last_success: datetime | None) -> None:
    """No author followed: no cycle has work, so none is missed, however long ago one ran."""
    verdict = readiness(True, last_success, ago(10 * HOUR), NOW, HOUR, following=False)
    assert verdict == Readiness(
        True,
        {
            "database": "ok",
            "last_cycle": "ok: no author is followed, nothing to sync",
            "arxiv": "ok",
        },
    )
    assert not readiness(False, last_success, ago(10 * HOUR), NOW, HOUR, following=False).ready


def test_readiness_says_arxiv_throttles_us_but_stays_ready() -> None:
    """A throttling host is named under ``arxiv``; the process serves as well as ever."""
    said = "arXiv is throttling us (export.arxiv.org, answer), next try at 2026-11-30 08:01:00 UTC"
    verdict = readiness(True, ago(60), ago(7200), NOW, HOUR, throttling=[said, "and another"])
    assert verdict.ready
    assert verdict.checks["arxiv"] == f"{said}; and another"


def test_harvest_metrics() -> None:
    pages, records = Delta("syncd_harvest_pages_total"), Delta("syncd_harvest_records_total")
    metrics.observe_harvest_page(7)
    assert (pages(), records()) == (1, 7)


def test_sweep_metrics() -> None:
    """One cycle's authors, by whether their sweep was due; both series exist from the start."""
    for result in metrics.SWEEP_RESULTS:
        labels = {"result": result}
        assert REGISTRY.get_sample_value("syncd_author_sweeps_total", labels) is not None
    due = Delta("syncd_author_sweeps_total", {"result": "due"})
    not_due = Delta("syncd_author_sweeps_total", {"result": "not_due"})
    metrics.observe_sweeps(due=3, not_due=497)
    assert (due(), not_due()) == (3, 497)


def test_truncation_metrics() -> None:
    """Reads cut at the cap, by source; both series exist from the start, others count as other."""
    for source in metrics.RESULT_SOURCES:
        labels = {"source": source}
        assert REGISTRY.get_sample_value("syncd_author_results_truncated_total", labels) is not None
    query = Delta("syncd_author_results_truncated_total", {"source": "query"})
    feed = Delta("syncd_author_results_truncated_total", {"source": "feed"})
    other = Delta("syncd_author_results_truncated_total", {"source": "other"})
    metrics.observe_truncated("query")
    metrics.observe_truncated("feed")
    metrics.observe_truncated("feed")
    metrics.observe_truncated("harvest")
    assert (query(), feed(), other()) == (1, 2, 1)
