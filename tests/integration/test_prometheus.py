"""syncd's /metrics as a real Prometheus sees it, and as promtool lints it.

A Prometheus server (Debian's ``prometheus`` package) scrapes an HttpServer on
loopback every second; the tests read back, through its HTTP API, which series
it stored and which type each metric family was declared with.  They skip with
a reason when the binaries are missing, unless SYNCD_TEST_REQUIRE_PROMETHEUS=1
(set by .ci/run), which turns the skip into a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from syncd import metrics
from syncd.metrics import StoreSnapshot
from syncd.web.ops import Readiness
from syncd.web.server import HttpServer
from tests.helpers import free_port

pytestmark = pytest.mark.slow

DEADLINE = 30.0  # seconds for Prometheus to start, scrape and answer

# Every metric family and the type Prometheus must record for it.  The text
# format has no "info" type: prometheus-client writes an Info as a gauge of 1.
EXPECTED_TYPES = {
    "syncd_build_info": "gauge",
    "syncd_sync_cycles_total": "counter",
    "syncd_sync_cycle_duration_seconds": "histogram",
    "syncd_last_successful_sync_timestamp_seconds": "gauge",
    "syncd_author_feeds_total": "counter",
    "syncd_author_sweeps_total": "counter",
    "syncd_author_results_truncated_total": "counter",
    "syncd_upstream_requests_total": "counter",
    "syncd_upstream_retries_total": "counter",
    "syncd_upstream_backoff_seconds_total": "counter",
    "syncd_upstream_pacing_wait_seconds_total": "counter",
    "syncd_arxiv_throttled_total": "counter",
    "syncd_arxiv_cooldown_seconds": "gauge",
    "syncd_events_total": "counter",
    "syncd_event_kinds_total": "counter",
    "syncd_revisions_total": "counter",
    "syncd_version_refusals_total": "counter",
    "syncd_webhook_deliveries_total": "counter",
    "syncd_webhook_delivery_latency_seconds": "histogram",
    "syncd_metrics_collection_errors_total": "counter",
    "syncd_http_connections_dropped_total": "counter",
    "syncd_papers": "gauge",
    "syncd_outbox_pending": "gauge",
    "syncd_outbox_dead_letters": "gauge",
    "syncd_versions_set_aside": "gauge",
    "syncd_harvest_pages_total": "counter",
    "syncd_harvest_records_total": "counter",
    "syncd_harvest_from_timestamp_seconds": "gauge",
    "syncd_last_successful_harvest_timestamp_seconds": "gauge",
    "syncd_publication_requests_total": "counter",
    "syncd_publications": "gauge",
}

SNAPSHOT = StoreSnapshot(
    {"tracked": 7, "unlinked": 1},
    outbox_pending=2,
    outbox_dead=1,
    harvest_from=time.time() - 86400,
    last_harvest=time.time(),
    cooldowns={"export.arxiv.org": 240.0, "arxiv.org": 0.0},
    publications={"accepted": 12, "candidate": 2, "due": 40, "failing": 1},
)

T = TypeVar("T")


def _binary(name: str) -> str:
    """The path of a Prometheus binary; skips (or fails under CI) when it is missing."""
    for candidate in (f"/usr/bin/{name}", shutil.which(name)):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    reason = f"{name} is not installed (Debian: apt-get install prometheus; .ci/run installs it)"
    if os.environ.get("SYNCD_TEST_REQUIRE_PROMETHEUS") == "1":
        pytest.fail(f"SYNCD_TEST_REQUIRE_PROMETHEUS=1 but {reason}")
    pytest.skip(reason)


def _observe_a_little_of_everything() -> None:
    """Put at least one sample into every metric syncd defines."""
    metrics.observe_cycle(True, 12.5, time.time())
    metrics.observe_cycle(False, 0.3, time.time())
    for status in (200, 503, None):
        metrics.observe_upstream(status)
    metrics.observe_retry(1.5)
    metrics.observe_pacing(0.75)
    metrics.observe_throttled("export.arxiv.org")
    metrics.observe_events([("paper.revised", ("version", "title")), ("paper.added", ())])
    metrics.observe_revisions(2)
    metrics.observe_delivery("delivered", 0.4)
    metrics.observe_delivery("retry", None)
    metrics.observe_sweeps(due=3, not_due=500)
    metrics.observe_harvest_page(1000)
    metrics.observe_publication_request("crossref", "link", ok=True)
    metrics.observe_publication_request("openalex", "link", ok=False)


@pytest.fixture(scope="module")
def syncd_server() -> Iterator[HttpServer]:
    """An HttpServer on loopback exposing every metric, the database-backed ones included."""
    _observe_a_little_of_everything()
    collector = metrics.register_store_collector(lambda: SNAPSHOT)
    try:
        with HttpServer("127.0.0.1", 0, ready=lambda: Readiness(True, {})) as server:
            yield server
    finally:
        metrics.unregister_store_collector(collector)


@dataclass(frozen=True)
class Prometheus:
    """A running Prometheus: its API client and its log file."""

    api: httpx.Client
    log: Path

    def get(self, path: str, **params: str) -> Any:
        """The ``data`` of a successful API answer."""
        response = self.api.get(path, params=params)
        response.raise_for_status()
        body = response.json()
        assert body["status"] == "success", body
        return body["data"]

    def log_tail(self) -> str:
        """The end of Prometheus' own log, for failure messages."""
        return self.log.read_text(encoding="utf-8", errors="replace")[-3000:]


