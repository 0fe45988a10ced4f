"""The OAI-PMH harvest against the fake arXiv: the same story as the API's, paging, faults."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from syncd.cli.progress import HarvestReporter
from syncd.storage import HarvestState, Storage
from syncd.storage.schema import sync_runs_table
from tests import fakearxiv as fa
from tests.conftest import ON_BOTH_DATABASES
from tests.fakeoai import is_oai
from tests.helpers import ROOT
from tests.hypothesis_profiles import random_seed
from tests.integration.conftest import Syncd
from tests.integration.harvests import DAY, NAMESAKES_PAPER, NEW_PAPER, harvesting, story, told
from tests.scenario import FEDCG, FLEXMARL, FLOWTRAIN, LORA, NESTPIPE, OXYGEN


def twin(syncd: Syncd, tmp_path: Path) -> Syncd:
    """A second syncd on the same fake arXiv, with its own SQLite database."""
    workdir = tmp_path / "harvest"
    workdir.mkdir()
    url = f"sqlite:///{workdir / 'syncd.sqlite3'}"
    return harvesting(Syncd(syncd.arxiv, url, workdir, syncd.capsys))


def assert_complete(syncd: Syncd) -> None:
    """The harvest completed: ``from`` is the day harvested, nothing is in progress."""
    state = Storage(syncd.database_url)
    try:
        assert state.harvests.state().from_date == DAY
        assert not state.harvests.state().in_progress
    finally:
        state.close()


_CHANGE_KEYS = {"event_type", "event_id", "author", "paper", "arxiv_id", "kinds"}


def test_same_story_both_ways(syncd: Syncd, tmp_path: Path) -> None:
    """A day of changes told by a cycle and by a harvest: the same events for tracked papers."""
    by_harvest = twin(syncd, tmp_path)
    for mode in (syncd, by_harvest):
        assert mode("sync").code == 0
    baseline = len(syncd.json("events"))
    assert len(by_harvest.json("events")) == baseline
    story(syncd.arxiv)
    cycled = syncd("sync")
    assert cycled.code == 0, cycled.err
    outcome = by_harvest("harvest", "--from", DAY.isoformat())
    assert outcome.code == 0, outcome.err
    # Each event is logged alike both ways: one paper_changed line, the same keys.
    for logged in (cycled.err, outcome.err):
        lines = [json.loads(line) for line in logged.splitlines() if '"paper_changed"' in line]
        assert lines
        assert all(line.keys() >= _CHANGE_KEYS for line in lines)
    api = told(syncd, baseline)
    assert told(by_harvest, baseline) == api
    papers = {NESTPIPE, FLOWTRAIN, LORA, FEDCG, OXYGEN, FLEXMARL, NEW_PAPER}
    assert {e[1] for e in api if e[0] != "author.review_needed"} == papers
    withdrawn = [e for e in api if e[1] == FLEXMARL]
    assert "withdrawn" in withdrawn[0][2] or "abstract" in withdrawn[0][2]
    # The namesake's paper is a candidate both ways, announced by both as held for review.
    for mode in (syncd, by_harvest):
        assert mode.papers()[NAMESAKES_PAPER]["status"] == "candidate"
    (review,) = [json.loads(e[3]) for e in api if e[0] == "author.review_needed"]
    assert review["author"]["candidate_ids"] == [NAMESAKES_PAPER]
    # NestPipe jumped two versions: the one between is backfilled both ways.
    versions = [h["version"] for h in syncd.json("history", NESTPIPE)]
    assert versions[-2:] == [versions[-3] + 1, versions[-3] + 2]
    assert [h["version"] for h in by_harvest.json("history", NESTPIPE)] == versions


def test_harvest_costs_pages_not_authors(syncd: Syncd) -> None:
    """The harvest's requests are its pages (and backfills), whatever it finds."""
    harvesting(syncd)
    assert syncd("sync").code == 0
    story(syncd.arxiv)
    syncd.arxiv.reset_log()
    assert syncd("harvest", "--from", DAY.isoformat()).code == 0
    oai = [r for r in syncd.arxiv.requests if r.path == "/oai"]
    assert len(oai) == 3  # 8 papers changed, 3 a page
    assert all("until" not in r.params for r in oai)
    assert_complete(syncd)


