"""Row "Harvest": what following many authors costs through OAI-PMH (issue 23).

Pages of ``ListRecords`` in arXivRaw are rendered by the test suite's writer
(``tests.oaixml``, the recorded answers' shape, hard-wrapped text) and served
to ``syncd.service.harvest.harvest`` by an in-process ``httpx.MockTransport``
that renders each page when asked, so no server's work is measured and no
process holds the whole harvest.  Records are by people nobody follows, but
one in a hundred lists a followed name (so attribution finds some).

- requests: one harvest of the same ``RECORDS`` changed records with 10,
  1,000 and 10,000 followed authors: ``ceil(records / page)`` each time,
  against ``ceil(N / 25)`` per cycle for batched name queries.
- cpu: harvest CPU time per record (``time.process_time``: parse, attribute,
  plan, store) against a bare ``lxml.etree.iterparse`` walk of the same page
  bytes visiting every element; target <= 2x.
- attribution: ``NameIndex.authors_of`` over the records with 10,000 authors
  indexed against 10; target <= 1.2x.
- memory: peak RSS (``VmHWM``) of a harvest of 50,000 records against one of
  5,000, each in a fresh subprocess; target <= 1.2x.
"""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import httpx

from benchmarks import common
from benchmarks.authors import names

RECORDS = 5_000
PAGE = 1_000
BATCH = 25  # authors per batched name query (syncd.service.batches.MAX_BATCH_AUTHORS)
SINCE = date(2026, 1, 2)
_OAI_URL = "http://oai.bench.invalid/oai"


def _paper(n: int) -> Any:
    from tests.oaixml import RawPaper, RawVersionXml  # noqa: PLC0415

    people = f"Person{n} Nobody, Grace Other{n % 97} and Alan Third{n % 89}"
    if n % 100 == 0:
        people = f"{names(10_000)[n % 10_000]}, {people}"
    return RawPaper(
        arxiv_id=f"2601.{n + 1:05d}",
        datestamp="2026-01-02",
        title=f"On the behaviour of model {n} under\n  distribution shift, revisited",
        authors=people,
        abstract="  We study " + " ".join(f"word{(n * 7 + i) % 513}" for i in range(150)) + "\n",
        categories="cs.LG stat.ML",
        comments="12 pages, 3 figures",
        versions=(RawVersionXml(date="Fri, 2 Jan 2026 09:00:00 GMT", size="220kb"),),
    )


def page_body(index: int, total: int) -> bytes:
    """Page ``index`` of a harvest of ``total`` records, ``PAGE`` a page."""
    from tests.oaixml import list_records_xml  # noqa: PLC0415

    first = index * PAGE
    last = min(total, first + PAGE)
    token = f"bench|{index + 1}" if last < total else None
    return list_records_xml([_paper(n) for n in range(first, last)], token=token)


def _transport(total: int, bodies: list[bytes] | None) -> httpx.MockTransport:
    """Pages from ``bodies``, or rendered when asked (nothing holds the whole harvest)."""

    def answer(request: httpx.Request) -> httpx.Response:
        token = request.url.params.get("resumptionToken")
        index = int(token.split("|")[1]) if token else 0
        body = bodies[index] if bodies is not None else page_body(index, total)
        # Streamed, as a socket's body is: httpx's response and its stream refer
        # to each other, and a ByteStream would keep every page alive in that
        # cycle until a full collection (a real transport's stream keeps none).
        return httpx.Response(200, content=iter([body]))

    return httpx.MockTransport(answer)


def harvest_once(
    url: str, total: int, authors: int, bodies: list[bytes] | None = None
) -> dict[str, Any]:
    """One harvest of ``total`` records for ``authors`` followed; its requests and CPU time.

    With ``bodies`` the pages are rendered beforehand and only the harvest's
    own work counts in its CPU time.
    """
    from syncd.config import (  # noqa: PLC0415
        ArxivSettings,
        AuthorSettings,
        DatabaseSettings,
        HarvestSettings,
        Settings,
    )
    from syncd.service.harvest import harvest  # noqa: PLC0415
    from syncd.sources.arxiv import ArxivClient  # noqa: PLC0415

    settings = Settings(
        authors=tuple(AuthorSettings(name=name) for name in names(authors)),
        arxiv=ArxivSettings(api_url="http://api.bench.invalid/api/query", request_interval=0),
        database=DatabaseSettings(url=url, migrate=False),
        harvest=HarvestSettings(url=_OAI_URL, enabled=True),
    )
    store = common.open_store(url)
    try:
        with ArxivClient(settings.arxiv, transport=_transport(total, bodies)) as client:
            common.fresh_heap()
            started = time.process_time()
            result = harvest(store, client, settings, since=SINCE)
            cpu = time.process_time() - started
    finally:
        store.close()
    return {"requests": result.requests, "records": result.records, "cpu_seconds": cpu}


def _bare_walk(bodies: list[bytes]) -> float:
    """CPU seconds of an iterparse walk of ``bodies``, reading every element's tag and text."""
    from lxml import etree  # noqa: PLC0415

    common.fresh_heap()
    started = time.process_time()
    seen = 0
    for body in bodies:
        for _, element in etree.iterparse(io.BytesIO(body), events=("end",)):
            seen += len(element.tag) + len(element.text or "")
            if element.tag.endswith("}record"):
                element.clear()
    return time.process_time() - started


