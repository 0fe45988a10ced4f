"""Rows "Quiet cycle" and "Busy cycle": a full ``sync_all`` of one author's 10,000 papers.

The pages come from the static page server (``benchmarks.servers``), rendered
before anything is timed, 2,000 entries a page, ``request_interval = 0``.
The known state is made by one untimed sync of version 1 of every paper.

Quiet: the same pages again; nothing changed.  Baseline: a bare
``httpx.Client`` fetching the same pages with the same parameters, each body
walked by the bare lxml walk of the parse row.  Statements the cycle sends
are counted (``before_cursor_execute``): only the sync-run record may write.

Busy: every paper has a new version (v2, v3, ... one per repetition), so the
cycle stores 10,000 revisions and 10,000 ``paper.revised`` events (no webhook
endpoint: no deliveries).  Baseline (issue 24): what a busy cycle cannot avoid,
a quiet cycle of the same pages (the fetch, the parse and the comparison of a
cycle that finds nothing new, measured on the store right after) plus a bare
SQLAlchemy Core bulk insert (``executemany``, one transaction) of 10,000
revision rows and 10,000 event rows of the same size (the same record JSON,
kinds and changes) into plain tables of the same columns, in the same
database.  The ratio to the bulk insert alone is stated beside it.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from benchmarks import feeds
from benchmarks.common import (
    Paired,
    StatementCounter,
    alternate,
    fresh_heap,
    page_urls,
    settle,
    write_dataset,
)
from benchmarks.parse import bare_walk

PAGE_SIZE = 2000
# Issue 24's targets: the quiet cycle against the bare fetch and walk, and the busy
# cycle against what it cannot avoid (a quiet cycle plus the bare bulk insert).
TARGET_QUIET = 2.0
TARGET_BUSY = 2.0


@dataclass
class Pages:
    """The running page server and the folder it serves."""

    url: str
    folder: Path
    rendered: set[str]

    def dataset(self, total: int, version: int = 1) -> str:
        name = f"p{total}_v{version}"
        if name not in self.rendered:
            write_dataset(self.folder, name, total, PAGE_SIZE, version=version)
            self.rendered.add(name)
        return name

    def api_url(self, dataset: str) -> str:
        return f"{self.url}/{dataset}/api/query"

    def served(self) -> int:
        """How many API requests the server has answered so far."""
        return int(httpx.get(f"{self.url}/_stats", timeout=10).json()["requests"])

    def warm(self, dataset: str, total: int) -> None:
        """Have the server read the dataset's files once (untimed)."""
        with httpx.Client(timeout=60) as client:
            for params in page_urls(self.api_url(dataset), total, PAGE_SIZE, query()):
                client.get(self.api_url(dataset), params=params).raise_for_status()


def query() -> str:
    return f'au:"{feeds.AUTHOR}"'


def author() -> Any:
    from syncd.config import AuthorSettings  # noqa: PLC0415

    return AuthorSettings(name=feeds.AUTHOR, seeds=feeds.SEEDS).author()


def arxiv_settings(api_url: str, **overrides: Any) -> Any:
    from syncd.config import ArxivSettings  # noqa: PLC0415

    values: dict[str, Any] = {
        "api_url": api_url,
        "request_interval": 0.0,
        "page_size": PAGE_SIZE,
        "timeout": 120.0,
        "max_retries": 0,
        # Records of up to 100,000 papers read whole, as before issue 34's cap (the caps row
        # measures the cap).
        "max_results_per_author": 1_000_000,
    }
    values.update(overrides)
    return ArxivSettings(**values)


def sync_once(
    store: Any, api_url: str, *, collect: bool = True, **overrides: Any
) -> tuple[float, list[Any]]:
    """One ``sync_all`` of the author, as ``syncd sync`` runs it; (seconds, results).

    ``collect``: run ``fresh_heap()`` first, untimed (profiles do it before starting).
    """
    from syncd.config import SyncSettings  # noqa: PLC0415
    from syncd.service.sync import sync_all  # noqa: PLC0415
    from syncd.sources.arxiv import ArxivClient  # noqa: PLC0415

    settings = arxiv_settings(api_url, **overrides)
    if collect:
        fresh_heap()
    started = time.perf_counter()
    with ArxivClient(settings) as client:
        results = sync_all(store, client, [author()], SyncSettings())
    elapsed = time.perf_counter() - started
    failed = [r.error for r in results if not r.ok]
    if failed:
        raise RuntimeError(f"the cycle failed: {failed}")
    return elapsed, results


