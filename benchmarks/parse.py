"""Row "Parse": one 2,000-entry Atom page (arXiv's maximum) to canonical records.

syncd: ``syncd.sources.arxiv.parse_feed`` (hardened parser, validation, normalised ``Record``s).
Baseline (a), the bare walk: ``lxml.etree.fromstring`` with lxml's default parser,
then every entry's children visited, reading each one's tag and text: the least
any parser that looks at every field must do.  Baseline (b): the ``arxiv``
package's parser (4.x, ``arxiv._feed.parse``), which builds ``arxiv.Result``s.
Also shown, not targeted: a walk that only iterates the entries (no children).

Target (issue 24): syncd at most 1.5x (a), and faster than (b).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from lxml import etree

from benchmarks import feeds
from benchmarks.common import Paired, fresh_heap

ENTRY = feeds.ENTRY
ENTRIES = 2000
TARGET_WALK = 1.5


def bare_walk(body: bytes) -> int:
    """Baseline (a): parse, and visit every entry's children reading tag and text."""
    root = etree.fromstring(body)
    fields = 0
    for entry in root.iterchildren(ENTRY):
        for child in entry:
            _ = child.tag, child.text
            fields += 1
    return fields


def entries_only(body: bytes) -> int:
    """Parse and iterate the entries, nothing more (shown for scale)."""
    root = etree.fromstring(body)
    return sum(1 for _ in root.iterchildren(ENTRY))


def _time(fn: Callable[[bytes], Any], body: bytes) -> float:
    fresh_heap()
    started = time.perf_counter()
    fn(body)
    return time.perf_counter() - started


def run(reps: int, entries: int = ENTRIES, profile: bool = False) -> dict[str, Any]:
    import arxiv._feed  # noqa: PLC0415

    from syncd.sources.arxiv import parse_feed  # noqa: PLC0415

    body = feeds.render_page(0, entries, total=entries, max_results=entries, author=None)
    page = parse_feed(body)
    assert len(page.records) == entries
    assert len(arxiv._feed.parse(body).results) == entries
    sides: dict[str, Callable[[bytes], Any]] = {
        "syncd": parse_feed,
        "bare_walk": bare_walk,
        "arxiv": arxiv._feed.parse,
        "entries_only": entries_only,
    }
    for fn in sides.values():  # warm up
        fn(body)
    times: dict[str, list[float]] = {name: [] for name in sides}
    order = list(sides)
    for i in range(reps):
        # rotate the order so no side always runs right after another
        for name in order[i % len(order) :] + order[: i % len(order)]:
            times[name].append(_time(sides[name], body))
    vs_bare = Paired(times["syncd"], times["bare_walk"])
    vs_arxiv = Paired(times["syncd"], times["arxiv"])
    result: dict[str, Any] = {
        "entries": entries,
        "page_bytes": len(body),
        "median_seconds": {k: round(statistics.median(v), 6) for k, v in times.items()},
        "ratio_vs_bare_walk": round(vs_bare.ratio, 3),
        "ratio_vs_arxiv": round(vs_arxiv.ratio, 3),
        "arxiv_vs_bare_walk": round(Paired(times["arxiv"], times["bare_walk"]).ratio, 3),
        "ratios_vs_bare_walk": [round(r, 3) for r in vs_bare.ratios],
        "ratios_vs_arxiv": [round(r, 3) for r in vs_arxiv.ratios],
        "target": f"<= {TARGET_WALK}x bare lxml walk, and < 1.0x arxiv",
        "met": vs_bare.ratio <= TARGET_WALK and vs_arxiv.ratio < 1.0,
    }
    if profile:
        from benchmarks.profiling import profile as run_profile  # noqa: PLC0415

        def ten_pages() -> None:
            for _ in range(10):
                parse_feed(body)

        result["profile"] = run_profile(ten_pages)
    return result
