"""A paper's page and compare view, whose diffs are computed per request (issue 21's targets).

A paper's history is retold on every request: each revision diffed against
the one before it in version order (``syncd.domain.history``), so the
cost grows with the revisions.  Rows, on one SQLite database in syncd's own
schema (each revision a new version changing a title word and an abstract
sentence, each with its ``paper.revised`` event):

- ``GET /papers/{id}`` of a paper with 50 revisions, and of one with 200;
- ``GET /papers/{id}/compare?from=v1&to=v50``;

each against a bare render of the same data in the measuring process: the
revisions (and events) read with one SQLAlchemy Core ``select``, each
revision diffed against the one before with ``diff_records`` and rendered
with ``changes_html`` (the compare view: the two revisions, one diff), joined
into a page; no HTTP, no template, no cache.  The server is the one of
``benchmarks.web`` (syncd's ``HttpServer``, uvicorn), requests alternate with
the bare render, and the figure is the ratio of median times.  Target: 3x
for each (syncd's side pays HTTP too).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx

from benchmarks import common, web

SIZES = (50, 200)
TARGET = 3.0


def run(requests: int, folder: Path) -> dict[str, Any]:
    """The page at each size and the compare view at the first, against their bare renders."""
    url = common.sqlite_url(folder, "history")
    keys = fill(url)
    rows: dict[str, Any] = {}
    with web.servers(url) as (syncd_url, _), httpx.Client(timeout=60) as client:
        for size, key in zip(SIZES, keys, strict=True):
            page = f"{syncd_url}/papers/{key}"
            first = web.timed(lambda page=page: client.get(page).raise_for_status())
            rows[f"page_{size}"] = _measure(
                client, requests, page, lambda key=key: _bare_page(url, key)
            ) | {"first_seconds": round(first, 6)}
        key = keys[0]
        rows["compare"] = _measure(
            client,
            requests,
            f"{syncd_url}/papers/{key}/compare?from=v1&to=v{SIZES[0]}",
            lambda: _bare_compare(url, key, 1, SIZES[0]),
        )
    rows |= _in_process(url, keys, requests)
    rows["met"] = {name: row["ratio"] <= TARGET for name, row in rows.items()}
    return rows


def _in_process(url: str, keys: list[str], requests: int) -> dict[str, Any]:
    """The same pages built in the measuring process (context and template, no HTTP), against
    the same bare renders: on a loaded machine the server process waits for a core, which
    the HTTP figures include and these do not."""
    from syncd.config import Settings  # noqa: PLC0415
    from syncd.service.app import App  # noqa: PLC0415
    from syncd.web.fragments import Fragments  # noqa: PLC0415
    from syncd.web.pages import _page  # noqa: PLC0415 - the pages' own renderer
    from syncd.web.paper_page import compare_context, paper_context  # noqa: PLC0415

    app = App.open(
        Settings.model_validate({"database": {"url": url}, "authors": [{"name": "Zhida Jiang"}]})
    )
    fragments = Fragments()
    rows: dict[str, Any] = {}
    try:
        for size, key in zip(SIZES, keys, strict=True):
            paper = app.storage.papers.find(key)
            assert paper is not None
            rows[f"page_{size}_in_process"] = _alternate(
                requests,
                lambda paper=paper: _page("paper.html", **paper_context(app, fragments, paper)),
                lambda key=key: _bare_page(url, key),
            )
        paper = app.storage.papers.find(keys[0])
        assert paper is not None
        last = f"v{SIZES[0]}"
        rows["compare_in_process"] = _alternate(
            requests,
            lambda: _page("compare.html", **compare_context(app, paper, "v1", last)),
            lambda: _bare_compare(url, keys[0], 1, SIZES[0]),
        )
    finally:
        app.close()
    return rows


def table_rows(result: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """The rows of benchmarks.run's table."""
    labels = {f"page_{size}": f"Paper page, {size} revisions" for size in SIZES}
    labels["compare"] = f"Compare view, v1 to v{SIZES[0]}"
    labels |= {f"{name}_in_process": f"{label}, in process" for name, label in labels.items()}
    out = []
    for name, label in labels.items():
        r = result[name]
        first = f" (first {r['first_seconds'] * 1e3:.0f})" if "first_seconds" in r else ""
        out.append(
            (
                label,
                f"{r['syncd_median_seconds'] * 1e3:.1f} ms{first}",
                f"bare render {r['bare_median_seconds'] * 1e3:.1f} ms",
                f"{r['ratio']:.2f}x",
                f"<= {TARGET:g}x",
                "yes" if result["met"][name] else "NO",
            )
        )
    return out


# -- the data ----------------------------------------------------------------------------