def fetch_and_walk(api_url: str, total: int) -> float:
    """The quiet cycle's baseline: the same GETs with a bare httpx client, bodies walked."""
    fresh_heap()
    started = time.perf_counter()
    with httpx.Client(timeout=120) as client:
        for params in page_urls(api_url, total, PAGE_SIZE, query()):
            response = client.get(api_url, params=params)
            response.raise_for_status()
            bare_walk(response.content)
    return time.perf_counter() - started


def setup_known(store: Any, pages: Pages, total: int) -> dict[str, Any]:
    """The untimed first sync that makes every paper known (tracked), then ``settle``.

    On PostgreSQL one quiet cycle also runs before ``settle`` (statistics as
    the first sync left them), to show what the planner statistics change.
    """
    dataset = pages.dataset(total, 1)
    pages.warm(dataset, total)
    seconds, results = sync_once(store, pages.api_url(dataset))
    counts = store.papers.counts()
    if counts.get("tracked") != total:
        raise RuntimeError(f"setup left {counts} papers, not {total} tracked")
    setup = {"first_sync_seconds": round(seconds, 3), "events": len(results[0].events)}
    if store.db.dialect == "postgresql":
        setup["quiet_cycle_before_analyze_seconds"] = round(
            sync_once(store, pages.api_url(dataset))[0], 3
        )
        settle(store)
    return setup


def quiet(store: Any, pages: Pages, total: int, reps: int) -> dict[str, Any]:
    """The quiet row on a store that already knows the ``total`` papers of version 1."""
    dataset = pages.dataset(total, 1)
    api_url = pages.api_url(dataset)

    def syncd_side(_: int) -> float:
        seconds, results = sync_once(store, api_url)
        if results[0].events:
            raise RuntimeError("a quiet cycle published events")
        return seconds

    paired = alternate(reps, syncd_side, lambda _: fetch_and_walk(api_url, total))
    counter = StatementCounter().attach(store.engine)
    served = pages.served()
    with counter.counting():
        sync_once(store, api_url)
    return {
        "papers": total,
        "requests": pages.served() - served,
        "baseline_requests": len(page_urls(api_url, total, PAGE_SIZE, query())),
        **paired.summary(),
        **counter.report(),
        "target": f"<= {TARGET_QUIET}x bare httpx fetch + bare lxml walk;"
        " no writes but the sync-run record",
        "met": paired.ratio <= TARGET_QUIET
        and not counter.report()["rows_changed_other_than_sync_run"],
    }


# -- busy ------------------------------------------------------------------------------

_bench_md = sa.MetaData()
_JSON = sa.JSON().with_variant(JSONB(), "postgresql")
_TIME = sa.DateTime(timezone=True)
bench_revisions = sa.Table(
    "bench_revisions",
    _bench_md,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("paper_id", sa.Integer, nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("observed_at", _TIME, nullable=False),
    sa.Column("source", sa.String(200), nullable=False),
    sa.Column("version", sa.Integer),
    sa.Column("kinds", _JSON, nullable=False),
    sa.Column("changes", _JSON, nullable=False),
    sa.Column("record", _JSON, nullable=False),
    sa.Column("record_hash", sa.String(32), nullable=False),
    sa.Column("sync_run_id", sa.Integer),
)
bench_events = sa.Table(
    "bench_events",
    _bench_md,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(40), nullable=False),
    sa.Column("type", sa.String(32), nullable=False),
    sa.Column("created_at", _TIME, nullable=False),
    sa.Column("author_id", sa.Integer, nullable=False),
    sa.Column("paper_id", sa.Integer, nullable=False),
    sa.Column("revision_id", sa.Integer),
    sa.Column("sync_run_id", sa.Integer),
    sa.Column("kinds", _JSON, nullable=False),
    sa.Column("changes", _JSON, nullable=False),
)


