"""Row "Caps": the memory of reading a 50,000-entry author feed, streamed and capped,
against the whole-body parse it replaced (issue 34).

The feed is ``tests.largefeed.LargeFeedServer``'s, served on loopback by this
process; each way of reading it runs in a fresh child that does nothing else:

* ``streamed``: ``ArxivClient.author_feed`` as a cycle calls it, the body fed to
  ``FeedReader`` as it arrives, ``max_results_per_author`` records kept.
* ``streamed_uncapped``: the same with a cap above the feed's length, every
  record kept: what the streaming alone saves.
* ``whole``: what the client did before: the body read whole under the size
  cap, parsed whole by the hardened parser, every entry built into a record.

Two peaks per child.  ``tracemalloc`` sees what Python allocates (the body's
bytes, the records, lxml's element proxies) but not libxml2's own tree, which
is C ``malloc``; the process's high-water mark (``VmHWM``, as in
``benchmarks/memory.py``) sees everything, the interpreter and imports
included, so the child's mark before the read is given too.
"""

from __future__ import annotations

import json
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

from benchmarks.common import child_answer

ENTRIES = 50_000
CAP = 10_000
FEED_ID = "0000-0002-1825-0097"
# The capped read's peaks against the whole read's: bounded by the cap, not the feed.
TARGET = 0.5
OUTPUT = Path(__file__).resolve().parent / "results-caps.json"


def run(entries: int = ENTRIES, cap: int = CAP) -> dict[str, Any]:
    """Serve the feed and measure each way of reading it; the row's numbers."""
    from tests.fakearxiv import make_record  # noqa: PLC0415
    from tests.largefeed import LargeFeedServer  # noqa: PLC0415

    record = make_record("2501.00001", authors=("A. Lovelace", "Charles Babbage"))
    with LargeFeedServer(record, entries) as server:
        url = server.author_feed_url
        modes = {
            "streamed": _child("streamed", url, cap),
            # Streamed with no cap: what the streaming alone saves, every record kept.
            "streamed_uncapped": _child("streamed", url, entries),
            "whole": _child("whole", url, cap),
        }
    streamed, whole = modes["streamed"], modes["whole"]
    return {
        "entries": entries,
        "cap": cap,
        "modes": modes,
        "tracemalloc_ratio": round(
            streamed["tracemalloc_peak_mib"] / whole["tracemalloc_peak_mib"], 3
        ),
        "rss_growth_ratio": round(streamed["rss_growth_mib"] / whole["rss_growth_mib"], 3),
    }


def table_rows(result: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """The row's line of the results table: the capped read's peaks against the whole read's."""
    streamed, whole = result["modes"]["streamed"], result["modes"]["whole"]
    met = result["tracemalloc_ratio"] <= TARGET and result["rss_growth_ratio"] <= TARGET
    return [
        (
            f"Caps: an author feed of {result['entries']:,} entries, {result['cap']:,} kept",
            f"tracemalloc {streamed['tracemalloc_peak_mib']} MiB,"
            f" RSS +{streamed['rss_growth_mib']} MiB",
            f"whole body: tracemalloc {whole['tracemalloc_peak_mib']} MiB,"
            f" RSS +{whole['rss_growth_mib']} MiB",
            f"{result['tracemalloc_ratio']}x / {result['rss_growth_ratio']}x",
            f"<= {TARGET}x both",
            "yes" if met else "NO",
        )
    ]


def _child(mode: str, url: str, cap: int) -> dict[str, Any]:
    return child_answer("benchmarks.caps", "--child", mode, url, str(cap))


def _measure(mode: str, url: str, cap: int) -> dict[str, Any]:
    """In the child: read the feed one way; its peaks, time and records kept."""
    from syncd.config import ArxivSettings  # noqa: PLC0415
    from syncd.sources.arxiv import ArxivClient  # noqa: PLC0415

    settings = ArxivSettings(
        author_feed_url=url, request_interval=0, timeout=600, max_results_per_author=cap
    )
    before = _high_water_mib()
    tracemalloc.start()
    started = time.perf_counter()
    with ArxivClient(settings) as client:
        if mode == "streamed":
            kept, entries = _streamed(client)
        else:
            kept, entries = _whole(client, url)
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    after = _high_water_mib()
    return {
        "mode": mode,
        "records": kept,
        "entries": entries,
        "seconds": round(seconds, 2),
        "tracemalloc_peak_mib": round(peak / 2**20, 1),
        "rss_before_mib": before,
        "rss_peak_mib": after,
        "rss_growth_mib": round(after - before, 1),
    }


def _streamed(client: Any) -> tuple[int, int]:
    page = client.author_feed(FEED_ID)
    return len(page.records), page.entries


def _whole(client: Any, url: str) -> tuple[int, int]:
    """The read as it was before issue 34: whole body, whole tree, every record."""
    from lxml import etree  # noqa: PLC0415

    from syncd.sources.arxiv._parser import (  # noqa: PLC0415
        ENTRY,
        build_record,
        hardened_parser,
        read_entry,
        refuse_declarations,
    )

    def parse(body: bytes) -> list[Any]:
        refuse_declarations(body)
        root = etree.fromstring(body, hardened_parser())
        entries = [child for child in root if child.tag == ENTRY]
        return [
            build_record(read_entry(entry, n), n, joined=False)
            for n, entry in enumerate(entries, 1)
        ]

    records = client.request(f"{url}{FEED_ID}.atom", {}, {}, parse)
    return len(records), len(records)


def _high_water_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def main(argv: list[str]) -> int:
    """``--child MODE URL CAP`` measures one read; otherwise the row, printed and saved."""
    if argv[:1] == ["--child"]:
        print(json.dumps(_measure(argv[1], argv[2], int(argv[3]))))
        return 0
    result = run()
    OUTPUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
