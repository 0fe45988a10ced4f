"""The read surface against bare baselines serving the same rows (issue 11's targets).

Rows, each at 10,000 and 100,000 stored events (SQLite, syncd's own schema,
filled with Core ``executemany``: a record per revision, an event per revision):

- ``GET /api/v1/events?limit=1000&after=SEQ`` against a bare ASGI app that runs
  the same joined ``select`` (events, authors, papers, revisions) with
  SQLAlchemy Core and ``json.dumps`` the rows as dicts of the same shape;
- ``GET /feeds/events.atom`` against the same latest 50 rows put into an lxml
  Atom tree (no diff: the bare side has none to render);
- the page of a paper with 50 revisions, against a bare render of the same 50
  diff fragments (``syncd.render.html.changes_html``) joined into a page, in
  the measuring process, with no database and no HTTP.

Both servers run in one subprocess (``python -m benchmarks.web serve URL``) on
uvicorn with the same settings, syncd's through ``syncd.web.server.HttpServer``; a
keep-alive ``httpx.Client`` alternates between them, so each request pays the
same client and loopback costs.  Figures: requests per second (from the
mean) and p99 of each side, and the ratio of median times per request (a
shared machine stalls a few requests of either side); targets 2x (API,
feed), flat from 10,000 to 100,000 events (median time per request at
100,000 within 1.5x of 10,000's), and 3x for the page.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from benchmarks import common

ROOT = Path(__file__).resolve().parent.parent
PAGE_REVISIONS = 50
FEED_SIZE = 50
API_LIMIT = 1000
TARGET_API = 2.0
TARGET_FEED = 1.5  # issue 24
TARGET_PAGE = 3.0
TARGET_FLAT = 1.5  # 100,000 events vs 10,000, time per request


def run(
    sizes: Sequence[int], requests: int, folder: Path, kinds: Sequence[str] = ("sqlite",)
) -> dict[str, Any]:
    """Every database's rows (``kinds``, SQLite first: the table's own rows); the others'
    points under ``databases``."""
    result = _run_one(sizes, requests, folder, kinds[0])
    result["databases"] = {kind: _run_one(sizes, requests, folder, kind) for kind in kinds[1:]}
    return result


def _run_one(sizes: Sequence[int], requests: int, folder: Path, kind: str) -> dict[str, Any]:
    """Every size's API and feed figures, and the paper page's; the targets' verdicts."""
    points = []
    for size in sizes:
        with common.database(kind, folder, f"web-{size}") as url:
            started = time.perf_counter()
            paper_key = fill(url, size)
            filled = time.perf_counter() - started
            _analyze(url)
            with servers(url) as (syncd_url, bare_url):
                points.append(_point(size, requests, syncd_url, bare_url))
                page = _page_row(syncd_url, paper_key, requests) if size == sizes[-1] else None
            points[-1] |= {"database": kind, "fill_seconds": round(filled, 1)}
            points[-1]["database_bytes"] = database_bytes(url)
    large, small = points[-1], points[0]
    flat = {
        kind: large[kind]["syncd_median_seconds"] / small[kind]["syncd_median_seconds"]
        for kind in ("api", "feed")
    }
    assert page is not None
    return {
        "points": points,
        "page": page,
        "flatness_large_vs_small": {k: round(v, 3) for k, v in flat.items()},
        "met": {
            "api": large["api"]["ratio"] <= TARGET_API,
            "feed": large["feed"]["ratio"] <= TARGET_FEED,
            "flat": all(v <= TARGET_FLAT for v in flat.values()),
            "page": page["ratio"] <= TARGET_PAGE,
        },
    }