def requests_row(folder: Path) -> dict[str, Any]:
    points = []
    for count in (10, 1_000, 10_000):
        url = common.sqlite_url(folder, f"harvest_requests_{count}")
        point = harvest_once(url, RECORDS, count)
        points.append(
            {
                "authors": count,
                "harvest_requests": point["requests"],
                "name_query_requests_per_cycle": math.ceil(count / BATCH),
            }
        )
    expected = math.ceil(RECORDS / PAGE)
    return {
        "records": RECORDS,
        "page": PAGE,
        "points": points,
        "expected": expected,
        "met": all(p["harvest_requests"] == expected for p in points),
    }


def cpu_row(folder: Path, reps: int) -> dict[str, Any]:
    url = common.sqlite_url(folder, "harvest_cpu")
    bodies = [page_body(i, RECORDS) for i in range(math.ceil(RECORDS / PAGE))]
    harvest_once(url, RECORDS, 10, bodies)  # untimed: the attributed papers are stored once
    paired = common.alternate(
        reps,
        lambda _i: harvest_once(url, RECORDS, 10, bodies)["cpu_seconds"],
        lambda _i: _bare_walk(bodies),
    )
    summary = paired.summary()
    return summary | {
        "syncd_us_per_record": round(summary["syncd_median_seconds"] / RECORDS * 1e6, 1),
        "baseline_us_per_record": round(summary["baseline_median_seconds"] / RECORDS * 1e6, 1),
        "target": "<= 2x",
        "met": paired.ratio <= 2.0,
    }


def attribution_row(reps: int) -> dict[str, Any]:
    from syncd.domain.attribution import NameIndex  # noqa: PLC0415
    from syncd.sources.oai import parse_page  # noqa: PLC0415

    records = [
        raw.as_record()
        for i in range(math.ceil(RECORDS / PAGE))
        for raw in parse_page(page_body(i, RECORDS)).records
    ]
    many, few = NameIndex(names(10_000)), NameIndex(names(10))

    def timed(index: NameIndex) -> Callable[[int], float]:
        def run(_i: int) -> float:
            common.fresh_heap()
            started = time.perf_counter()
            for record in records:
                index.authors_of(record.authors)
            return time.perf_counter() - started

        return run

    paired = common.alternate(reps, timed(many), timed(few))
    return paired.summary() | {"target": "<= 1.2x", "met": paired.ratio <= 1.2}


def memory_row(folder: Path) -> dict[str, Any]:
    points = []
    for total in (5_000, 50_000):
        url = common.sqlite_url(folder, f"harvest_memory_{total}")
        argv = [sys.executable, "-m", "benchmarks.harvest", url, str(total)]
        done = subprocess.run(argv, capture_output=True, check=True, env=common.child_env())
        points.append({"records": total} | json.loads(done.stdout))
    ratio = points[1]["peak_rss_mib"] / points[0]["peak_rss_mib"]
    return {"points": points, "ratio": round(ratio, 3), "target": "<= 1.2x", "met": ratio <= 1.2}


def run(reps: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        return {
            "requests": requests_row(folder),
            "cpu": cpu_row(folder, reps),
            "attribution": attribution_row(reps),
            "memory": memory_row(folder),
        }


def table_rows(result: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """The harvest's lines of the results table."""
    yes = {True: "yes", False: "NO"}
    asked = result["requests"]
    cpu, attribution, memory = result["cpu"], result["attribution"], result["memory"]
    requests = ", ".join(f"{p['authors']:,}: {p['harvest_requests']}" for p in asked["points"])
    name_queries = ", ".join(
        f"{p['authors']:,}: {p['name_query_requests_per_cycle']}" for p in asked["points"]
    )
    small, large = memory["points"]
    return [
        (
            f"Harvest requests: {asked['records']:,} changed records, {asked['page']:,} a page",
            requests,
            f"name queries per cycle {name_queries}",
            f"ceil(records / page) = {asked['expected']}",
            "the same for every N",
            yes[asked["met"]],
        ),
        (
            "Harvest CPU per record (parse, attribute, plan, store)",
            f"{cpu['syncd_us_per_record']} us",
            f"bare iterparse walk {cpu['baseline_us_per_record']} us",
            f"{cpu['median_ratio']:.2f}x",
            cpu["target"],
            yes[cpu["met"]],
        ),
        (
            "Attribution: 10,000 authors indexed against 10",
            f"{attribution['syncd_median_seconds'] * 1000:.1f} ms",
            f"{attribution['baseline_median_seconds'] * 1000:.1f} ms",
            f"{attribution['median_ratio']:.2f}x",
            attribution["target"],
            yes[attribution["met"]],
        ),
        (
            f"Harvest peak RSS: {large['records']:,} records against {small['records']:,}",
            f"{large['peak_rss_mib']} MiB",
            f"{small['peak_rss_mib']} MiB",
            f"{memory['ratio']:.2f}x",
            memory["target"],
            yes[memory["met"]],
        ),
    ]


def _child(url: str, total: int) -> None:
    from benchmarks.memory import _vm  # noqa: PLC0415

    common.like_the_cli()
    point = harvest_once(url, total, 10)
    print(json.dumps({"peak_rss_mib": round(_vm("VmHWM") / 1024, 1)} | point))


if __name__ == "__main__":
    _child(sys.argv[1], int(sys.argv[2]))