@pytest.mark.parametrize("counts", [True, False], ids=["2015-counts", "2025-no-counts"])
def test_progress_says_how_far_the_list_is_and_a_time_left_only_when_honest(
    syncd: Syncd, counts: bool
) -> None:
    """Each page's ``harvest_progress`` line: the list's records so far and its size when the
    token counts them, the datestamp reached; a time left only with the size, and only
    after ``HONEST_AFTER`` pages beyond the first."""
    harvesting(syncd)
    assert syncd("sync").code == 0
    story(syncd.arxiv)
    syncd.arxiv.oai.page_size = 1
    syncd.arxiv.oai.counts = counts
    outcome = syncd("harvest", "--from", DAY.isoformat())
    assert outcome.code == 0, outcome.err
    lines = [json.loads(line) for line in outcome.err.splitlines() if "harvest_progress" in line]
    assert [line["records"] for line in lines] == list(range(1, 9))
    assert {line["reached"] for line in lines} == {DAY.isoformat()}
    honest = HarvestReporter.HONEST_AFTER
    if counts:
        assert [(line["listed"], line["list_size"]) for line in lines] == [
            (n, 8) for n in range(1, 9)
        ]
        assert [line["seconds_left"] is None for line in lines] == [True] * honest + [False] * (
            8 - honest
        )
    else:
        assert {(line["listed"], line["list_size"], line["seconds_left"]) for line in lines} == {
            (None, None, None)
        }


def test_a_second_harvest_of_the_same_day_announces_nothing(syncd: Syncd) -> None:
    harvesting(syncd)
    assert syncd("sync").code == 0
    story(syncd.arxiv)
    assert syncd("harvest", "--from", DAY.isoformat()).code == 0
    before = syncd.counts()
    outcome = syncd("harvest")  # from the stored date: the same day again
    assert outcome.code == 0, outcome.err
    assert "ok, 0 events" in outcome.out
    assert syncd.counts()["events"] == before["events"]


def test_dry_run_stores_nothing(syncd: Syncd) -> None:
    harvesting(syncd)
    assert syncd("sync").code == 0
    story(syncd.arxiv)
    before = syncd.counts()
    outcome = syncd("harvest", "--from", DAY.isoformat(), "--dry-run")
    assert outcome.code == 0, outcome.err
    assert "8 records" in outcome.out and "nothing stored" in outcome.out
    assert syncd.counts() == before


def test_expired_token_restarts_from_from_without_doubling(syncd: Syncd) -> None:
    harvesting(syncd)
    assert syncd("sync").code == 0
    baseline = len(syncd.json("events"))
    story(syncd.arxiv)
    syncd.arxiv.inject(
        fa.body(
            b'<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
            b"<responseDate>2026-07-01T12:00:00Z</responseDate>"
            b'<error code="badResumptionToken">expired</error></OAI-PMH>',
            when=lambda p: "resumptionToken" in p,
        )
    )
    outcome = syncd("harvest", "--from", DAY.isoformat())
    assert outcome.code == 0, outcome.err
    events = told(syncd, baseline)
    assert len(events) == len(set(events))
    assert {e[1] for e in events} >= {NESTPIPE, NEW_PAPER}


def test_503_waits_and_goes_on(syncd: Syncd) -> None:
    harvesting(syncd)
    assert syncd("sync").code == 0
    story(syncd.arxiv)
    syncd.arxiv.inject(fa.status(503, retry_after=1, when=is_oai, times=2))
    outcome = syncd("harvest", "--from", DAY.isoformat())
    assert outcome.code == 0, outcome.err
    statuses = [r.status for r in syncd.arxiv.requests if r.path == "/oai"]
    assert statuses[:2] == [503, 503] and statuses[2:] == [200, 200, 200]


