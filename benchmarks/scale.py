"""Pages and API at 100,000 authors and 1,000,000 papers, against bare indexed SELECTs (issue 34).

Each size's database comes from ``benchmarks.scale_data`` (built once per schema
and kept).  One subprocess (``python -m benchmarks.scale serve URL``) runs
syncd's ``HttpServer`` over it and, on the same uvicorn settings, a bare ASGI
app answering each page's rows as JSON from one indexed Core ``select``: the
latest papers by id (or by ``papers.changed_at`` when the schema has it), an
author's tracked papers through ``ix_paper_authors_author_status``, a paper by
key with its revisions and latest events, authors by ``name_key``, events by
``seq``; pages take ``PAGE`` rows, the API ``DEFAULT_LIMIT``.  Search's bare
side is a ``LIKE`` over the papers' records (no index: what any database can do
without one).  A keep-alive ``httpx.Client`` alternates between the two, one
request at a time: p50 and p95 of each, the ratio of the p50s, the page's
size, and how each grows from the smallest size to the largest.

A request that takes longer than ``timeout`` is given up (the page is marked
"timed out"); after a first request slower than ``SLOW`` seconds only a few
more are made.  The server's address space is capped at ``MEMORY_CAP`` so that
a page reading every row fails alone rather than the machine.  Storage: the
SQLite file (WAL checkpointed), or the sum of ``pg_total_relation_size`` over
syncd's tables, per 100,000 papers.
"""

from __future__ import annotations

import contextlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlencode

import httpx

from benchmarks import common
from benchmarks.scale_data import Size, World

ROOT = Path(__file__).resolve().parent.parent
PAGE = 50
API_LIMIT = 100  # syncd.web.api.DEFAULT_LIMIT
SLOW = 5.0
MEMORY_CAP = 6 * 2**30
TARGET_PAGE_RATIO = 10.0  # a page's template against its rows as JSON
TARGET_API_RATIO = 3.0
TARGET_GROWTH = 1.5
TARGET_PAGE_BYTES = 200_000


def targets(world: World) -> list[tuple[str, str, str]]:
    """(row, syncd's path, the bare app's path) of every page and API list measured."""
    busiest = world.names[0]
    searched = world.names[1]
    key = world.arxiv_id(
        next(p for p, h in enumerate(world.holders) if 1 in h and world.revised[p])
    )
    author = quote(busiest, safe="")
    q = urlencode({"q": searched})
    return [
        ("/ (index)", "/", f"/latest?limit={PAGE}"),
        ("author page", f"/authors/{author}", f"/author?id=1&limit={PAGE}"),
        ("paper page", f"/papers/{key}", f"/paper?key={key}"),
        ("/authors", "/authors", f"/authors?limit={PAGE}"),
        ("/events", "/events", f"/events?limit={PAGE}"),
        ("API papers", "/api/v1/papers", f"/latest?limit={API_LIMIT}"),
        ("API authors", "/api/v1/authors", f"/authors?limit={API_LIMIT}"),
        ("API events", "/api/v1/events", f"/events?limit={API_LIMIT}&order=asc"),
        ("search /?q=", f"/?{q}", f"/search?{q}&limit={PAGE}"),
        ("search API ?q=", f"/api/v1/papers?{q}", f"/search?{q}&limit={API_LIMIT}"),
    ]


def run(
    sizes: Sequence[Size], requests: int, timeout: float, kinds: Sequence[str] = ("sqlite",)
) -> dict[str, Any]:
    """Every database's points (each size) and the growth from the smallest to the largest."""
    from benchmarks import scale_data  # noqa: PLC0415

    out: dict[str, Any] = {"sizes": [[s.authors, s.papers] for s in sizes], "databases": {}}
    for kind in kinds:
        build = scale_data.sqlite if kind == "sqlite" else scale_data.postgresql
        points = []
        for size in sizes:
            started = time.perf_counter()
            url = build(size, log=_log)
            ready = time.perf_counter() - started
            point = measure(World(size), url, requests, timeout)
            point |= {"authors": size.authors, "papers": size.papers, "ready_seconds": ready}
            point["storage"] = storage_bytes(url, size.papers)
            points.append(point)
            _log(f"scale {kind} {size.label}: {json.dumps(_brief(point))}")
        out["databases"][kind] = {"points": points, "growth": growth(points)}
    return out


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _brief(point: dict[str, Any]) -> dict[str, Any]:
    return {row: r.get("syncd_p50_seconds", r.get("error")) for row, r in point["rows"].items()}


