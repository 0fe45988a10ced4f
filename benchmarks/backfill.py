"""Row "Backfill": what fetching the earlier versions of P papers costs in requests.

P papers (1,000 in a full run) of the project's seeded author, each at a
version from 2 to 5, are published on the fake arXiv of the test suite
(``tests.fakearxiv.FakeArxiv``, which answers versioned ``id_list`` requests
version by version).  An untimed ``sync_all`` makes them known; the
versions it fetched are then deleted, as in a database written before
backfills existed.  The measured step is what ``syncd backfill`` runs
(``plan_backfill`` and ``run_backfill``, the code the cycles use too) for
the V missing versions, requests counted from the fake's log.

The target: ``ceil(V / batch)`` requests, where the batch is as many ids as
``syncd.sources.arxiv.id_list_batches`` fits in one URL (466 ids shaped
``2601.00001v1``), never one per version, and every version stored.  The
time arXiv's interval makes it take is requests x 3 s.
"""

from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path
from typing import Any

# The version each paper is at, in turn: V = P x (1 + 2 + 3 + 4) / 4.
CURRENT = (2, 3, 4, 5)


def run(papers: int, interval: float) -> dict[str, Any]:
    import sqlalchemy as sa  # noqa: PLC0415

    from benchmarks import feeds  # noqa: PLC0415
    from benchmarks.common import open_store, sqlite_url  # noqa: PLC0415
    from syncd.config import ArxivSettings, AuthorSettings, SyncSettings  # noqa: PLC0415
    from syncd.service.backfill import plan_backfill, run_backfill  # noqa: PLC0415
    from syncd.service.sync import sync_all  # noqa: PLC0415
    from syncd.sources.arxiv import ArxivClient, id_list_batches  # noqa: PLC0415
    from syncd.storage.schema import revisions_table  # noqa: PLC0415
    from tests.fakearxiv import FakeArxiv, make_record  # noqa: PLC0415

    author = AuthorSettings(name=feeds.AUTHOR, seeds=feeds.SEEDS).author()
    missing: list[str] = []
    backfilled = revisions_table.c.source.like("arxiv:v%")
    with tempfile.TemporaryDirectory() as folder, FakeArxiv() as arxiv:
        for n in range(papers):
            arxiv_id = f"2601.{n + 1:05d}"
            current = CURRENT[n % len(CURRENT)]
            for version in range(1, current + 1):
                record = make_record(arxiv_id, version, authors=(author.name, feeds.COAUTHOR))
                arxiv.publish(record)
            missing += [f"{arxiv_id}v{v}" for v in range(1, current)]
        store = open_store(sqlite_url(Path(folder), "backfill"))
        settings = ArxivSettings(api_url=arxiv.url, request_interval=0.0, page_size=2000)
        try:
            with ArxivClient(settings) as client:
                first = sync_all(store, client, [author], SyncSettings())
            first_sync_requests = len(arxiv.requests)
            with store.db.transaction() as conn:
                conn.execute(revisions_table.delete().where(backfilled))
            arxiv.reset_log()
            started = time.perf_counter()
            plan = plan_backfill([g for g in store.versions.gaps() if g.missing])
            with ArxivClient(settings) as client:
                done = run_backfill(store, client, plan)
            wall = time.perf_counter() - started
            with store.db.transaction() as conn:
                count = sa.select(sa.func.count()).select_from(revisions_table).where(backfilled)
                stored = int(conn.scalar(count) or 0)
        finally:
            store.close()
        if arxiv.errors or not all(r.ok for r in first):
            raise RuntimeError(f"backfill row: {arxiv.errors or [r.error for r in first]}")
        sizes = [len(r.params["id_list"].split(",")) for r in arxiv.requests]
    batch = max(len(b) for b in id_list_batches(missing))
    expected = math.ceil(len(missing) / batch)
    return {
        "papers": papers,
        "missing_versions": len(missing),
        "batch": batch,
        "requests": len(sizes),
        "ids_per_request": sizes,
        "expected_requests": expected,
        "planned_requests": plan.requests,
        "one_per_version": len(missing),
        "versions_stored": stored,
        "reported_stored": done.versions_stored,
        "first_sync_requests": first_sync_requests,
        "backfill_seconds_at_interval_0": round(wall, 3),
        "seconds_at_interval": round(len(sizes) * interval, 1),
        "request_interval": interval,
        "target": "ceil(V / batch) requests, every version stored",
        "met": len(sizes) == expected == plan.requests and stored == len(missing),
    }