@pytest.mark.parametrize(
    "fault",
    [fa.truncate(0.7), fa.body(b"<OAI-PMH><ListRecords><record>"), fa.body(fa.BILLION_LAUGHS)],
    ids=["truncated", "malformed", "hostile"],
)
def test_a_bad_second_page_applies_nothing_of_itself(syncd: Syncd, fault: fa.Fault) -> None:
    """The first page stays applied, the bad one applies nothing; the next harvest resumes."""
    harvesting(syncd)
    assert syncd("sync").code == 0
    baseline = len(syncd.json("events"))
    story(syncd.arxiv)
    syncd.arxiv.inject(
        replace(fault, when=lambda params: "resumptionToken" in params),
    )
    outcome = syncd("harvest", "--from", DAY.isoformat())
    assert outcome.code == 1
    partial = told(syncd, baseline)
    assert len(partial) > 0
    state = Storage(syncd.database_url)
    try:
        assert state.harvests.state().in_progress
        assert state.harvests.state().pages == 1
    finally:
        state.close()
    assert syncd("harvest").code == 0
    full = told(syncd, baseline)
    assert set(partial) <= set(full)
    assert len(full) == len(set(full))


def _killed_harvest(syncd: Syncd, point: str, *args: str, context: str = "") -> None:
    """``syncd harvest ARGS`` in a process of its own, SIGKILLed at fault point ``point``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    env["SYNCD_FAULT_POINTS"] = point
    argv = [sys.executable, "-m", "syncd", "--config", str(syncd.config), "harvest", *args]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, timeout=120, check=False)
    assert done.returncode == -9, f"{context}not killed at {point}: {done.stderr.decode()}"


def _told_by_a_twin(syncd: Syncd, tmp_path: Path) -> tuple[Syncd, int, list[tuple[Any, ...]]]:
    """``syncd`` and a twin synced, then the story, harvested by the twin uninterrupted:
    the twin, the events before the story, and the story's events as the twin tells them."""
    reference = twin(syncd, tmp_path)
    harvesting(syncd)
    for mode in (syncd, reference):
        assert mode("sync").code == 0
    baseline = len(syncd.json("events"))
    story(syncd.arxiv)
    assert reference("harvest", "--from", DAY.isoformat()).code == 0
    return reference, baseline, told(reference, baseline)


# The named places on SQLite; PostgreSQL passes each of them in the random test below.
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    "point",
    [
        "harvest.page_fetched:2",  # mid-harvest: page 2 read, nothing of it written
        "store.harvest_page_written:2",  # mid-page: its writes done, not committed
        "store.harvest_page_committed:1",  # between pages: page 1 and its token committed
        "store.harvest_page_committed:3",  # the last page committed, before the backfill
    ],
)
def test_killed_and_resumed_loses_and_doubles_nothing(
    syncd: Syncd, tmp_path: Path, point: str
) -> None:
    """SIGKILLed anywhere, then resumed by a plain ``syncd harvest``: the events are exactly
    those of a harvest never interrupted, each once."""
    reference, baseline, expected = _told_by_a_twin(syncd, tmp_path)
    _killed_harvest(syncd, point, "--from", DAY.isoformat())
    outcome = syncd("harvest")
    assert outcome.code == 0, outcome.err
    assert told(syncd, baseline) == expected
    assert [h["version"] for h in syncd.json("history", NESTPIPE)] == [
        h["version"] for h in reference.json("history", NESTPIPE)
    ]
    assert_complete(syncd)


# Where a random kill lands: its fault point, and which passes of it (1-based, in the
# pages the killed process has left to apply) land there.
KILL_PLACES: dict[str, tuple[str, Callable[[int], range]]] = {
    "page read, nothing written": ("harvest.page_fetched", lambda left: range(1, left + 1)),
    "mid-page, not committed": ("store.harvest_page_written", lambda left: range(1, left + 1)),
    "between pages": ("store.harvest_page_committed", lambda left: range(1, left)),
    # The harvest is complete and ``from`` advanced; NestPipe's backfill is not done.
    "last page, before the backfill": (
        "store.harvest_page_committed",
        lambda left: range(left, left + 1),
    ),
}
# CI's draw: four kills, one at each place, the mid-page one on a page with an event
# (SYNCD_TEST_SEED or `make explore` draws others).
RANDOM_KILLS_SEED = 19
ONE_RECORD_PAGES = 8  # the story's records, one a page