def growth(points: list[dict[str, Any]]) -> dict[str, float | None]:
    """Each row's p50 at the largest size over its p50 at the smallest (None: not measured)."""
    small, large = points[0]["rows"], points[-1]["rows"]
    out: dict[str, float | None] = {}
    for row in large:
        a, b = small[row].get("syncd_p50_seconds"), large[row].get("syncd_p50_seconds")
        out[row] = round(b / a, 2) if a and b else None
    return out


def measure(world: World, url: str, requests: int, timeout: float) -> dict[str, Any]:
    """Every target's figures at this size.  A request given up leaves the server busy with
    it: the next target gets a fresh one."""
    rows: dict[str, Any] = {}
    running: contextlib.ExitStack | None = None
    try:
        for row, ours, bare in targets(world):
            if running is None:
                running = contextlib.ExitStack()
                syncd_url, bare_url = running.enter_context(servers(url))
            with httpx.Client(timeout=timeout) as client:
                rows[row] = _compare(client, f"{syncd_url}{ours}", f"{bare_url}{bare}", requests)
            rows[row]["path"] = ours
            if "error" in rows[row] or rows[row].get("given_up"):
                running.close()
                running = None
    finally:
        if running is not None:
            running.close()
    return {"rows": rows}


def _compare(client: httpx.Client, ours: str, bare: str, requests: int) -> dict[str, Any]:
    """A first request of each side, then ``requests`` more of each, alternating."""
    try:
        first, answer = _get(client, ours)
    except httpx.TimeoutException:
        return {"error": f"timed out after {client.timeout.read:g} s"}
    except httpx.TransportError as exc:  # the server died (its memory cap) or hung up
        return {"error": f"{type(exc).__name__}: {exc}"[:200]}
    if answer.status_code != 200:
        return {"error": f"HTTP {answer.status_code}", "first_seconds": round(first, 3)}
    _get(client, bare)
    repeat = requests if first < SLOW else min(requests, 2)
    times: dict[str, list[float]] = {"syncd": [first], "bare": []}
    given_up = False
    for i in range(repeat):
        pair = [("syncd", ours), ("bare", bare)]
        for side, url in pair if i % 2 == 0 else reversed(pair):
            try:
                times[side].append(_get(client, url)[0])
            except httpx.TimeoutException:  # counted as the timeout: a lower bound
                times[side].append(client.timeout.read or 0.0)
                given_up = True
                break
        if given_up:
            break
    times["syncd"] = times["syncd"][1:] or times["syncd"]  # the first only when alone
    if not times["bare"]:
        times["bare"] = [_get(client, bare)[0]]
    return {
        "requests": len(times["syncd"]),
        "given_up": given_up,
        "first_seconds": round(first, 4),
        "bytes": len(answer.content),
        **{f"{side}_p50_seconds": round(common.percentile(t, 0.5), 5) for side, t in times.items()},
        **{
            f"{side}_p95_seconds": round(common.percentile(t, 0.95), 5) for side, t in times.items()
        },
        "ratio_p50": round(
            common.percentile(times["syncd"], 0.5) / common.percentile(times["bare"], 0.5), 2
        ),
    }


def _get(client: httpx.Client, url: str) -> tuple[float, httpx.Response]:
    started = time.perf_counter()
    answer = client.get(url)
    return time.perf_counter() - started, answer


def storage_bytes(url: str, papers: int) -> dict[str, Any]:
    """The database's size (SQLite: the file; PostgreSQL: its tables with their indexes and
    TOAST), in all and per 100,000 papers."""
    import sqlalchemy as sa  # noqa: PLC0415

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "sqlite":
                conn.execute(sa.text("PRAGMA wal_checkpoint(TRUNCATE)"))
                total = Path(engine.url.database or "").stat().st_size
            else:
                query = (
                    "SELECT SUM(pg_total_relation_size(quote_ident(tablename)))"
                    " FROM pg_tables WHERE schemaname = 'public'"
                )
                total = int(conn.scalar(sa.text(query)) or 0)
    finally:
        engine.dispose()
    return {"bytes": total, "bytes_per_100k_papers": round(total * 100_000 / papers)}