def database_bytes(url: str) -> dict[str, int]:
    """The database's size on disk, in all and per table (indexes included)."""
    import sqlalchemy as sa  # noqa: PLC0415

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "sqlite":
                conn.execute(sa.text("PRAGMA wal_checkpoint(TRUNCATE)"))
                query = "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"
                objects = dict(conn.execute(sa.text(query)).tuples().all())
                tables = {
                    name: sum(size for obj, size in objects.items() if _belongs(obj, name))
                    for name in ("events", "revisions", "papers", "deliveries")
                }
                total = sum(objects.values())
            else:
                tables = {
                    name: int(conn.scalar(sa.text(f"SELECT pg_total_relation_size('{name}')")))
                    for name in ("events", "revisions", "papers", "deliveries")
                }
                total = int(conn.scalar(sa.text("SELECT pg_database_size(current_database())")))
    finally:
        engine.dispose()
    return {"total": total, **tables}


def _belongs(sqlite_object: str, table: str) -> bool:
    """Whether a ``dbstat`` object (a table, or an index named after its table) is ``table``'s."""
    return sqlite_object == table or (
        sqlite_object.startswith(("ix_", "sqlite_autoindex_"))
        and f"_{table}_" in f"{sqlite_object}_"
    )


def table_rows(result: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """The rows of benchmarks.run's table: each database's."""
    out = _rows_of(result)
    for other in result.get("databases", {}).values():
        out += _rows_of(other)
    return out


def _rows_of(result: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    out = []
    kind = result["points"][0].get("database", "sqlite")
    flat = result["flatness_large_vs_small"]
    met = result["met"]
    targets = {"api": TARGET_API, "feed": TARGET_FEED}
    for row, label in (("api", "API events?limit=1000"), ("feed", "Feed events.atom")):
        for point in result["points"]:
            r = point[row]
            out.append(
                (
                    f"{label}, {kind}, {point['events']:,} events",
                    f"{r['syncd_rps']:.0f}/s, p99 {r['syncd_p99_seconds'] * 1000:.1f} ms",
                    f"{r['bare_rps']:.0f}/s, p99 {r['bare_p99_seconds'] * 1000:.1f} ms",
                    f"{r['ratio']:.2f}x time/request",
                    f"<= {targets[row]:g}x; flat (large/small {flat[row]:.2f}x)",
                    _yes(r["ratio"] <= targets[row] and met["flat"]),
                )
            )
    page = result["page"]
    out.append(
        (
            f"Paper page, {kind}, {PAGE_REVISIONS} revisions",
            f"{page['syncd_mean_seconds'] * 1e3:.1f} ms (first {page['first_seconds'] * 1e3:.0f})",
            f"bare render {page['bare_mean_seconds'] * 1000:.1f} ms",
            f"{page['ratio']:.2f}x",
            f"<= {TARGET_PAGE:g}x",
            _yes(met["page"]),
        )
    )
    return out


def _yes(met: bool) -> str:
    return "yes" if met else "NO"


# -- the data ----------------------------------------------------------------------------


def fill(url: str, events: int) -> str:
    """Write ``events`` revisions and their events into a fresh database; return the key of a
    paper with ``PAGE_REVISIONS`` of them (each a new version changing title and abstract)."""
    import sqlalchemy as sa  # noqa: PLC0415

    from syncd.domain.record import content_hash  # noqa: PLC0415
    from syncd.storage import schema  # noqa: PLC0415
    from syncd.storage.migrate import upgrade  # noqa: PLC0415

    engine = sa.create_engine(url)
    upgrade(engine)
    base = base_record()
    papers = max(1, events // PAGE_REVISIONS)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with engine.begin() as conn:
        conn.execute(
            schema.authors_table.insert(), [{"id": 1, "name": "Zhida Jiang", "created_at": start}]
        )
        conn.execute(
            schema.papers_table.insert(),
            [
                {
                    "id": p + 1,
                    "key": f"2601.{p:05d}", "arxiv_id": f"2601.{p:05d}",
                    "record": base.to_dict(), "record_hash": content_hash(base),
                    "created_at": start, "updated_at": start,
                    # Its last event's time, as syncd keeps it (storage.paper_index).
                    "changed_at": start + timedelta(
                        seconds=min(events, (p + 1) * PAGE_REVISIONS) - 1
                    ),
                }
                for p in range(papers)
            ],
        )  # fmt: skip
        conn.execute(
            schema.paper_authors_table.insert(),
            [
                {
                    "paper_id": p + 1, "author_id": 1, "status": "tracked", "origin": "arxiv",
                    "absent_syncs": 0, "created_at": start, "updated_at": start,
                }
                for p in range(papers)
            ],
        )  # fmt: skip
        for first in range(0, events, 5000):
            revisions, rows = [], []
            for n in range(first, min(events, first + 5000)):
                paper, version = n // PAGE_REVISIONS + 1, n % PAGE_REVISIONS + 1
                old, new = versions_of(base, paper, version)
                when = start + timedelta(seconds=n)
                changes = _changes(old, new)
                revisions.append(
                    {
                        "id": n + 1, "paper_id": paper, "seq": version, "observed_at": when,
                        "source": "arxiv", "version": version, "kinds": list(changes),
                        "changes": changes, "record": new.to_dict(),
                        "record_hash": content_hash(new), "sync_run_id": None,
                    }
                )  # fmt: skip
                rows.append(
                    {
                        "seq": n + 1, "id": f"evt_{n:032x}", "type": "paper.revised",
                        "created_at": when, "author_id": 1, "paper_id": paper,
                        "revision_id": n + 1, "sync_run_id": None, "kinds": list(changes),
                        "changes": changes,
                    }
                )  # fmt: skip
            conn.execute(schema.revisions_table.insert(), revisions)
            conn.execute(schema.events_table.insert(), rows)
    engine.dispose()
    return "2601.00000"


def _analyze(url: str) -> None:
    """On PostgreSQL, the statistics autovacuum gathers within a minute of a bulk load.

    Without them the paper page's events (``paper_id = ?``, newest first,
    ``LIMIT 500``) walk the primary key backwards through the whole log
    instead of ``ix_events_paper_seq``: 300 ms at 100,000 events, not 1 ms.
    """
    if url.startswith("postgresql"):
        import sqlalchemy as sa  # noqa: PLC0415

        engine = sa.create_engine(url)
        try:
            with engine.connect() as conn:
                conn.execute(sa.text("ANALYZE"))
                conn.commit()
        finally:
            engine.dispose()


def base_record() -> Any:
    from syncd.sources.arxiv import parse_feed  # noqa: PLC0415

    fixture = ROOT / "tests" / "fixtures" / "arxiv-api" / "query_all-testing_start0_max10.xml"
    return parse_feed(fixture.read_bytes()).records[0]


def versions_of(base: Any, paper: int, version: int) -> tuple[Any, Any]:
    """Version ``version - 1`` and ``version`` of paper ``paper``: a word of the title and a
    sentence of the abstract differ from one to the next."""

    def nth(v: int) -> Any:
        return replace(
            base,
            arxiv_id=f"2601.{paper - 1:05d}",
            version=v,
            title=f"{base.title} revision {v}",
            abstract=f"{base.abstract} Revision {v} adds {v * 7 % 13} results.",
        )

    return nth(max(1, version - 1)), nth(version)


def _changes(old: Any, new: Any) -> dict[str, Any]:
    from syncd.domain.diff import diff_records  # noqa: PLC0415

    return diff_records(old, new).changes


# -- the servers --------------------------------------------------------------------------


@contextmanager
def servers(url: str) -> Iterator[tuple[str, str]]:
    argv = [sys.executable, "-m", "benchmarks.web", "serve", url]
    process = subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.PIPE, text=True, env=common.child_env()
    )
    try:
        assert process.stdout is not None
        syncd_port, bare_port = process.stdout.readline().split()
        yield f"http://127.0.0.1:{syncd_port}", f"http://127.0.0.1:{bare_port}"
    finally:
        process.terminate()
        process.wait(timeout=15)


def serve(url: str) -> None:
    """The subprocess: syncd's HttpServer and the bare app, until terminated."""
    import threading  # noqa: PLC0415

    import uvicorn  # noqa: PLC0415

    from syncd.config import Settings  # noqa: PLC0415
    from syncd.service.app import App  # noqa: PLC0415
    from syncd.web.ops import Readiness  # noqa: PLC0415
    from syncd.web.server import HttpServer  # noqa: PLC0415

    common.like_the_cli()
    settings = Settings.model_validate(
        {"database": {"url": url}, "authors": [{"name": "Zhida Jiang"}]}
    )
    app = App.open(settings)
    ready = Readiness(True, {})
    with HttpServer("127.0.0.1", 0, ready=lambda: ready, app=app) as server:
        bare = uvicorn.Server(
            uvicorn.Config(
                _bare_app(url), port=0, log_config=None, access_log=False, lifespan="off"
            )
        )
        sock = _listen()
        threading.Thread(target=bare.run, kwargs={"sockets": [sock]}, daemon=True).start()
        print(server.port, sock.getsockname()[1], flush=True)
        threading.Event().wait()


def _listen() -> Any:
    import socket  # noqa: PLC0415

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def _bare_app(url: str) -> Callable[..., Any]:
    """The baselines as one raw ASGI app: ``/events?after=N`` (JSON) and ``/feed`` (Atom)."""
    from urllib.parse import parse_qs  # noqa: PLC0415

    import sqlalchemy as sa  # noqa: PLC0415
    from lxml import etree  # noqa: PLC0415

    from syncd.storage import schema  # noqa: PLC0415

    engine = sa.create_engine(url)
    e, r = schema.events_table, schema.revisions_table
    joined = (
        sa.select(
            e, schema.authors_table.c.name.label("author"), schema.papers_table.c.key,
            schema.papers_table.c.arxiv_id, r.c.record,
        )
        .join(schema.authors_table, e.c.author_id == schema.authors_table.c.id)
        .join(schema.papers_table, e.c.paper_id == schema.papers_table.c.id)
        .outerjoin(r, e.c.revision_id == r.c.id)
    )  # fmt: skip

    def rows(query: Any) -> list[dict[str, Any]]:
        with engine.connect() as conn:
            return [
                {
                    "id": row.id, "seq": row.seq, "type": row.type,
                    "created_at": row.created_at.isoformat(), "author": row.author,
                    "paper": {"key": row.key, "arxiv_id": row.arxiv_id},
                    "kinds": row.kinds, "changes": row.changes, "record": row.record,
                }
                for row in conn.execute(query)
            ]  # fmt: skip

    def feed() -> bytes:
        atom = "{http://www.w3.org/2005/Atom}"
        root = etree.Element(f"{atom}feed")
        for row in rows(joined.order_by(e.c.seq.desc()).limit(FEED_SIZE)):
            entry = etree.SubElement(root, f"{atom}entry")
            for name, text in (
                ("id", row["id"]),
                ("title", row["record"]["title"]),
                ("updated", row["created_at"]),
                ("content", row["record"]["abstract"]),
            ):
                etree.SubElement(entry, f"{atom}{name}").text = text  # fmt: skip
        return bytes(etree.tostring(root, xml_declaration=True, encoding="utf-8"))

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["path"] == "/feed":
            body, kind = feed(), b"application/atom+xml"
        else:
            after = int(parse_qs(scope["query_string"].decode()).get("after", ["0"])[0])
            query = joined.where(e.c.seq > after).order_by(e.c.seq).limit(API_LIMIT)
            body, kind = (
                json.dumps(rows(query), separators=(",", ":")).encode(),
                b"application/json",
            )
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]}
        )
        await send({"type": "http.response.body", "body": body})

    return app


