"""Row "Harvest": ``syncd harvest --from 2005-09-16``, arXiv's whole list, page by page (issue 34).

Pages of ``ListRecords`` in arXivRaw hold 3,500 records, arXiv's own page
(``RECORDS_LIMIT`` of arXiv/oaipmh), written by the test suite's writer
(``tests.oaixml``: the recorded answers' shape, hard-wrapped text) and
served to ``syncd.service.harvest.harvest`` by an in-process
``httpx.MockTransport`` that renders each page when asked, so no process
holds the whole harvest.  The pages' CPU time (``render_seconds``) is
measured apart and left out of the harvest's.  Records are by people nobody
follows, but one in a hundred lists a followed name (so attribution finds
some), and their datestamps run from 2005-09-16 to the harvest's day, as
arXiv lists them.

- requests: one harvest of ``REQUEST_RECORDS`` records with 10, 1,000 and
  10,000 followed authors: ``ceil(records / page)`` each time, against
  ``ceil(N / 25)`` per cycle for batched name queries.
- cpu: harvest CPU time per record (``time.process_time``: parse,
  attribute, plan, store; the pages' rendering subtracted) against a bare
  ``lxml.etree.iterparse`` walk of the same page bytes visiting every
  element; target <= 1.5x.
- attribution: ``NameIndex.authors_of`` over the records with 100,000
  authors indexed against 100; target <= 1.2x.
- memory: peak RSS (``VmHWM``) of a harvest of 2,500,000 records against one
  of 100,000, each in a fresh subprocess; target <= 1.2x.

``python -m benchmarks.harvest --records N`` runs the memory row at N
records against 100,000 (the full 2.5 million takes minutes on two cores).
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx

from benchmarks import common
from benchmarks.authors import names

PAGE = 3_500  # arXiv/oaipmh oai_config.RECORDS_LIMIT: records a ListRecords page
REQUEST_RECORDS = 35_000
BATCH = 25  # authors per batched name query (syncd.service.batches.MAX_BATCH_AUTHORS)
FIRST_DATESTAMP = date(2005, 9, 16)  # arXiv/oaipmh EARLIEST_DATE: its list's first day
HARVESTED = date(2026, 12, 1)
ATTRIBUTION_AUTHORS = (100, 100_000)
MEMORY_SIZES = (100_000, 2_500_000)
_NAMED = 100_000  # followed names the records list, one in a hundred records
_OAI_URL = "http://oai.bench.invalid/oai"
_IDS_A_MONTH = 50_000


@functools.cache
def _named() -> list[str]:
    return names(_NAMED)


@functools.cache
def _abstract(start: int) -> str:
    """An abstract of 150 words, unwrapped but for its indent and final line feed."""
    return "  We study " + " ".join(f"word{(start + i) % 513}" for i in range(150)) + "\n"


def _arxiv_id(n: int) -> str:
    """Record ``n``'s id: distinct for millions of records, all in arXiv's current scheme."""
    month = n // _IDS_A_MONTH
    return f"{15 + month // 12:02d}{month % 12 + 1:02d}.{n % _IDS_A_MONTH:05d}"


def _paper(n: int, total: int) -> Any:
    from tests.oaixml import RawPaper, RawVersionXml  # noqa: PLC0415

    people = f"Person{n} Nobody, Grace Other{n % 97} and Alan Third{n % 89}"
    if n % 100 == 0:
        people = f"{_named()[(n // 100) % _NAMED]}, {people}"
    day = FIRST_DATESTAMP + timedelta(days=(HARVESTED - FIRST_DATESTAMP).days * n // total)
    return RawPaper(
        arxiv_id=_arxiv_id(n),
        datestamp=day.isoformat(),
        title=f"On the behaviour of model {n} under\n  distribution shift, revisited",
        authors=people,
        abstract=_abstract(n * 7 % 513),
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
    papers = [_paper(n, total) for n in range(first, last)]
    return list_records_xml(papers, token=token, cursor=first, complete_list_size=total)


def _pages(total: int) -> int:
    return math.ceil(total / PAGE)


class _Pages:
    """The transport's pages, rendered when asked; the CPU time they took, apart."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.render_seconds = 0.0

    def transport(self) -> httpx.MockTransport:
        def answer(request: httpx.Request) -> httpx.Response:
            token = request.url.params.get("resumptionToken")
            index = int(token.split("|")[1]) if token else 0
            started = time.process_time()
            body = page_body(index, self.total)
            self.render_seconds += time.process_time() - started
            # Streamed, as a socket's body is: httpx's response and its stream refer
            # to each other, and a ByteStream would keep every page alive in that
            # cycle until a full collection (a real transport's stream keeps none).
            return httpx.Response(200, content=iter([body]))

        return httpx.MockTransport(answer)


def harvest_once(url: str, total: int, authors: int) -> dict[str, Any]:
    """One harvest of ``total`` records for ``authors`` followed: its requests and CPU time,
    the pages' rendering left out."""
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
    pages = _Pages(total)
    store = common.open_store(url)
    try:
        with ArxivClient(settings.arxiv, transport=pages.transport()) as client:
            common.fresh_heap()
            started = time.process_time()
            result = harvest(store, client, settings, since=FIRST_DATESTAMP)
            cpu = time.process_time() - started - pages.render_seconds
    finally:
        store.close()
    return {
        "requests": result.requests,
        "records": result.records,
        "cpu_seconds": cpu,
        "render_seconds": round(pages.render_seconds, 3),
    }