def _harvest_state(syncd: Syncd) -> HarvestState:
    state = Storage(syncd.database_url)
    try:
        return state.harvests.state()
    finally:
        state.close()


def _draw_kill(rng: random.Random, places: list[str], left: int) -> tuple[str, str]:
    """The next kill (``point:pass``) and its place, when a harvest has ``left`` pages to
    apply: places come in shuffled rounds, every place before any twice."""
    if not places:
        places += rng.sample(sorted(KILL_PLACES), len(KILL_PLACES))
    place = next(p for p in places if KILL_PLACES[p][1](left))
    places.remove(place)
    point, passes = KILL_PLACES[place]
    return f"{point}:{rng.choice(passes(left))}", place


# Both databases: a harvest resumes from its stored progress,
# written in each dialect.
@pytest.mark.slow
@ON_BOTH_DATABASES
def test_killed_at_random_points_and_resumed_loses_and_doubles_nothing(
    syncd: Syncd, tmp_path: Path
) -> None:
    """A harvest of eight pages SIGKILLed 2 to 4 times in a row at seeded random places
    (reading a page, mid-page, between pages, before the backfill), each time resumed by a
    plain ``syncd harvest``, then run to its end: the events of a harvest never
    interrupted, each once, and the same histories.  After each kill no event is doubled
    or false, and none is lost once a harvest has completed."""
    seed = random_seed(RANDOM_KILLS_SEED)
    rng = random.Random(seed)
    context = f"seed {seed} (replay: SYNCD_TEST_SEED={seed}), kills"
    syncd.arxiv.oai.page_size = 1
    reference, baseline, expected = _told_by_a_twin(syncd, tmp_path)
    assert len(set(expected)) == len(expected) == 8  # 7 changes, 1 paper held for review
    kills: list[str] = []
    places: list[str] = []
    for attempt in range(rng.randint(2, 4)):
        state = _harvest_state(syncd)
        # A plain harvest resumes the one interrupted, else harvests the day again.
        left = ONE_RECORD_PAGES - state.pages if state.in_progress else ONE_RECORD_PAGES
        kill, place = _draw_kill(rng, places, left)
        kills.append(f"{kill} ({place})")
        args = ("--from", DAY.isoformat()) if attempt == 0 else ()
        _killed_harvest(syncd, kill, *args, context=f"{context} {kills}: ")
        so_far = told(syncd, baseline)
        assert Counter(so_far) <= Counter(expected), f"{context} {kills}: doubled or false"
        if _harvest_state(syncd).last_success_at is not None:
            assert so_far == expected, f"{context} {kills}: lost by a complete harvest"
    outcome = syncd("harvest")
    assert outcome.code == 0, f"{context} {kills}: {outcome.err}"
    assert told(syncd, baseline) == expected, f"{context} {kills}"
    history = [h["version"] for h in syncd.json("history", NESTPIPE)]
    assert history == [h["version"] for h in reference.json("history", NESTPIPE)], (
        f"{context} {kills}"
    )
    assert_complete(syncd)


# Both databases: the harvest's claim is a locked row (FOR UPDATE) and a
# backend pid on PostgreSQL, a file lock on SQLite.
@ON_BOTH_DATABASES
def test_one_replica_harvests_at_a_time(syncd: Syncd) -> None:
    """While another process holds the harvest, ``syncd harvest`` does nothing, its
    ``--from`` included; once let go, the next harvest runs."""
    harvesting(syncd)
    assert syncd("sync").code == 0
    story(syncd.arxiv)
    other = Storage(syncd.database_url)
    try:
        assert other.harvests.claim() is not None
        outcome = syncd("harvest", "--from", DAY.isoformat())
        assert outcome.code == 0, outcome.err
        assert "another replica is harvesting" in outcome.out
        assert other.harvests.state().from_date is None
        other.harvests.release()
    finally:
        other.close()
    outcome = syncd("harvest", "--from", DAY.isoformat())
    assert "ok, 8 events" in outcome.out  # 7 changes, and the namesake's paper held for review