@pytest.fixture(scope="module")
def prometheus(
    syncd_server: HttpServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Prometheus]:
    """Prometheus scraping syncd every second, always terminated afterwards."""
    binary = _binary("prometheus")
    workdir = tmp_path_factory.mktemp("prometheus")
    config = workdir / "prometheus.yml"
    config.write_text(
        "global:\n"
        "  scrape_interval: 1s\n"
        "  scrape_timeout: 1s\n"
        "scrape_configs:\n"
        "  - job_name: syncd\n"
        "    static_configs:\n"
        f"      - targets: ['127.0.0.1:{syncd_server.port}']\n",
        encoding="utf-8",
    )
    port = free_port()
    command = [
        binary,
        f"--config.file={config}",
        f"--storage.tsdb.path={workdir / 'tsdb'}",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    log = workdir / "prometheus.log"
    with (
        log.open("wb") as out,
        subprocess.Popen(
            command, cwd=workdir, stdin=subprocess.DEVNULL, stdout=out, stderr=out
        ) as process,
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=2.0) as api,
    ):
        try:
            running = Prometheus(api, log)
            _wait_until_scraped(running, process)
            yield running
        finally:
            _terminate(process)


def _wait_until_scraped(prom: Prometheus, process: subprocess.Popen[bytes]) -> None:
    """Block until Prometheus reports the syncd target up; fail if it dies or takes too long."""

    def target_up() -> bool:
        if process.poll() is not None:
            pytest.fail(f"prometheus exited with {process.returncode}:\n{prom.log_tail()}")
        try:
            targets = prom.get("/api/v1/targets")["activeTargets"]
        except httpx.HTTPError:
            return False  # still starting
        return any(t["labels"]["job"] == "syncd" and t["health"] == "up" for t in targets)

    _poll(prom, "the syncd target to be up", target_up)


def _terminate(process: subprocess.Popen[bytes]) -> None:
    """Stop Prometheus politely, then forcibly if it does not go within 10 s."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10.0)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10.0)


def _poll(prom: Prometheus, what: str, attempt: Callable[[], T | None]) -> T:
    """Call ``attempt`` until it returns something truthy or DEADLINE passes."""
    deadline = time.monotonic() + DEADLINE
    while True:
        result = attempt()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"waited {DEADLINE:g} s for {what}; prometheus log:\n{prom.log_tail()}")
        time.sleep(0.2)


def _series_names(prom: Prometheus) -> set[str]:
    """The names of every syncd series Prometheus has stored."""
    result = prom.get("/api/v1/query", query='count by (__name__) ({__name__=~"syncd_.+"})')
    return {item["metric"]["__name__"] for item in result["result"]}


def _metadata_types(prom: Prometheus) -> dict[str, str]:
    """The type Prometheus recorded for each syncd metric family."""
    found = prom.get("/api/v1/targets/metadata", match_target='{job="syncd"}')
    return {item["metric"]: item["type"] for item in found if item["metric"].startswith("syncd_")}


def _expected_series() -> set[str]:
    """Every series name the metric families expand to (histograms into three)."""
    names: set[str] = set()
    for name, kind in EXPECTED_TYPES.items():
        if kind == "histogram":
            names |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
        else:
            names.add(name)
    return names


def test_prometheus_records_every_metric_with_its_type(prometheus: Prometheus) -> None:
    """Prometheus' metadata lists exactly syncd's metric families, each with the right type."""
    types = _poll(
        prometheus,
        "metadata of every syncd metric",
        lambda: (found := _metadata_types(prometheus)).keys() >= EXPECTED_TYPES.keys() and found,
    )
    assert types == EXPECTED_TYPES


def test_prometheus_stores_every_series(prometheus: Prometheus) -> None:
    """Every series name syncd exposes is queryable, and nothing else (no _created)."""
    expected = _expected_series()
    names = _poll(
        prometheus,
        "every syncd series",
        lambda: (found := _series_names(prometheus)) >= expected and found,
    )
    assert names == expected


def test_prometheus_reads_the_store_gauges(prometheus: Prometheus) -> None:
    """The database-backed gauges reach Prometheus with the snapshot's values."""
    result = prometheus.get("/api/v1/query", query="syncd_papers")["result"]
    papers = {item["metric"]["status"]: float(item["value"][1]) for item in result}
    assert papers == {
        "unlinked": 1.0,
        "tracked": 7.0,
        "candidate": 0.0,
        "removed": 0.0,
        "rejected": 0.0,
    }
    result = prometheus.get("/api/v1/query", query="syncd_outbox_dead_letters")["result"]
    assert [float(item["value"][1]) for item in result] == [1.0]
    result = prometheus.get("/api/v1/query", query="syncd_arxiv_cooldown_seconds")["result"]
    cooldowns = {item["metric"]["host"]: float(item["value"][1]) for item in result}
    assert cooldowns == {"export.arxiv.org": 240.0, "arxiv.org": 0.0}
    result = prometheus.get("/api/v1/query", query="syncd_publications")["result"]
    publications = {item["metric"]["state"]: float(item["value"][1]) for item in result}
    assert publications == {"accepted": 12.0, "candidate": 2.0, "due": 40.0, "failing": 1.0}


def test_promtool_lints_the_metrics_clean(syncd_server: HttpServer) -> None:
    """`promtool check metrics` accepts the /metrics body without a single complaint."""
    promtool = _binary("promtool")
    body = httpx.get(f"http://127.0.0.1:{syncd_server.port}/metrics", timeout=5.0).content
    checked = subprocess.run(
        [promtool, "check", "metrics"],
        input=body,
        capture_output=True,
        timeout=DEADLINE,
        check=False,
    )
    report = (checked.stdout + checked.stderr).decode(errors="replace")
    assert checked.returncode == 0, report
    assert report.strip() == ""