# -- the servers -------------------------------------------------------------------------


@contextmanager
def servers(url: str) -> Iterator[tuple[str, str]]:
    """syncd's server and the bare app over ``url``, in one capped subprocess."""
    argv = [sys.executable, "-m", "benchmarks.scale", "serve", url]
    process = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env=common.child_env(),
        preexec_fn=_cap_memory,  # noqa: PLW1509 (no threads yet in this process)
    )
    try:
        assert process.stdout is not None
        syncd_port, bare_port = process.stdout.readline().split()
        yield f"http://127.0.0.1:{syncd_port}", f"http://127.0.0.1:{bare_port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # busy with a page it will never finish
            process.kill()
            process.wait()


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def serve(url: str) -> None:
    """The subprocess: syncd's HttpServer and the bare app, until terminated."""
    import threading  # noqa: PLC0415

    import uvicorn  # noqa: PLC0415

    from syncd.config import Settings  # noqa: PLC0415
    from syncd.service.app import App  # noqa: PLC0415
    from syncd.web.ops import Readiness  # noqa: PLC0415
    from syncd.web.server import HttpServer  # noqa: PLC0415

    common.like_the_cli()
    app = App.open(Settings.model_validate({"database": {"url": url}}))
    ready = Readiness(True, {})
    with HttpServer("127.0.0.1", 0, ready=lambda: ready, app=app) as server:
        config = uvicorn.Config(
            bare_app(url), port=0, log_config=None, access_log=False, lifespan="off"
        )
        sock = _listen()
        threading.Thread(
            target=uvicorn.Server(config).run, kwargs={"sockets": [sock]}, daemon=True
        ).start()
        print(server.port, sock.getsockname()[1], flush=True)
        threading.Event().wait()


def _listen() -> Any:
    """A loopback socket whose connections send at once: without ``TCP_NODELAY`` the body,
    written after the headers, waits for the client's delayed ACK (40 ms)."""
    import socket  # noqa: PLC0415

    sock = socket.socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def bare_app(url: str) -> Callable[..., Any]:
    """Each page's rows from one indexed Core ``select``, as JSON."""
    import sqlalchemy as sa  # noqa: PLC0415

    from syncd.storage import schema  # noqa: PLC0415

    engine = sa.create_engine(url)
    p, pa, a, e = (
        schema.papers_table,
        schema.paper_authors_table,
        schema.authors_table,
        schema.events_table,
    )
    latest = [p.c.changed_at.desc(), p.c.id.desc()] if "changed_at" in p.c else [p.c.id.desc()]

    def events_page(where: Any, newest_first: bool, limit: int) -> Any:
        """The page of events first (by ``seq`` or ``ix_events_paper_seq``), then its names."""
        order = e.c.seq.desc() if newest_first else e.c.seq.asc()
        page = sa.select(e).where(where).order_by(order).limit(limit).subquery()
        named = sa.select(page, a.c.name, p.c.key).join(a, page.c.author_id == a.c.id)
        named = named.join(p, page.c.paper_id == p.c.id)
        return named.order_by(page.c.seq.desc() if newest_first else page.c.seq.asc())

    def query(path: str, args: dict[str, str]) -> Any:
        limit = int(args.get("limit", PAGE))
        if path == "/latest":
            return [sa.select(p).order_by(*latest).limit(limit)]
        if path == "/author":
            tracked = pa.c.author_id == int(args["id"]), pa.c.status == "tracked"
            held = sa.select(p).join(pa, pa.c.paper_id == p.c.id).where(*tracked)
            return [held.order_by(pa.c.paper_id.desc()).limit(limit)]
        if path == "/paper":
            paper_id = sa.select(p.c.id).where(p.c.key == args["key"]).scalar_subquery()
            return [
                sa.select(p).where(p.c.key == args["key"]),
                sa.select(schema.revisions_table).where(
                    schema.revisions_table.c.paper_id == paper_id
                ),
                events_page(e.c.paper_id == paper_id, True, PAGE),
            ]
        if path == "/authors":
            return [sa.select(a).order_by(a.c.name_key).limit(limit)]
        if path == "/events":
            return [events_page(sa.true(), args.get("order") != "asc", limit)]
        if path == "/search":
            words = args["q"].lower().split()
            text = sa.func.lower(sa.cast(p.c.record, sa.Text))
            return [sa.select(p).where(*(text.contains(w) for w in words)).limit(limit)]
        raise LookupError(path)

    def rows(path: str, args: dict[str, str]) -> bytes:
        with engine.connect() as conn:
            found = [dict(r._mapping) for q in query(path, args) for r in conn.execute(q)]
        return json.dumps(found, default=str, separators=(",", ":")).encode()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        args = {k: v[0] for k, v in parse_qs(scope["query_string"].decode()).items()}
        body = rows(scope["path"], args)
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