# -- the measurements -------------------------------------------------------------------


def _point(size: int, requests: int, syncd_url: str, bare_url: str) -> dict[str, Any]:
    rng = random.Random(size)
    afters = [rng.randrange(0, max(1, size - API_LIMIT)) for _ in range(requests)]
    with httpx.Client(timeout=60) as client:
        api = compare(
            client, requests,
            lambda i: f"{syncd_url}/api/v1/events?limit={API_LIMIT}&after={afters[i]}",
            lambda i: f"{bare_url}/events?after={afters[i]}",
        )  # fmt: skip
        client.get(f"{syncd_url}/feeds/events.atom")  # the fragments, rendered once
        feed = compare(
            client,
            requests,
            lambda i: f"{syncd_url}/feeds/events.atom",
            lambda i: f"{bare_url}/feed",
        )
        etag = client.get(f"{syncd_url}/feeds/events.atom").headers["etag"]
        matching = {"If-None-Match": etag}
        conditional = [
            timed(lambda: client.get(f"{syncd_url}/feeds/events.atom", headers=matching))
            for _ in range(requests)
        ]
    feed["syncd_304_mean_seconds"] = round(statistics.mean(conditional), 6)
    return {"events": size, "api": api, "feed": feed}


def compare(
    client: httpx.Client, requests: int, syncd: Callable[[int], str], bare: Callable[[int], str]
) -> dict[str, Any]:
    """``requests`` GETs of each side, alternating; per-request times of each."""
    ours: list[float] = []
    theirs: list[float] = []
    for i in range(requests):
        pair = [(ours, syncd(i)), (theirs, bare(i))]
        for times, url in pair if i % 2 == 0 else reversed(pair):
            times.append(timed(lambda url=url: client.get(url).raise_for_status()))
    return {
        "requests": requests,
        "syncd_mean_seconds": round(statistics.mean(ours), 6),
        "bare_mean_seconds": round(statistics.mean(theirs), 6),
        "syncd_median_seconds": round(statistics.median(ours), 6),
        "bare_median_seconds": round(statistics.median(theirs), 6),
        "syncd_rps": round(1 / statistics.mean(ours), 1),
        "bare_rps": round(1 / statistics.mean(theirs), 1),
        "syncd_p99_seconds": round(common.percentile(ours, 0.99), 6),
        "bare_p99_seconds": round(common.percentile(theirs, 0.99), 6),
        # Medians: on a shared machine a few requests stall behind other work.
        "ratio": round(statistics.median(ours) / statistics.median(theirs), 3),
    }