def _rows(
    pages: Pages, total: int, version: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Revision and event rows of the same size as the ones syncd writes for ``version``."""
    from syncd.domain.record import content_hash  # noqa: PLC0415
    from syncd.sources.arxiv import parse_feed  # noqa: PLC0415

    dataset = pages.dataset(total, version)
    now = datetime.now(UTC)
    revisions, events = [], []
    for start in range(0, total, PAGE_SIZE):
        page = parse_feed((pages.folder / dataset / f"{start}.xml").read_bytes())
        for offset, record in enumerate(page.records):
            paper_id = start + offset + 1
            changes = {"version": {"old": version - 1, "new": version}}
            revisions.append(
                {
                    "paper_id": paper_id,
                    "seq": version,
                    "observed_at": now,
                    "source": "arxiv",
                    "version": record.version,
                    "kinds": ["version"],
                    "changes": changes,
                    "record": record.to_dict(),
                    "record_hash": content_hash(record),
                    "sync_run_id": version,
                }
            )
            events.append(
                {
                    "id": f"evt_{paper_id:032x}{version:04x}"[:36],
                    "type": "paper.revised",
                    "created_at": now,
                    "author_id": 1,
                    "paper_id": paper_id,
                    "revision_id": paper_id,
                    "sync_run_id": version,
                    "kinds": ["version"],
                    "changes": changes,
                }
            )
    return revisions, events


def bulk_insert(
    engine: sa.Engine, revisions: list[dict[str, Any]], events: list[dict[str, Any]]
) -> float:
    fresh_heap()
    started = time.perf_counter()
    with engine.begin() as conn:
        conn.execute(bench_revisions.insert(), revisions)
        conn.execute(bench_events.insert(), events)
    return time.perf_counter() - started


def busy(
    store: Any,
    pages: Pages,
    total: int,
    reps: int,
    *,
    profile: bool = False,
) -> dict[str, Any]:
    """The busy row on a store that knows version 1 of the ``total`` papers."""
    _bench_md.create_all(store.engine)
    # Version 2 for repetition 0, 3 for 1, ...: every repetition is a real change.
    prepared: dict[int, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    state = {"version": 1}
    counter = StatementCounter().attach(store.engine)

    def syncd_side(i: int) -> float:
        version = state["version"] + 1
        state["version"] = version
        dataset = pages.dataset(total, version)
        pages.warm(dataset, total)
        with counter.counting():
            seconds, results = sync_once(store, pages.api_url(dataset))
        if len(results[0].events) != total:
            raise RuntimeError(f"a busy cycle published {len(results[0].events)} events")
        return seconds

    quiet_seconds: list[float] = []

    def baseline_side(i: int) -> float:
        version = i + 2
        if version not in prepared:
            prepared.clear()
            prepared[version] = _rows(pages, total, version)
        # The version the store holds now: this cycle finds nothing new.
        seconds, results = sync_once(store, pages.api_url(pages.dataset(total, state["version"])))
        if results[0].events:
            raise RuntimeError("the busy row's quiet cycle published events")
        quiet_seconds.append(seconds)
        return bulk_insert(store.engine, *prepared[version])

    paired = alternate(reps, syncd_side, baseline_side)
    unavoidable = Paired(
        paired.syncd, [q + b for q, b in zip(quiet_seconds, paired.baseline, strict=True)]
    )
    result: dict[str, Any] = {
        "papers": total,
        **paired.summary(),
        "quiet_seconds": [round(t, 6) for t in quiet_seconds],
        "quiet_median_seconds": round(statistics.median(quiet_seconds), 6),
        "ratios_vs_quiet_plus_bulk": [round(r, 3) for r in unavoidable.ratios],
        "ratio_vs_quiet_plus_bulk": round(unavoidable.ratio, 3),
        "last_cycle": counter.report(),
        "target": f"<= {TARGET_BUSY}x a quiet cycle plus the bare Core bulk insert of the rows",
        "met": unavoidable.ratio <= TARGET_BUSY,
    }
    if profile:
        result["profile"] = profile_cycle(store, pages, total, state)
    return result


def profile_cycle(store: Any, pages: Pages, total: int, state: dict[str, int]) -> dict[str, Any]:
    from benchmarks.profiling import profile as run_profile  # noqa: PLC0415

    state["version"] += 1
    dataset = pages.dataset(total, state["version"])
    pages.warm(dataset, total)
    return run_profile(
        lambda: sync_once(store, pages.api_url(dataset), collect=False), interval=0.001
    )


def profile_quiet(store: Any, pages: Pages, total: int) -> dict[str, Any]:
    from benchmarks.profiling import profile as run_profile  # noqa: PLC0415

    api_url = pages.api_url(pages.dataset(total, 1))
    return run_profile(lambda: sync_once(store, api_url, collect=False), interval=0.001)
