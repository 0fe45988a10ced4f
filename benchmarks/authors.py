"""Row "Requests": what tracking N authors (1, 10, 100) costs in requests per cycle.

Each synthetic author has 10 papers (with one co-author of their own) on the
fake arXiv of the test suite (``tests.fakearxiv.FakeArxiv``, which evaluates
``au:"A" OR au:"B"`` queries); syncd runs with the default ``page_size = 100``
so a batch's answer spans several pages.  Requests are counted from the
fake's request log.  The target: ``sum over batches of ceil(results / page_size)``
(``ceil(N / batch)`` requests plus the extra pages; plus one empty page after
an answer whose last page is full, which syncd asks for to confirm the end),
never N.

The cycle's wall time is then bounded below by arXiv's own limit,
``request_interval`` times requests; the ratio to that limit is reported,
measured with ``request_interval = 3.0`` s (arXiv's terms), after a pause of
one interval so the pacer starts fresh as in a real schedule.  An untimed
cycle with ``request_interval = 0`` runs first, so the measured one is a
steady state.
"""

from __future__ import annotations

import math
import time
from typing import Any

PAPERS_PER_AUTHOR = 10
PAGE_SIZE = 100
_FIRST = ["Ada", "Grace", "Alan", "Emmy", "Kurt", "Sofia", "Niels", "Marie", "Paul", "Lise"]


def names(count: int) -> list[str]:
    """Distinct synthetic authors whose surnames never match one another's (``names.could_be``)."""
    return [f"{_FIRST[i % len(_FIRST)]} Benchmarkson{i:03d}" for i in range(count)]


def expected_requests(entries: int, page_size: int = PAGE_SIZE) -> int:
    """Requests for one query's answer: its pages, plus the empty one after a full last page."""
    if not entries:
        return 1
    return math.ceil(entries / page_size) + (1 if entries % page_size == 0 else 0)


def run(counts: tuple[int, ...], interval: float) -> dict[str, Any]:
    import tempfile  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    from benchmarks.common import open_store, sqlite_url  # noqa: PLC0415
    from syncd.config import ArxivSettings, AuthorSettings, SyncSettings  # noqa: PLC0415
    from syncd.service.batches import author_batches, batch_query  # noqa: PLC0415
    from syncd.service.sync import sync_all  # noqa: PLC0415
    from syncd.sources.arxiv import ArxivClient  # noqa: PLC0415
    from tests.fakearxiv import FakeArxiv, make_record  # noqa: PLC0415

    points: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        for count in counts:
            authors = [AuthorSettings(name=name).author() for name in names(count)]
            store = open_store(sqlite_url(Path(folder), f"authors_{count}"))
            with FakeArxiv() as arxiv:
                serial = 0
                for a in authors:
                    for _ in range(PAPERS_PER_AUTHOR):
                        serial += 1
                        arxiv.publish(
                            make_record(
                                f"2605.{serial:05d}",
                                authors=(a.name, f"Coauthor {a.name.split()[-1]}"),
                            )
                        )
                batches = author_batches(authors)
                expected = sum(expected_requests(len(b) * PAPERS_PER_AUTHOR) for b in batches)

                def cycle(
                    pace: float, store: Any = store, authors: list[Any] = authors
                ) -> tuple[float, list[Any]]:
                    settings = ArxivSettings(
                        api_url=arxiv.url, request_interval=pace, page_size=PAGE_SIZE
                    )
                    started = time.perf_counter()
                    with ArxivClient(settings) as client:
                        results = sync_all(store, client, authors, SyncSettings())
                    return time.perf_counter() - started, results

                cycle(0.0)  # untimed: makes every paper known
                time.sleep(interval)  # a fresh pacer, as after a schedule period
                arxiv.reset_log()
                wall, results = cycle(interval)
                requests = len(arxiv.requests)
                if arxiv.errors:
                    raise RuntimeError(f"the fake arXiv failed: {arxiv.errors}")
            store.close()
            failed = [r.error for r in results if not r.ok]
            misattributed = [r.author for r in results if r.stats.entries != PAPERS_PER_AUTHOR]
            if failed or misattributed:
                raise RuntimeError(f"authors row: failed {failed}, misattributed {misattributed}")
            limit = interval * requests
            points.append(
                {
                    "authors": count,
                    "batches": len(batches),
                    "largest_batch": max(len(b) for b in batches),
                    "longest_query_chars": max(len(batch_query(b)) for b in batches),
                    "requests": requests,
                    "expected_requests": expected,
                    "unbatched_requests": count * expected_requests(PAPERS_PER_AUTHOR),
                    "wall_seconds": round(wall, 3),
                    "interval_limit_seconds": round(limit, 3),
                    "ratio_to_limit": round(wall / limit, 3) if limit else None,
                }
            )
    met = all(p["requests"] == p["expected_requests"] for p in points) and all(
        p["requests"] < p["authors"] for p in points if p["authors"] > 1
    )
    return {
        "points": points,
        "papers_per_author": PAPERS_PER_AUTHOR,
        "page_size": PAGE_SIZE,
        "request_interval": interval,
        "target": "sum over batches of ceil(results/page_size), never N",
        "met": met,
    }