# Issue 30, item 14: harvest mutations that every test let through.


@ON_BOTH_DATABASES  # issue 29/30's acceptance: on both databases
def test_the_first_set_completes_nothing_while_a_second_remains(syncd: Syncd) -> None:
    """With two ``[harvest] sets``, the first set's last page is not the harvest's: a second
    set that fails leaves the harvest in progress at that set, ``from`` where it was and no
    success recorded; the next harvest lists the second set and completes."""
    syncd.sections += f'\n[harvest]\nurl = "{syncd.arxiv.oai_url}"\nsets = ["cs", "physics"]\n'
    assert syncd("sync").code == 0
    baseline = len(syncd.json("events"))
    story(syncd.arxiv)
    physics = fa.status(500, times=3, when=lambda p: p.get("set") == "physics")
    syncd.arxiv.inject(physics)  # every attempt of the second set's first page
    assert syncd("harvest", "--from", DAY.isoformat()).code == 1
    state = _harvest_state(syncd)
    assert (state.in_progress, state.set_index, state.token) == (True, 1, None)
    assert state.last_success_at is None and state.from_date == DAY
    assert NESTPIPE in {e[1] for e in told(syncd, baseline)}  # the first set is applied
    assert NAMESAKES_PAPER not in syncd.papers()
    outcome = syncd("harvest")
    assert outcome.code == 0, outcome.err
    assert syncd.papers()[NAMESAKES_PAPER]["status"] == "candidate"
    assert_complete(syncd)


@ON_BOTH_DATABASES  # issue 29/30's acceptance: on both databases
def test_an_author_not_yet_synced_gets_nothing_from_a_harvest(syncd: Syncd) -> None:
    """A harvest files nothing for an author whose quiet first sync has not run: that sync
    is their baseline, and it announces their papers as one ``author.added``."""
    harvesting(syncd)
    assert syncd("sync").code == 0
    baseline = len(syncd.json("events"))
    assert syncd("authors", "add", "Marie Curie").code == 0
    story(syncd.arxiv)  # a new paper by Zhida Jiang and Marie Curie
    assert syncd("harvest", "--from", DAY.isoformat()).code == 0
    assert [p for p in syncd.json("papers") if p["author"] == "Marie Curie"] == []
    assert syncd("sync").code == 0
    hers = [e for e in syncd.json("events")[baseline:] if e["author"] == "Marie Curie"]
    assert [e["type"] for e in hers] == ["author.added"]


@ON_BOTH_DATABASES  # issue 29/30's acceptance: on both databases
def test_the_first_from_is_the_earliest_successful_cycle(syncd: Syncd) -> None:
    """The first harvest's ``from`` is the day the followed authors' earliest successful
    cycle started: before it, nothing is known of what arXiv changed."""
    harvesting(syncd)
    for _ in range(2):
        assert syncd("sync").code == 0
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.begin() as conn:
            runs = conn.scalars(sa.select(sync_runs_table.c.id).order_by(sync_runs_table.c.id))
            for run, day in zip(list(runs), (date(2026, 6, 20), date(2026, 6, 28)), strict=True):
                started = datetime.combine(day, datetime.min.time(), UTC)
                conn.execute(
                    sync_runs_table.update()
                    .where(sync_runs_table.c.id == run)
                    .values(started_at=started)
                )
    finally:
        engine.dispose()
    syncd.arxiv.reset_log()
    assert syncd("harvest", "--dry-run").code == 0
    asked = [r.params.get("from") for r in syncd.arxiv.requests if r.path == "/oai"]
    assert asked[:1] == ["2026-06-20"]
