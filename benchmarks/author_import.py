"""Row "Author import": ``syncd authors import`` of 1,000 authors against a bare bulk insert.

syncd: ``syncd.service.authors.import_authors`` on a CSV file of N authors
(``name,orcid,arxiv_author_id,query``; a third with an ORCID iD, a third with
an arXiv author id, a third with a query), as the command runs it: the file
read and every row checked (``AuthorSettings``), the configured authors
reconciled, the rows stored in one transaction.  The runtime authors are
deleted (untimed) before each repetition, so every one adds N.

Baseline: SQLAlchemy Core ``executemany`` of the same N rows (built untimed)
into a plain table of the authors table's columns, one transaction, same
database; emptied (untimed) before each repetition.

Also shown: a second import of the same file (nothing changes), as a ratio to
the same baseline.
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

TARGET = 5.0  # x a bare bulk insert: checking each row costs, storing them must not


def _orcid(serial: int) -> str:
    """A valid ORCID iD (ISO 7064 mod 11-2 check digit) made from ``serial``."""
    digits = f"{serial:015d}"
    total = 0
    for digit in digits:
        total = (total + int(digit)) * 2
    check = (12 - total % 11) % 11
    full = digits + ("X" if check == 10 else str(check))
    return "-".join(full[i : i + 4] for i in range(0, 16, 4))


def write_csv(path: Path, count: int) -> list[dict[str, Any]]:
    """A CSV of ``count`` authors; returns the authors rows a bulk insert would write."""
    rows: list[dict[str, Any]] = []
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["name", "orcid", "arxiv_author_id", "query"])
        for i in range(count):
            row = {
                "name": f"Imported Author{i:05d}",
                "orcid": _orcid(i + 1) if i % 3 == 0 else None,
                "arxiv_author_id": f"author_i_{i}" if i % 3 == 1 else None,
                "query": f'au:"Author{i:05d}_I"' if i % 3 == 2 else None,
            }
            writer.writerow([value or "" for value in row.values()])
            rows.append(row | {"created_at": datetime.now(UTC), "seeds": [], "origin": "runtime"})
    return rows


def run(count: int, reps: int, kinds: list[str], folder: Path) -> dict[str, Any]:
    """The row on each database kind: medians of per-repetition ratios."""
    from benchmarks import common  # noqa: PLC0415

    results: dict[str, Any] = {}
    for kind in kinds:
        with common.database(kind, folder, "author_import") as url:
            results[kind] = _measure(url, count, reps, folder)
    return results


def _measure(url: str, count: int, reps: int, folder: Path) -> dict[str, Any]:
    import sqlalchemy as sa  # noqa: PLC0415

    from benchmarks import common  # noqa: PLC0415
    from syncd.config import AuthorSettings, Settings  # noqa: PLC0415
    from syncd.service.authors import import_authors  # noqa: PLC0415
    from syncd.storage.schema import authors_table  # noqa: PLC0415

    store = common.open_store(url)
    settings = Settings(database={"url": url}, authors=[AuthorSettings(name="Configured One")])
    path = folder / f"authors-{count}.csv"
    rows = write_csv(path, count)
    bare = sa.Table("bench_authors", sa.MetaData(), *(c._copy() for c in authors_table.columns))
    bare.create(store.engine)
    runtime = authors_table.c.origin == "runtime"

    def syncd_import(_: int) -> float:
        with store.engine.begin() as conn:
            conn.execute(authors_table.delete().where(runtime))
        common.fresh_heap()
        seconds, done = common.timed(lambda: import_authors(store, settings, path))
        assert len(done) == count and all(d == "added" for d in done)
        return seconds

    def bulk_insert(_: int) -> float:
        with store.engine.begin() as conn:
            conn.execute(bare.delete())
        common.fresh_heap()

        def insert() -> None:
            with store.engine.begin() as conn:
                conn.execute(bare.insert(), rows)

        return common.timed(insert)[0]

    paired = common.alternate(reps, syncd_import, bulk_insert)
    common.fresh_heap()
    again, done = common.timed(lambda: import_authors(store, settings, path))
    assert all(d == "unchanged" for d in done)
    store.close()
    summary = paired.summary()
    return summary | {
        "authors": count,
        "reimport_seconds": round(again, 6),
        "reimport_ratio": round(again / summary["baseline_median_seconds"], 3),
        "target": TARGET,
        "met": paired.ratio <= TARGET,
    }


def table_rows(result: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """The rows of benchmarks.run's table."""
    from benchmarks import common  # noqa: PLC0415

    return [
        (
            f"Author import, {kind}: {r['authors']:,} authors from CSV",
            common.duration(r["syncd_median_seconds"])
            + f"; again (no change) {common.duration(r['reimport_seconds'])}",
            f"Core bulk insert {common.duration(r['baseline_median_seconds'])}",
            f"{r['median_ratio']:.2f}x; again {r['reimport_ratio']:.2f}x",
            f"<= {TARGET:g}x",
            "yes" if r["met"] else "NO",
        )
        for kind, r in result.items()
    ]
