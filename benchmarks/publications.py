"""Row "Publications": what following papers to their publications costs (issue 33).

N tracked papers (100, 1,000, 10,000; announced as ``paper.added``, so their
lookups publish events) in a realistic mix, by ``n % 20``:

- 6 in 20 (30 %) carry arXiv's own DOI and journal reference: published from
  arXiv alone, never asked for links, watched for notices;
- 6 (30 %) are named by a Crossref relation, half by the arXiv DOI, half by
  the bare id;
- 2 (10 %) are found only by Crossref's bibliographic search (same title,
  authors and year: announced);
- 1 (5 %) is merged by OpenAlex with its publication (a key is set, so
  OpenAlex is asked: one work per paper still without a link);
- 5 (25 %) are unpublished (OpenAlex keeps their arXiv work apart).

One publication in ten has a correction before the first lookups; one in
fifty gets a retraction at the start of the second interval.

Crossref and OpenAlex are the test suite's fakes (``tests.fakecrossref``,
``tests.fakeopenalex``: Crossref's and OpenAlex's recorded answers), called
through an in-process ``httpx.MockTransport``, so what is counted is what
syncd's clients send.  The Crossref fake's lookups scan every publication per
request; the row's subclass answers the same items from indexes so a
10,000-paper run does not measure the fake.

- requests: the daemon's lookups are simulated over two intervals
  (``[publications] interval``, a week) on a clock that ticks every
  ``PUBLICATIONS_PERIOD`` (60 s) as the daemon's trigger does, each tick
  ``check_publications`` (at most ``RUN_LIMIT`` papers a run); ticks with
  nothing due are skipped, as they send nothing.  Requests are counted by kind
  (link, search, notices, OpenAlex work) in the first lookups (the burst of
  new papers), in interval 1 (the burst and the lookups due in its second
  half) and in interval 2 (every paper looked up once, on its slot).  The
  baseline is the unbatched count of the same lookups: a link request, a
  search and an OpenAlex request per paper looked up, a notice request per
  published paper looked up.  Checked from the log: a bibliographic search
  only for a paper without a link, at most once per interval.  Shown beside:
  how many of the papers looked up without a link were searched (a lookup
  that comes less than an interval after the paper's last search does not
  search, ``wants_search``; its next one does).
- cpu: CPU time (``time.process_time``) per paper of ``check_publications``
  over the first lookups of ``CPU_PAPERS`` papers (answers recorded
  beforehand and replayed, the store copied from a template for every
  repetition), against ``json.loads`` of the same answers plus a loop over
  every item's fields.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from benchmarks import common

SIZES = (100, 1_000, 10_000)
CPU_PAPERS = 1_000
# A lookup parses the answers, plans each paper and writes it in its own transaction with
# its events and deliveries: bounded at 20 times reading the answers alone.
CPU_TARGET = 20.0
PERIOD = 60.0  # syncd.cli.daemon.PUBLICATIONS_PERIOD: the daemon's lookups tick this often
WEEK = 7 * 24 * 3600.0
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
AUTHOR = "Ada Benchmarkson"
KINDS = ("link", "search", "notices", "openalex")
_CROSSREF = "http://crossref.bench.invalid"
_OPENALEX = "http://openalex.bench.invalid"
_KEY = "bench-openalex-key"
_FILLERS = 4  # works a search ranks besides the paper's own (Crossref answers 5 rows)
_PUBLISHED = frozenset({"arxiv", "relation-doi", "relation-arxiv", "search", "openalex"})


def kind_of(n: int) -> str:
    """How paper ``n`` is published (module doc)."""
    share = n % 20
    if share < 6:
        return "arxiv"
    if share < 12:
        return "relation-doi" if share < 9 else "relation-arxiv"
    if share < 14:
        return "search"
    return "openalex" if share == 14 else "unpublished"


def arxiv_id(n: int) -> str:
    return f"2403.{n + 1:05d}"


def title(n: int) -> str:
    return f"Sparse {n} attention kernels for long sequence models, variant {n * 7919 % 10007}"


def authors(n: int) -> tuple[str, ...]:
    return (AUTHOR, f"Grace Coauthor{n}", f"Alan Third{n % 89}")


def doi(n: int) -> str:
    return f"10.5555/bench.{n}"


def _record(n: int) -> Any:
    from tests.fakearxiv import make_record  # noqa: PLC0415

    fields: dict[str, Any] = {"published": "2024-03-04T12:00:00Z"}
    if kind_of(n) == "arxiv":
        fields |= {"doi": doi(n), "journal_ref": f"Phys. Rev. Bench {n} (2024)"}
    return make_record(arxiv_id(n), title=title(n), authors=authors(n), **fields)


def _filter_values(query: dict[str, list[str]], name: str) -> set[str]:
    return {
        clause.partition(":")[2].lower()
        for value in query.get("filter", [])
        for clause in value.split(",")
        if clause.partition(":")[0] == name
    }


def _crossref_class() -> type:
    from tests.fakecrossref import FakeCrossref, arxiv_doi, published_item  # noqa: PLC0415

    class IndexedCrossref(FakeCrossref):
        """``FakeCrossref``'s answers, found through indexes instead of scans."""

        def __init__(self) -> None:
            super().__init__()
            self.by_object: dict[str, Any] = {}
            self.by_title: dict[str, Any] = {}
            self.fillers: list[Any] = []

        def index(self) -> None:
            for publication in self.publications.values():
                if publication.link == "doi":
                    self.by_object[arxiv_doi(publication.preprint).lower()] = publication
                elif publication.link == "arxiv":
                    self.by_object[publication.preprint.lower()] = publication
                self.by_title[publication.title.lower()] = publication

        def _linked(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
            named = _filter_values(query, "relation.object")
            hits = {id(p): p for o in sorted(named) if (p := self.by_object.get(o)) is not None}
            return [published_item(p, self.notices) for p in hits.values()]

        def _searched(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
            # The client asks for the title and the first author's family name.
            asked = query["query.bibliographic"][0].rsplit(" ", 1)[0].lower()
            hit = self.by_title.get(asked)
            ranked = ([hit] if hit is not None else []) + self.fillers
            return [published_item(p, self.notices) for p in ranked[: 1 + _FILLERS]]

    return IndexedCrossref


@dataclass
class _World:
    """The fakes of one run and what they were told."""

    crossref: Any
    openalex: Any
    searched: dict[str, int] = field(default_factory=dict)  # title -> paper


def _world(count: int) -> _World:
    from tests.fakecrossref import Publication  # noqa: PLC0415
    from tests.fakeopenalex import FakeOpenAlex  # noqa: PLC0415

    crossref, openalex = _crossref_class()(), FakeOpenAlex(key=_KEY)
    world = _World(crossref, openalex)
    for n in range(count):
        kind, name = kind_of(n), title(n)
        world.searched[name.lower()] = n
        common_fields = {"title": name, "authors": authors(n), "year": 2024}
        if kind in {"relation-doi", "relation-arxiv", "search"}:
            link = {"relation-doi": "doi", "relation-arxiv": "arxiv"}.get(kind)
            crossref.publish(doi(n), preprint=arxiv_id(n), link=link, **common_fields)  # type: ignore[arg-type]
        if kind == "openalex":
            openalex.merged(arxiv_id(n), doi=doi(n), venue="Bench Letters", **common_fields)
        elif kind != "arxiv":
            openalex.preprint(arxiv_id(n), **common_fields)
        if kind in _PUBLISHED and n % 10 == 3:
            crossref.add_notice(doi(n), f"10.5555/erratum.{n}", type="correction")
    crossref.fillers = [
        Publication(
            f"10.5555/other.{m}", f"Soil chemistry survey {m}", (f"Otto Filler{m}",), 2024, "Soil"
        )
        for m in range(_FILLERS)
    ]
    crossref.index()
    return world


def _retract_some(world: _World, count: int) -> int:
    """Retraction notices on one publication in fifty; how many."""
    retracted = [n for n in range(count) if kind_of(n) in _PUBLISHED and n % 50 == 7]
    for n in retracted:
        world.crossref.add_notice(doi(n), f"10.5555/retraction.{n}", type="retraction")
    return len(retracted)


def _live(world: _World, recording: dict[str, tuple[int, str, bytes]] | None) -> Callable[..., Any]:
    """A transport handler answering from the fakes (and recording the answers)."""

    def answer(request: httpx.Request) -> httpx.Response:
        fake = (
            world.openalex if request.url.host == urlsplit(_OPENALEX).hostname else world.crossref
        )
        reply = fake.respond(
            request.url.raw_path.decode("ascii"), request.headers.get("user-agent")
        )
        if recording is not None:
            recording[str(request.url)] = (reply.status, reply.content_type, reply.body)
        return httpx.Response(
            reply.status, headers={"content-type": reply.content_type}, content=reply.body
        )

    return answer


def _replay(recorded: dict[str, tuple[int, str, bytes]], asked: list[str]) -> Callable[..., Any]:
    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        status, content_type, body = recorded[str(request.url)]
        return httpx.Response(status, headers={"content-type": content_type}, content=body)

    return answer


def _settings(url: str) -> Any:
    from syncd.config import ArxivSettings, DatabaseSettings, Settings  # noqa: PLC0415
    from syncd.config.publications import PublicationsSettings  # noqa: PLC0415

    return Settings(
        arxiv=ArxivSettings(contact="bench@example.org"),
        database=DatabaseSettings(url=url, migrate=False),
        publications=PublicationsSettings(
            enabled=True,
            crossref_url=_CROSSREF,
            crossref_interval=0,
            openalex_url=_OPENALEX,
            openalex_key=_KEY,
            openalex_interval=0,
            interval=WEEK,
        ),
    )


@contextmanager
def _sources(store: Any, settings: Any, handler: Callable[..., Any]) -> Iterator[Any]:
    """The sources as ``publication_sources`` builds them (host pacers, cooldowns), on
    ``handler``."""
    from syncd.service.publications import PublicationSources  # noqa: PLC0415
    from syncd.sources.crossref import CrossrefClient  # noqa: PLC0415
    from syncd.sources.openalex import OpenAlexClient  # noqa: PLC0415
    from syncd.sources.polite import host_of  # noqa: PLC0415

    p = settings.publications
    transport = httpx.MockTransport(handler)

    def client(cls: type, url: str) -> Any:
        return cls(
            p,
            settings.arxiv,
            transport=transport,
            pacer=store.host_pacer(host_of(url)),
            cooldowns=store.cooldowns,
            sleep=lambda _s: None,
        )

    with (
        client(CrossrefClient, p.crossref_url) as crossref,
        client(OpenAlexClient, p.openalex_url) as openalex,
    ):
        yield PublicationSources(crossref, openalex)


def _fill(url: str, count: int) -> None:
    """A store following ``AUTHOR`` with ``count`` papers, each announced as added."""
    from syncd.domain.authors import Author  # noqa: PLC0415
    from syncd.domain.model import NewRevision, PaperWrite, SyncStats  # noqa: PLC0415
    from syncd.domain.vocabulary import AuthorOrigin, EventType, Origin, PaperStatus  # noqa: PLC0415

    store = common.open_store(url)
    try:
        store.authors.reconcile([Author(AUTHOR, AuthorOrigin.CONFIG)])
        for start in range(0, count, 1_000):
            writes = [
                PaperWrite(
                    key=arxiv_id(n),
                    arxiv_id=arxiv_id(n),
                    status=PaperStatus.TRACKED,
                    origin=Origin.ARXIV,
                    revisions=(NewRevision(_record(n), "api"),),
                    event_type=EventType.ADDED,
                )
                for n in range(start, min(count, start + 1_000))
            ]
            run_id = store.runs.start(AUTHOR)
            store.apply_cycle(run_id, AUTHOR, writes, SyncStats())
        common.settle(store)
    finally:
        store.close()


# -- requests per interval ---------------------------------------------------------------


@dataclass(frozen=True)
class _Mark:
    """Where the logs and the papers' turns stood at one moment."""

    crossref: int
    openalex: int
    turns: dict[str, int]


def _mark(store: Any, world: _World) -> _Mark:
    import sqlalchemy as sa  # noqa: PLC0415

    from syncd.storage.schema import papers_table, publication_checks_table  # noqa: PLC0415

    p, c = papers_table, publication_checks_table
    query = sa.select(p.c.arxiv_id, c.c.turn).join(c, c.c.paper_id == p.c.id)
    with store.engine.connect() as conn:
        turns = {row.arxiv_id: int(row.turn) for row in conn.execute(query)}
    return _Mark(len(world.crossref.requests), len(world.openalex.requests), turns)


def _next_due(store: Any) -> datetime:
    import sqlalchemy as sa  # noqa: PLC0415

    from syncd.storage.database import utc  # noqa: PLC0415
    from syncd.storage.schema import publication_checks_table  # noqa: PLC0415

    with store.engine.connect() as conn:
        return utc(conn.scalar(sa.select(sa.func.min(publication_checks_table.c.due_at))))


def _tick_after(moment: datetime) -> datetime:
    """The daemon's first tick at or after ``moment`` (ticks every ``PERIOD`` from ``T0``)."""
    ticks = -(-(moment - T0).total_seconds() // PERIOD)
    return T0 + timedelta(seconds=ticks * PERIOD)


def _window(
    world: _World, start: _Mark, end: _Mark, events: Counter[str], searched_before: set[int]
) -> dict[str, Any]:
    """Requests by kind between two marks, the unbatched count of the same lookups, and
    the searches held to the rule (only the unlinked, at most once)."""
    asked = world.crossref.requests[start.crossref : end.crossref]
    requests = Counter(r.kind for r in asked)
    requests["openalex"] = end.openalex - start.openalex
    looked = [a for a, turn in end.turns.items() if turn > start.turns.get(a, 0)]
    lookups = sum(end.turns[a] - start.turns.get(a, 0) for a in looked)
    published = sum(
        end.turns[a] - start.turns.get(a, 0)
        for a in looked
        if kind_of(int(a.split(".")[1]) - 1) in _PUBLISHED
    )
    unbatched = {"link": lookups, "search": lookups, "notices": published, "openalex": lookups}
    per_paper = Counter(
        world.searched[r.param("query.bibliographic").rsplit(" ", 1)[0].lower()]  # type: ignore[union-attr]
        for r in asked
        if r.kind == "search"
    )
    linked = [
        n
        for n in per_paper
        if kind_of(n) not in {"search", "unpublished"}
        or (kind_of(n) == "search" and n in searched_before)
    ]
    # Without a link when looked up: the unpublished, and the ones a search finds until it has.
    unlinked = {
        a
        for a in looked
        if kind_of(n := int(a.split(".")[1]) - 1) == "unpublished"
        or (kind_of(n) == "search" and n not in searched_before)
    }
    searched_before.update(per_paper)
    syncd_total = sum(requests[k] for k in KINDS)
    unbatched_total = sum(unbatched.values())
    return {
        "lookups": lookups,
        "requests": {k: requests[k] for k in KINDS}
        | {"other": requests["work"] + requests["list"]},
        "unbatched": unbatched,
        "ratio": {k: round(requests[k] / unbatched[k], 3) if unbatched[k] else None for k in KINDS},
        "total": syncd_total,
        "unbatched_total": unbatched_total,
        "total_ratio": round(syncd_total / unbatched_total, 3) if unbatched_total else None,
        "searched_papers": len(per_paper),
        "searched_twice": sum(1 for times in per_paper.values() if times > 1),
        "searched_with_link": len(linked),
        "unlinked_looked_up": len(unlinked),
        "events": dict(sorted(events.items())),
    }


def simulate(url: str, count: int) -> dict[str, Any]:
    """Two intervals of the daemon's lookups of ``count`` papers (module doc)."""
    from syncd.service.publications import RUN_LIMIT, check_publications  # noqa: PLC0415

    _fill(url, count)
    world, settings = _world(count), _settings(url)
    interval = timedelta(seconds=settings.publications.interval)
    store = common.open_store(url)
    marks: dict[str, _Mark] = {"start": _mark(store, world)}
    events: dict[str, Counter[str]] = {w: Counter() for w in ("burst", "interval 1", "interval 2")}
    clock, retractions, started = T0, 0, time.perf_counter()
    try:
        with _sources(store, settings, _live(world, None)) as sources:
            while clock < T0 + 2 * interval:
                if clock >= T0 + interval and "interval 1" not in marks:
                    marks["interval 1"] = _mark(store, world)
                    retractions = _retract_some(world, count)
                run = check_publications(store, sources, settings, now=lambda at=clock: at)
                if not run.ok:
                    raise RuntimeError(f"publication lookups failed: {run.errors[:3]}")
                window = "interval 1" if clock < T0 + interval else "interval 2"
                for event in run.events:
                    events[window][event.type] += 1
                    if "burst" not in marks:
                        events["burst"][event.type] += 1
                processed = run.checked + run.failed + run.stale
                due = _next_due(store)
                if "burst" not in marks and processed < RUN_LIMIT and due > clock:
                    marks["burst"] = _mark(store, world)
                step = clock + timedelta(seconds=PERIOD)
                clock = step if processed >= RUN_LIMIT else _tick_after(max(due, step))
            marks["interval 2"] = _mark(store, world)
    finally:
        store.close()
    searched: set[int] = set()
    windows = {
        "first lookups": _window(world, marks["start"], marks["burst"], events["burst"], set()),
        "interval 1": _window(
            world, marks["start"], marks["interval 1"], events["interval 1"], searched
        ),
        "interval 2": _window(
            world, marks["interval 1"], marks["interval 2"], events["interval 2"], searched
        ),
    }
    return {
        "papers": count,
        "mix": dict(sorted(Counter(kind_of(n) for n in range(count)).items())),
        "retractions_added_at_interval_2": retractions,
        "windows": windows,
        "simulated_seconds": round(time.perf_counter() - started, 1),
    }


def _met(point: dict[str, Any]) -> dict[str, bool]:
    """The row's checks on one size: the issue's rules (a search only for a paper without a
    link, at most once per interval) and batching."""
    first = point["windows"]["first lookups"]
    every = point["windows"].values()
    return {
        # One request carries many papers' links and notices in the first lookups.
        "links_batched": first["requests"]["link"] < first["unbatched"]["link"],
        "notices_batched": first["requests"]["notices"] < first["unbatched"]["notices"],
        "search_only_unlinked": all(w["searched_with_link"] == 0 for w in every),
        "search_at_most_once": all(w["searched_twice"] == 0 for w in every),
    }


def requests_row(folder: Path, kinds: list[str], sizes: tuple[int, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in kinds:
        points = []
        for count in sizes:
            with common.database(kind, folder, f"publications_{kind}_{count}") as url:
                point = simulate(url, count)
            points.append(point | {"checks": _met(point)})
        out[kind] = {"points": points, "met": all(all(p["checks"].values()) for p in points)}
    return out


# -- CPU per paper -----------------------------------------------------------------------


def _first_lookups(template: Path, url: str, handler: Callable[..., Any]) -> float:
    """CPU seconds of the first lookups of every paper of a copy of ``template``."""
    from syncd.service.publications import RUN_LIMIT, check_publications  # noqa: PLC0415

    work = Path(url.removeprefix("sqlite:///"))
    shutil.copyfile(template, work)
    settings = _settings(url)
    store = common.open_store(url)
    try:
        with _sources(store, settings, handler) as sources:
            common.fresh_heap()
            started = time.process_time()
            while True:
                run = check_publications(store, sources, settings, now=lambda: T0)
                if run.checked + run.failed + run.stale < RUN_LIMIT:
                    break
            cpu = time.process_time() - started
        if not run.ok:
            raise RuntimeError(f"publication lookups failed: {run.errors[:3]}")
    finally:
        store.close()
    return cpu


def _bare_parse(bodies: list[tuple[int, str, bytes]]) -> float:
    """CPU seconds of ``json.loads`` of every JSON answer and a loop over its items' fields."""
    common.fresh_heap()
    started = time.process_time()
    seen = 0
    for _status, content_type, body in bodies:
        if not content_type.startswith("application/json"):
            continue
        value = json.loads(body)
        message = value.get("message")
        items = message.get("items", [message]) if isinstance(message, dict) else [value]
        for item in items:
            for key, field_value in item.items():
                seen += len(key) + (1 if field_value else 0)
    return time.process_time() - started


def cpu_row(folder: Path, papers: int, reps: int) -> dict[str, Any]:
    template = folder / "publications_cpu_template.sqlite3"
    _fill(common.sqlite_url(folder, template.stem), papers)
    url = common.sqlite_url(folder, "publications_cpu")
    world, recorded = _world(papers), {}
    _first_lookups(template, url, _live(world, recorded))  # untimed: records the answers
    sent = len(world.crossref.requests) + len(world.openalex.requests)
    if sent != len(recorded):
        raise RuntimeError(f"{sent} requests but {len(recorded)} distinct ones: cannot replay")

    def replayed(_i: int) -> float:
        asked: list[str] = []
        cpu = _first_lookups(template, url, _replay(recorded, asked))
        if len(asked) != sent:
            raise RuntimeError(f"replay asked {len(asked)} requests, the recording {sent}")
        return cpu

    bodies = list(recorded.values())
    paired = common.alternate(reps, replayed, lambda _i: _bare_parse(bodies))
    summary = paired.summary()
    return summary | {
        "papers": papers,
        "requests": sent,
        "answer_bytes": sum(len(body) for _s, _c, body in bodies),
        "syncd_us_per_paper": round(summary["syncd_median_seconds"] / papers * 1e6, 1),
        "baseline_us_per_paper": round(summary["baseline_median_seconds"] / papers * 1e6, 1),
        "target": f"<= {CPU_TARGET:g}x",
        "met": paired.ratio <= CPU_TARGET,
    }


def run(kinds: list[str], sizes: tuple[int, ...], cpu_papers: int, reps: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        return {
            "requests": requests_row(folder, kinds, sizes),
            "cpu": cpu_row(folder, cpu_papers, reps),
        }


def _kinds_cell(counts: dict[str, Any]) -> str:
    return ", ".join(f"{kind} {counts[kind]:,}" for kind in KINDS)


def table_rows(result: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """The publication lookups' lines of the results table."""
    yes = {True: "yes", False: "NO"}
    out = []
    for kind, row in result["requests"].items():
        for point in row["points"]:
            for name in ("first lookups", "interval 2"):
                window = point["windows"][name]
                checks = point["checks"]
                out.append(
                    (
                        f"Publications, {kind}: {point['papers']:,} papers, {name}"
                        f" ({window['lookups']:,} lookups)",
                        _kinds_cell(window["requests"]),
                        "unbatched " + _kinds_cell(window["unbatched"]),
                        f"{window['total_ratio']:.3f}x; searched {window['searched_papers']:,}"
                        f" of {window['unlinked_looked_up']:,} without a link",
                        "links, notices batched; search only unlinked, once per interval",
                        yes[all(checks.values())],
                    )
                )
    cpu = result["cpu"]
    out.append(
        (
            f"Publications CPU per paper: first lookups of {cpu['papers']:,} papers",
            f"{cpu['syncd_us_per_paper']} us",
            f"json.loads + item loop {cpu['baseline_us_per_paper']} us",
            f"{cpu['median_ratio']:.2f}x",
            cpu["target"],
            yes[cpu["met"]],
        )
    )
    return out
