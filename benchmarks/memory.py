"""Row "Memory": peak RSS of a quiet cycle over 100,000 papers against one over 10,000.

Each size runs in a fresh subprocess that does nothing but open the store, run
one quiet ``sync_all`` against the static page server and read its own peak
RSS afterwards; nothing is subtracted, so the interpreter and imports are in
both figures.

The peak is ``VmHWM`` from ``/proc/self/status``: the high-water mark of the
process's own address space since it started.  ``ru_maxrss`` is reported too
but not used: on Linux a child's ``getrusage(RUSAGE_SELF).ru_maxrss`` starts
from the *parent's* high-water mark at fork (the kernel carries it across
``execve`` in ``signal->maxrss``), so a child of a 300 MiB parent reports at
least 300 MiB even if it never uses more than 14 MiB.  The bench's own process
grows while it renders pages, which would make that figure meaningless.

The "known" state is written beforehand by the parent, straight into syncd's
tables (``syncd.storage.schema``) with syncd's own encoding (``Record.to_dict``,
``content_hash``), exactly the rows a first sync leaves (checked: the child's
cycle must publish nothing and write only the run record).  The seeds are
imported through the store first, as a first sync does.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import feeds
from benchmarks.common import (
    StatementCounter,
    child_answer,
    open_store,
    sqlite_url,
)
from benchmarks.cycles import PAGE_SIZE, Pages

TARGET = 1.2  # issue 24: peak RSS at 100,000 papers against 10,000


def bulk_known(url: str, pages: Pages, total: int) -> float:
    """Write the state a first sync of ``total`` papers leaves; return the seconds it took."""
    from benchmarks.cycles import author  # noqa: PLC0415
    from syncd.domain.record import content_hash  # noqa: PLC0415
    from syncd.service.planning import seed_author  # noqa: PLC0415
    from syncd.sources.arxiv import parse_feed  # noqa: PLC0415
    from syncd.storage.schema import (  # noqa: PLC0415
        authors_table,
        paper_authors_table,
        papers_table,
        revisions_table,
    )

    started = time.perf_counter()
    store = open_store(url)
    try:
        seed_author(store, author())
        dataset = pages.dataset(total, 1)
        now = datetime.now(UTC)
        with store.engine.begin() as conn:
            author_id = conn.scalar(
                authors_table.select()
                .with_only_columns(authors_table.c.id)
                .where(authors_table.c.name == feeds.AUTHOR)
            )
            for start in range(0, total, PAGE_SIZE):
                page = parse_feed((pages.folder / dataset / f"{start}.xml").read_bytes())
                papers, records = [], []
                for record in page.records:
                    data, digest = record.to_dict(), content_hash(record)
                    records.append((data, digest, record.version))
                    papers.append(
                        {
                            "key": record.arxiv_id,
                            "arxiv_id": record.arxiv_id,
                            "record": data,
                            "record_hash": digest,
                            "created_at": now,
                            "updated_at": now,
                        }
                    )
                conn.execute(papers_table.insert(), papers)
                ids_by_arxiv = dict(
                    conn.execute(
                        papers_table.select()
                        .with_only_columns(papers_table.c.arxiv_id, papers_table.c.id)
                        .where(papers_table.c.arxiv_id.in_([p["arxiv_id"] for p in papers]))
                    ).all()
                )
                ids = [ids_by_arxiv[p["arxiv_id"]] for p in papers]
                # The author's hold on each: tracked, as a first sync leaves it.
                conn.execute(
                    paper_authors_table.insert(),
                    [
                        {
                            "paper_id": paper_id,
                            "author_id": author_id,
                            "status": "tracked",
                            "origin": "arxiv",
                            "absent_syncs": 0,
                            "created_at": now,
                            "updated_at": now,
                        }
                        for paper_id in ids
                    ],
                )
                conn.execute(
                    revisions_table.insert(),
                    [
                        {
                            "paper_id": paper_id,
                            "seq": 1,
                            "observed_at": now,
                            "source": "arxiv",
                            "version": version,
                            "kinds": [],
                            "changes": {},
                            "record": data,
                            "record_hash": digest,
                            "sync_run_id": None,
                        }
                        for paper_id, (data, digest, version) in zip(ids, records, strict=True)
                    ],
                )
    finally:
        store.close()
    return time.perf_counter() - started


def measure(url: str, api_url: str) -> dict[str, Any]:
    """Run the child for one size; its JSON answer."""
    return child_answer("benchmarks.memory", url, api_url)


def run(pages: Pages, folder: Path, sizes: tuple[int, ...]) -> dict[str, Any]:
    points = []
    for total in sizes:
        url = sqlite_url(folder, f"memory_{total}")
        setup = bulk_known(url, pages, total)
        dataset = pages.dataset(total, 1)
        pages.warm(dataset, total)
        child = measure(url, pages.api_url(dataset))
        if child["events"] or not child["only_run_record_written"]:
            raise RuntimeError(f"the {total}-paper memory cycle was not quiet: {child}")
        points.append({"papers": total, "setup_seconds": round(setup, 2), **child})
    small, large = points[0], points[-1]
    ratio = large["peak_rss_mib"] / small["peak_rss_mib"]
    return {
        "points": points,
        "ratio": round(ratio, 3),
        "compared": [small["papers"], large["papers"]],
        "target": f"<= {TARGET}x",
        "met": ratio <= TARGET,
    }


def _child(url: str, api_url: str) -> None:
    from benchmarks.common import use_snapshot  # noqa: PLC0415

    use_snapshot()
    from benchmarks.common import like_the_cli  # noqa: PLC0415
    from benchmarks.cycles import sync_once  # noqa: PLC0415
    from syncd.storage import Storage  # noqa: PLC0415

    like_the_cli()
    store = Storage(url)
    counter = StatementCounter().attach(store.engine)
    before = _vm("VmHWM")
    with counter.counting():
        seconds, results = sync_once(store, api_url)
    peak = _vm("VmHWM")
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    statements = counter.report()
    print(
        json.dumps(
            {
                "peak_rss_mib": round(peak / 1024, 1),
                "peak_rss_before_cycle_mib": round(before / 1024, 1),
                "ru_maxrss_mib_inherited": round(maxrss / 1024, 1),
                "cycle_seconds": round(seconds, 3),
                "events": len(results[0].events),
                "syncd_from_snapshot": _from_snapshot(),
                "entries": results[0].stats.entries,
                "write_statements": statements["write_statements"],
                "rows_changed": statements["rows_changed"],
                "only_run_record_written": statements["only_run_record_written"],
            }
        )
    )


def _from_snapshot() -> bool:
    import os  # noqa: PLC0415

    import syncd  # noqa: PLC0415

    folder = os.environ.get("SYNCD_BENCH_SNAPSHOT")
    return bool(folder) and str(syncd.__file__ or "").startswith(str(folder))


def _vm(field: str) -> int:
    """A ``/proc/self/status`` figure in KiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