def _bare_walk(total: int) -> float:
    """CPU seconds of an iterparse walk of every page, reading every element's tag and text
    (the pages rendered apart, as for the harvest)."""
    from lxml import etree  # noqa: PLC0415

    common.fresh_heap()
    spent = 0.0
    for index in range(_pages(total)):
        body = page_body(index, total)
        started = time.process_time()
        seen = 0
        for _, element in etree.iterparse(io.BytesIO(body), events=("end",)):
            seen += len(element.tag) + len(element.text or "")
            if element.tag.endswith("}record"):
                element.clear()
        spent += time.process_time() - started
    return spent


def requests_row(folder: Path) -> dict[str, Any]:
    points = []
    for count in (10, 1_000, 10_000):
        url = common.sqlite_url(folder, f"harvest_requests_{count}")
        point = harvest_once(url, REQUEST_RECORDS, count)
        points.append(
            {
                "authors": count,
                "harvest_requests": point["requests"],
                "name_query_requests_per_cycle": math.ceil(count / BATCH),
            }
        )
    expected = _pages(REQUEST_RECORDS)
    return {
        "records": REQUEST_RECORDS,
        "page": PAGE,
        "points": points,
        "expected": expected,
        "met": all(p["harvest_requests"] == expected for p in points),
    }


def cpu_row(folder: Path, reps: int, records: int) -> dict[str, Any]:
    url = common.sqlite_url(folder, "harvest_cpu")
    harvest_once(url, records, 10)  # untimed: the attributed papers are stored once
    paired = common.alternate(
        reps,
        lambda _i: harvest_once(url, records, 10)["cpu_seconds"],
        lambda _i: _bare_walk(records),
    )
    summary = paired.summary()
    return summary | {
        "records": records,
        "syncd_us_per_record": round(summary["syncd_median_seconds"] / records * 1e6, 1),
        "baseline_us_per_record": round(summary["baseline_median_seconds"] / records * 1e6, 1),
        "target": "<= 1.5x",
        "met": paired.ratio <= 1.5,
    }


def _records(total: int) -> Iterator[Any]:
    from syncd.sources.oai import parse_page  # noqa: PLC0415

    for i in range(_pages(total)):
        yield from (raw.as_record() for raw in parse_page(page_body(i, total)).records)


def attribution_row(reps: int, records: int) -> dict[str, Any]:
    from syncd.domain.attribution import NameIndex  # noqa: PLC0415

    listed = [record.authors for record in _records(records)]
    few, many = (NameIndex(names(count)) for count in ATTRIBUTION_AUTHORS)

    def timed(index: NameIndex) -> Callable[[int], float]:
        def run(_i: int) -> float:
            common.fresh_heap()
            started = time.process_time()
            for authors in listed:
                index.authors_of(authors)
            return time.process_time() - started

        return run

    paired = common.alternate(reps, timed(many), timed(few))
    return paired.summary() | {
        "records": records,
        "authors": ATTRIBUTION_AUTHORS,
        "target": "<= 1.2x",
        "met": paired.ratio <= 1.2,
    }


def memory_row(folder: Path, sizes: tuple[int, int] = MEMORY_SIZES) -> dict[str, Any]:
    points = []
    for total in sizes:
        url = common.sqlite_url(folder, f"harvest_memory_{total}")
        argv = [sys.executable, "-m", "benchmarks.harvest", "--child", url, str(total)]
        done = subprocess.run(argv, capture_output=True, check=True, env=common.child_env())
        points.append({"records": total} | json.loads(done.stdout))
    ratio = points[1]["peak_rss_mib"] / points[0]["peak_rss_mib"]
    return {"points": points, "ratio": round(ratio, 3), "target": "<= 1.2x", "met": ratio <= 1.2}


def run(reps: int, cpu_records: int, memory_sizes: tuple[int, int]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        return {
            "requests": requests_row(folder),
            "cpu": cpu_row(folder, reps, cpu_records),
            "attribution": attribution_row(reps, cpu_records),
            "memory": memory_row(folder, memory_sizes),
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
    few, many = attribution["authors"]
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
            f"Harvest CPU per record, {cpu['records']:,} records (parse, attribute, plan, store)",
            f"{cpu['syncd_us_per_record']} us",
            f"bare iterparse walk {cpu['baseline_us_per_record']} us",
            f"{cpu['median_ratio']:.2f}x",
            cpu["target"],
            yes[cpu["met"]],
        ),
        (
            f"Attribution: {many:,} authors indexed against {few:,}",
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
    started = time.perf_counter()
    point = harvest_once(url, total, 10)
    seconds = round(time.perf_counter() - started, 1)
    print(json.dumps({"peak_rss_mib": round(_vm("VmHWM") / 1024, 1), "seconds": seconds} | point))


def _main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.harvest")
    parser.add_argument("--child", nargs=2, metavar=("URL", "RECORDS"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--records", type=int, default=MEMORY_SIZES[1], help="the memory row's large harvest"
    )
    args = parser.parse_args()
    if args.child:
        common.use_snapshot()  # the parent run's copy of syncd/, as every row's subprocess
        _child(args.child[0], int(args.child[1]))
        return
    with tempfile.TemporaryDirectory() as name:
        print(json.dumps(memory_row(Path(name), (MEMORY_SIZES[0], args.records)), indent=2))


if __name__ == "__main__":
    _main()
