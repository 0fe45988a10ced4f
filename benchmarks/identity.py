"""Row "Requests with identifiers": 1,000 authors, 500 with an arXiv author id, per cycle.

Every author has 2 papers (with a co-author of their own) on the fake arXiv
of the test suite; the identified ones claim both in their feed
(``/a/<id>.atom``).  syncd runs a first cycle (every author's baseline:
each identified author's feed is read once, as it must be to know their
claims), then ``cycles`` more, each one ``cycle_hours`` later: the clock is
moved by dating every stored feed read ``cycle_hours`` earlier before each
cycle, so a simulated day costs no day.

Counted from the fake's request log, per cycle: name queries (batched as in
row "Requests": ``len(author_batches)``) and author feeds.  Baselines, side
by side in the same run: one feed per identified author every cycle, and
one name query per author (no batching).  Targets: the name queries are the
batches, never N; after the first cycle no cycle reads more than twice its
fair share of feeds (``identified x cycle_hours / 24`` at the default
``author_feed_interval`` of a day), never one per author per cycle; and no
feed is read twice within the interval.  Ratios, not times.
"""

from __future__ import annotations

import itertools
import math
from datetime import timedelta
from typing import Any

PAPERS_PER_AUTHOR = 2
FEED_INTERVAL = 86400.0


def _feed_id(index: int) -> str:
    return f"benchmarkson{index:04d}_a_1"


def run(authors: int, identified: int, cycles: int, cycle_hours: float) -> dict[str, Any]:
    import tempfile  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    import sqlalchemy as sa  # noqa: PLC0415

    from benchmarks.authors import names  # noqa: PLC0415
    from benchmarks.common import open_store, sqlite_url  # noqa: PLC0415
    from syncd.config import ArxivSettings, AuthorSettings, SyncSettings  # noqa: PLC0415
    from syncd.service import batches, sync  # noqa: PLC0415
    from syncd.sources.arxiv import ArxivClient  # noqa: PLC0415
    from syncd.storage.schema import authors_table  # noqa: PLC0415
    from tests.fakearxiv import AUTHOR_FEED_PREFIX, FakeArxiv, make_record  # noqa: PLC0415

    people = [
        AuthorSettings(name=name, arxiv_author_id=_feed_id(i) if i < identified else None).author()
        for i, name in enumerate(names(authors))
    ]
    batched = len(batches.author_batches(people))
    per_cycle: list[dict[str, int]] = []
    # Requests are what this row counts: the database may skip its fsyncs in memory.
    memory = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(dir=memory) as folder, FakeArxiv() as arxiv:
        store = open_store(sqlite_url(Path(folder), "identity"))
        serial = 0
        for author in people:
            ids = []
            for _ in range(PAPERS_PER_AUTHOR):
                serial += 1
                ids.append(f"2605.{serial:05d}")
                coauthor = f"Coauthor {author.name.split()[-1]}"
                arxiv.publish(make_record(ids[-1], authors=(author.name, coauthor)))
            if author.arxiv_author_id is not None:
                arxiv.claim(author.arxiv_author_id, *ids)
        settings = ArxivSettings(
            api_url=arxiv.url,
            author_feed_url=arxiv.author_feed_url,
            author_feed_interval=FEED_INTERVAL,
            request_interval=0.0,
        )
        reads: dict[str, list[float]] = {}
        a = authors_table
        for cycle in range(cycles + 1):
            if cycle:
                with store.db.transaction() as conn:
                    rows = conn.execute(sa.select(a.c.id, a.c.feed_fetched_at)).all()
                    earlier = timedelta(hours=cycle_hours)
                    for row in rows:
                        if row.feed_fetched_at is not None:
                            when = row.feed_fetched_at - earlier
                            conn.execute(
                                a.update().where(a.c.id == row.id).values(feed_fetched_at=when)
                            )
            arxiv.reset_log()
            with ArxivClient(settings) as client:
                results = sync.sync_all(store, client, people, SyncSettings())
            failed = [r.error for r in results if not r.ok]
            if failed or arxiv.errors:
                raise RuntimeError(f"identity row: failed {failed[:3]}, fake {arxiv.errors}")
            feeds = [r.path for r in arxiv.requests if r.path.startswith(AUTHOR_FEED_PREFIX)]
            for path in feeds:
                reads.setdefault(path, []).append(cycle * cycle_hours)
            per_cycle.append({"queries": len(arxiv.requests) - len(feeds), "feeds": len(feeds)})
        store.close()
    # The cycles once the first interval has passed: before it, no feed is due.
    steady = [c for n, c in enumerate(per_cycle) if n and n * cycle_hours * 3600 >= FEED_INTERVAL]
    fair = identified * cycle_hours * 3600.0 / FEED_INTERVAL
    closest = min(
        (b - a for hours in reads.values() for a, b in itertools.pairwise(hours)),
        default=None,
    )
    requests = [c["queries"] + c["feeds"] for c in steady]
    naive = authors + identified
    met = (
        per_cycle[0]["feeds"] == identified
        and all(c["queries"] == batched for c in per_cycle)
        and max(c["feeds"] for c in per_cycle[1:]) <= 2 * math.ceil(fair)
        and (closest is None or closest >= FEED_INTERVAL / 3600.0)
    )
    return {
        "authors": authors,
        "identified": identified,
        "papers_per_author": PAPERS_PER_AUTHOR,
        "cycle_hours": cycle_hours,
        "author_feed_interval": FEED_INTERVAL,
        "cycles": per_cycle,
        "batches": batched,
        "first_cycle_feeds": per_cycle[0]["feeds"],
        "steady_feeds_max": max(c["feeds"] for c in per_cycle[1:]),
        "steady_feeds_mean": round(sum(c["feeds"] for c in steady) / len(steady), 2),
        "fair_share": round(fair, 2),
        "closest_reads_hours": closest,
        "steady_requests_mean": round(sum(requests) / len(requests), 2),
        "naive_requests": naive,
        "ratio_to_naive": round(sum(requests) / len(requests) / naive, 4),
        "target": "queries = batches; feeds per cycle <= 2x fair share; none within the interval",
        "met": met,
    }


def table_rows(r: dict[str, Any] | None) -> list[tuple[str, str, str, str, str, str]]:
    """The row's line of the results table (none when the row did not run)."""
    if r is None:
        return []
    return [
        (
            f"Requests with identifiers: {r['authors']:,} authors, {r['identified']:,} with"
            f" an id, {len(r['cycles']) - 1} cycles {r['cycle_hours']:g} h apart",
            f"{r['steady_requests_mean']:.1f} requests/cycle ({r['batches']} queries"
            f" + {r['steady_feeds_mean']:.1f} feeds, at most {r['steady_feeds_max']});"
            f" first cycle {r['first_cycle_feeds']} feeds",
            f"one query per author and one feed per id every cycle: {r['naive_requests']:,}",
            f"{r['ratio_to_naive']:.3f}x",
            "queries = batches; feeds <= 2x fair share; none within the interval",
            "yes" if r["met"] else "NO",
        )
    ]