def _page_row(syncd_url: str, key: str, requests: int) -> dict[str, Any]:
    """The paper page over HTTP (first and steady) against a bare render of its fragments."""
    from syncd.render.html import changes_html  # noqa: PLC0415

    with httpx.Client(timeout=60) as client:
        first = timed(lambda: client.get(f"{syncd_url}/papers/{key}").raise_for_status())
        ours = [timed(lambda: client.get(f"{syncd_url}/papers/{key}")) for _ in range(requests)]
    base = base_record()
    pairs = [versions_of(base, 1, v) for v in range(1, PAGE_REVISIONS + 1)]
    changes = [_changes(old, new) for old, new in pairs]

    def bare() -> str:
        items = "".join(f"<li>{changes_html(c)}</li>" for c in changes)
        return f"<!doctype html><html><body><ol>{items}</ol></body></html>"

    theirs = [timed(bare) for _ in range(requests)]
    return {
        "revisions": PAGE_REVISIONS,
        "first_seconds": round(first, 6),
        "syncd_mean_seconds": round(statistics.mean(ours), 6),
        "bare_mean_seconds": round(statistics.mean(theirs), 6),
        "ratio": round(statistics.mean(ours) / statistics.mean(theirs), 3),
    }


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


if __name__ == "__main__":
    common.use_snapshot()
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2])
    else:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(run((1_000, 10_000), 50, Path(tmp)), indent=1))