# -- the table ---------------------------------------------------------------------------


def table_rows(result: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """The rows of benchmarks.run's table: every target at the largest size, each database."""
    out = []
    for kind, measured in result["databases"].items():
        large, small = measured["points"][-1], measured["points"][0]
        where = f"{kind}, {large['authors']:,} authors / {large['papers']:,} papers"
        for row, r in large["rows"].items():
            grown = measured["growth"].get(row)
            if "error" in r:
                out.append((f"Scale {row}, {where}", r["error"], "", "", "", "NO"))
                continue
            api = row.startswith(("API", "search API"))
            limit = TARGET_API_RATIO if api else TARGET_PAGE_RATIO
            met = (
                r["ratio_p50"] <= limit
                and (grown is None or grown <= TARGET_GROWTH)
                and (api or r["bytes"] <= TARGET_PAGE_BYTES)
            )
            out.append(
                (
                    f"Scale {row}, {where}",
                    f"p50 {_ms(r['syncd_p50_seconds'])}, p95 {_ms(r['syncd_p95_seconds'])},"
                    f" {r['bytes'] / 1000:,.0f} KB",
                    f"p50 {_ms(r['bare_p50_seconds'])}, p95 {_ms(r['bare_p95_seconds'])}",
                    f"{r['ratio_p50']:.2f}x p50; growth from {small['authors']:,} authors "
                    + (f"{grown:.2f}x" if grown is not None else "n/a"),
                    f"<= {limit:g}x; growth <= {TARGET_GROWTH:g}x"
                    + ("" if api else f"; < {TARGET_PAGE_BYTES // 1000} KB"),
                    "yes" if met else "NO",
                )
            )
        sizes = [p["storage"]["bytes_per_100k_papers"] for p in measured["points"]]
        out.append(
            (
                f"Scale storage, {where}",
                f"{large['storage']['bytes'] / 2**20:,.0f} MiB;"
                f" {sizes[-1] / 2**20:,.0f} MiB per 100,000 papers",
                f"{sizes[0] / 2**20:,.0f} MiB per 100,000 papers at {small['papers']:,}",
                f"{sizes[-1] / sizes[0]:.2f}x per paper",
                "linear",
                "n/a",
            )
        )
    return out


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def main(argv: list[str] | None = None) -> int:
    """Run the scale rows alone and print their table (``--output``: the JSON too)."""
    import argparse  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__)
    parser.add_argument(
        "--authors",
        default="1000,10000,100000",
        help="comma-separated author counts, smallest first; ten papers each",
    )
    parser.add_argument("--requests", type=int, default=20, help="requests per side and page")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    parser.add_argument(
        "--databases", default="sqlite", help="comma-separated: sqlite, postgresql (in that order)"
    )
    parser.add_argument("--output", type=Path, help="write the JSON here")
    args = parser.parse_args(argv)
    sizes = [Size(int(n), int(n) * 10) for n in args.authors.split(",")]
    with tempfile.TemporaryDirectory(prefix="syncd-scale-") as folder:
        # One version of syncd for this process and its servers, as benchmarks.run does.
        common.snapshot_syncd(Path(folder))
        result = run(sizes, args.requests, args.timeout, args.databases.split(","))
    if args.output is not None:
        args.output.write_text(json.dumps(result, indent=1) + "\n")
    # Its own lines, as `python -m benchmarks.run --only scale` shows them in its table.
    for row in table_rows(result):
        print("  ".join(row))
    return 0


if __name__ == "__main__":
    common.use_snapshot()
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2])
    else:
        sys.exit(main())