def fill(url: str) -> list[str]:
    """A fresh database with one paper per size of ``SIZES`` revisions; their keys."""
    import sqlalchemy as sa  # noqa: PLC0415

    from syncd.domain.record import content_hash  # noqa: PLC0415
    from syncd.storage import schema  # noqa: PLC0415
    from syncd.storage.migrate import upgrade  # noqa: PLC0415

    engine = sa.create_engine(url)
    upgrade(engine)
    base = web.base_record()
    start = datetime(2026, 1, 1, tzinfo=UTC)
    keys = []
    with engine.begin() as conn:
        conn.execute(
            schema.authors_table.insert(), [{"id": 1, "name": "Zhida Jiang", "created_at": start}]
        )
        for paper, size in enumerate(SIZES, start=1):
            key = f"2601.{paper - 1:05d}"
            keys.append(key)
            latest = web.versions_of(base, paper, size)[1]
            conn.execute(
                schema.papers_table.insert(),
                [
                    {
                        "id": paper, "key": key, "arxiv_id": key, "record": latest.to_dict(),
                        "record_hash": content_hash(latest),
                        "created_at": start, "updated_at": start,
                    }
                ],
            )  # fmt: skip
            conn.execute(
                schema.paper_authors_table.insert(),
                [
                    {
                        "paper_id": paper, "author_id": 1, "status": "tracked",
                        "origin": "arxiv", "absent_syncs": 0,
                        "created_at": start, "updated_at": start,
                    }
                ],
            )  # fmt: skip
            revisions, events = [], []
            for version in range(1, size + 1):
                record = web.versions_of(base, paper, version)[1]
                when = start + timedelta(minutes=version)
                revision_id = paper * 1000 + version
                revisions.append(
                    {
                        "id": revision_id, "paper_id": paper, "seq": version,
                        "observed_at": when, "source": "arxiv", "version": version,
                        "version_date": when, "kinds": [], "changes": {},
                        "record": record.to_dict(), "record_hash": content_hash(record),
                        "sync_run_id": None,
                    }
                )  # fmt: skip
                events.append(
                    {
                        "id": f"evt_{revision_id:032x}", "type": "paper.revised",
                        "created_at": when, "author_id": 1, "paper_id": paper,
                        "revision_id": revision_id, "sync_run_id": None,
                        "kinds": ["version", "title", "abstract"], "changes": {},
                    }
                )  # fmt: skip
            conn.execute(schema.revisions_table.insert(), revisions)
            conn.execute(schema.events_table.insert(), events)
    engine.dispose()
    return keys


# -- the bare renders ----------------------------------------------------------------------


def _bare_page(url: str, key: str) -> str:
    """The paper's revisions, each diffed against the one before, and its events, as HTML."""
    from syncd.domain.diff import diff_records  # noqa: PLC0415
    from syncd.render.html import changes_html, record_html  # noqa: PLC0415

    records, events = _stored(url, key)
    items = [f"<li>{record_html(records[0])}</li>"]
    items += [
        f"<li>{changes_html(diff_records(old, new).changes)}</li>" for old, new in pairwise(records)
    ]
    announced = "".join(f"<li>{kind} {when}</li>" for kind, when in events)
    return f"<!doctype html><html><body><ol>{''.join(items)}</ol><ol>{announced}</ol></body></html>"


def _bare_compare(url: str, key: str, old: int, new: int) -> str:
    from syncd.domain.diff import diff_records  # noqa: PLC0415
    from syncd.render.html import changes_html  # noqa: PLC0415

    records, _ = _stored(url, key)
    change = diff_records(records[old - 1], records[new - 1])
    return f"<!doctype html><html><body>{changes_html(change.changes)}</body></html>"


def _stored(url: str, key: str) -> tuple[list[Any], list[tuple[str, str]]]:
    """The paper's records in version order and its events' types and times."""
    import sqlalchemy as sa  # noqa: PLC0415

    from syncd.domain.record import Record  # noqa: PLC0415
    from syncd.storage import schema  # noqa: PLC0415

    engine = _engines.get(url) or _engines.setdefault(url, sa.create_engine(url))
    p, r, e = schema.papers_table, schema.revisions_table, schema.events_table
    with engine.connect() as conn:
        paper_id = conn.scalar(sa.select(p.c.id).where(p.c.key == key))
        rows = conn.execute(
            sa.select(r.c.record).where(r.c.paper_id == paper_id).order_by(r.c.version, r.c.seq)
        )
        records = [Record.from_dict(row.record) for row in rows]
        events = conn.execute(
            sa.select(e.c.type, e.c.created_at)
            .where(e.c.paper_id == paper_id)
            .order_by(e.c.seq.desc())
        )
        return records, [(row.type, row.created_at.isoformat()) for row in events]


_engines: dict[str, Any] = {}


def _measure(
    client: httpx.Client, requests: int, page: str, bare: Callable[[], str]
) -> dict[str, Any]:
    """``requests`` GETs of ``page`` and bare renders, alternating; their medians."""
    return _alternate(requests, lambda: client.get(page).raise_for_status(), bare)


def _alternate(
    requests: int, ours_fn: Callable[[], Any], bare: Callable[[], Any]
) -> dict[str, Any]:
    """``requests`` calls of each side, alternating which goes first; their medians."""
    import statistics  # noqa: PLC0415

    ours: list[float] = []
    theirs: list[float] = []
    for i in range(requests):
        sides: list[tuple[list[float], Callable[[], Any]]] = [(ours, ours_fn), (theirs, bare)]
        for times, fn in sides if i % 2 == 0 else reversed(sides):
            times.append(web.timed(fn))
    return {
        "requests": requests,
        "syncd_median_seconds": round(statistics.median(ours), 6),
        "bare_median_seconds": round(statistics.median(theirs), 6),
        "ratio": round(statistics.median(ours) / statistics.median(theirs), 3),
    }
