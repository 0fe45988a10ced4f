"""While harvesting, `syncd run` sweeps each author once per slot of the sweep interval.

A real daemon cycling every second against the fake arXiv: after the first
cycle (every author synced a week ago, so every sweep due), only the authors
whose slot began since their last sweep get a name query; a sweep that failed is tried
again at the next cycle; an author swept in its slot whose own feed is due
has that feed read alone, and the authors left to the harvest cost nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from syncd.config import load_settings
from syncd.domain.cadence import sweep_slot
from syncd.service import sync
from syncd.service.app import App
from syncd.service.sync import sweep_all
from syncd.storage import Storage
from syncd.storage.migrate import upgrade
from syncd.storage.schema import authors_table, sync_runs_table
from tests import fakearxiv as fa
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import AUTHOR_FEED_PREFIX, FakeArxiv, make_record
from tests.helpers import eventually
from tests.integration.conftest import Syncd
from tests.integration.daemons import Daemon, start_replicas
from tests.receiver import Receiver
from tests.scenario import AUTHOR

WEEK = timedelta(days=7)
WEEK_S = WEEK.total_seconds()
ORCID = "0000-0002-7970-7855"
# Swept again in the test (their runs are moved a week back), left to the harvest, and
# left to the harvest but with an own feed due.
SWEPT = (AUTHOR, "Ada Lovelace")
RESTING = "Emmy Noether"
FEEDING = "Grace Hopper"


def _configure(syncd: Syncd) -> None:
    """Four authors, harvesting (on a cron that does not fire during the test)."""
    syncd.extra = f"""
[[authors]]
name = "{SWEPT[1]}"

[[authors]]
name = "{RESTING}"

[[authors]]
name = "{FEEDING}"
orcid = "{ORCID}"

[harvest]
enabled = true
url = "{syncd.arxiv.oai_url}"
cron = "0 0 1 1 *"
"""


def _publish(arxiv: FakeArxiv, number: int, author: str) -> str:
    arxiv_id = f"2611.{number:05d}"
    arxiv.publish(make_record(arxiv_id, authors=(author, "Charles Babbage")))
    return arxiv_id


def _runs(syncd: Syncd) -> dict[str, list[str]]:
    """Each author's runs' statuses, oldest first."""
    storage = Storage(syncd.database_url)
    try:
        recent = storage.runs.recent(limit=100)
    finally:
        storage.close()
    runs: dict[str, list[str]] = {}
    for run in reversed(recent):
        runs.setdefault(run.author, []).append(run.status)
    return runs


def _tracked(syncd: Syncd) -> set[str]:
    return {p["arxiv_id"] for p in syncd.papers().values() if p["status"] == "tracked"}


def _synced_a_week_ago(syncd: Syncd) -> None:
    """Every author's first sync, by hand (while harvesting, a new author's baseline is
    otherwise a harvest pass's), moved a week back: every sweep is due."""
    assert syncd("sync").code == 0
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.begin() as conn:
            runs = sync_runs_table
            for run_id, started_at in conn.execute(sa.select(runs.c.id, runs.c.started_at)).all():
                update = runs.update().where(runs.c.id == run_id)
                conn.execute(update.values(started_at=started_at - WEEK))
    finally:
        engine.dispose()


def _slots_pass(syncd: Syncd) -> None:
    """A week passes for the ``SWEPT`` authors' runs (their slot began since), and the
    ``FEEDING`` author's feed was read three days ago (due again), in one transaction."""
    runs, authors = sync_runs_table, authors_table
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.begin() as conn:
            swept = conn.execute(
                sa.select(runs.c.id, runs.c.started_at)
                .join(authors)
                .where(authors.c.name.in_(SWEPT))
            ).all()
            for run_id, started_at in swept:
                update = runs.update().where(runs.c.id == run_id)
                conn.execute(update.values(started_at=started_at - WEEK))
            feeding = authors.c.name == FEEDING
            read = conn.scalar(sa.select(authors.c.feed_fetched_at).where(feeding))
            earlier = read - timedelta(days=3)
            conn.execute(authors.update().where(feeding).values(feed_fetched_at=earlier))
    finally:
        engine.dispose()


def _name_queries(arxiv: FakeArxiv) -> list[str]:
    """The name queries arXiv answered from their first page (later pages are the same query)."""
    return [
        r.params["search_query"]
        for r in arxiv.requests
        if "search_query" in r.params and r.params.get("start", "0") == "0"
    ]


def _sorted_lines(daemon: Daemon) -> list[Mapping[str, object]]:
    """The daemon's ``sweeps_sorted`` lines.

    APScheduler's own warnings (a cycle longer than the 1 s interval) are not
    JSON, and may land at the end of one of syncd's lines.
    """
    lines = daemon.log.read_text().splitlines()
    decode = json.JSONDecoder().raw_decode
    return [decode(line)[0] for line in lines if '"event": "sweeps_sorted"' in line]


def test_only_the_due_sweeps_and_feeds_are_read(
    syncd: Syncd, arxiv: FakeArxiv, receiver: Receiver, daemons: list[Daemon]
) -> None:
    _configure(syncd)
    arxiv.claim(ORCID)
    first = [_publish(arxiv, i, name) for i, name in enumerate((*SWEPT[1:], RESTING, FEEDING))]
    _synced_a_week_ago(syncd)
    daemon = Daemon(syncd, receiver, interval=1)
    daemons.append(daemon)
    everyone = {*SWEPT, RESTING, FEEDING}
    swept = {name: ["ok", "ok"] for name in everyone}  # the sync a week ago, and the sweep
    eventually(lambda: _runs(syncd) == swept, 30, "every author's sweep")
    eventually(lambda: len(_sorted_lines(daemon)) >= 3, 30, "cycles with nothing due")
    first_cycle, *later = _sorted_lines(daemon)
    assert (first_cycle["due"], first_cycle["not_due"]) == (4, 0)
    assert all((line["due"], line["not_due"], line["feeds"]) == (0, 4, 0) for line in later)

    # A week later for the SWEPT authors; a new paper each for three authors, one claimed.
    swept_paper = _publish(arxiv, 11, SWEPT[1])
    resting_paper = _publish(arxiv, 12, RESTING)
    claimed_paper = _publish(arxiv, 13, FEEDING)
    arxiv.claim(ORCID, claimed_paper)
    # The first sweep of the slot fails (every try answers 500): the next cycle tries again.
    arxiv.inject(fa.status(500, times=3, when=lambda p: SWEPT[1] in p.get("search_query", "")))
    arxiv.reset_log()
    _slots_pass(syncd)
    eventually(lambda: claimed_paper in _tracked(syncd), 30, "the claimed paper, read alone")
    eventually(lambda: swept_paper in _tracked(syncd), 30, "the swept author's new paper")
    cycles = len(_sorted_lines(daemon))
    eventually(lambda: len(_sorted_lines(daemon)) >= cycles + 2, 30, "two cycles more")
    daemon.stop()

    assert set(first) < _tracked(syncd)
    assert resting_paper not in _tracked(syncd)  # left to the harvest
    queries = _name_queries(arxiv)
    assert queries and all(q == f'au:"{SWEPT[0]}" OR au:"{SWEPT[1]}"' for q in queries)
    feeds = [r for r in arxiv.requests if r.path.startswith(AUTHOR_FEED_PREFIX)]
    assert len(feeds) == 1
    runs = _runs(syncd)
    # The first sync (by hand), the first sweep, then the slot's failed and good sweeps.
    failed_then_ok = ["ok", "ok", "failed", "ok"]
    assert {name: runs[name] for name in SWEPT} == dict.fromkeys(SWEPT, failed_then_ok)
    assert runs[FEEDING] == ["ok", "ok", "ok"]  # its sync, its sweep, then its feed alone
    assert runs[RESTING] == ["ok", "ok"]


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_replicas_sweep_each_slot_once(
    syncd: Syncd, arxiv: FakeArxiv, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """Two harvesting replicas started together: every author is swept once in its slot."""
    _configure(syncd)
    arxiv.claim(ORCID)
    for i, name in enumerate((*SWEPT[1:], RESTING, FEEDING)):
        _publish(arxiv, i, name)
    _synced_a_week_ago(syncd)
    arxiv.reset_log()
    replicas = start_replicas(daemons, 2, syncd, receiver)
    everyone = {*SWEPT, RESTING, FEEDING}
    swept = {name: ["ok", "ok"] for name in everyone}  # the sync a week ago, and the sweep
    eventually(lambda: _runs(syncd) == swept, 30, "every author's sweep")
    for replica in replicas:
        eventually(lambda r=replica: len(_sorted_lines(r)) >= 3, 30, "cycles of both replicas")
    for replica in replicas:
        replica.stop()
    assert _runs(syncd) == swept
    queried = [name for q in _name_queries(arxiv) for name in everyone if f'"{name}"' in q]
    assert sorted(queried) == sorted(everyone)


def _sweep(syncd: Syncd) -> None:
    """One cycle while harvesting, as `syncd run`'s, in this process."""
    app = App.open(load_settings(syncd.config))
    try:
        upgrade(app.storage.engine)
        with app.arxiv_client() as client:
            settings = app.settings
            sweep_all(
                app.storage,
                client,
                settings.configured_authors,
                settings.sync,
                sweep_interval=WEEK_S,
            )
    finally:
        app.close()


@ON_BOTH_DATABASES  # issue 29/30's acceptance: on both databases
def test_a_feed_only_cycle_past_the_next_slots_start_leaves_the_slot_to_its_sweep(
    syncd: Syncd, arxiv: FakeArxiv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cycles were sorted just before the author's next slot began (sweep not due, own feed
    due); the feed-only cycle, reached after it began, does not run: it would claim the
    new slot, and that slot's sweep would be skipped.  The next cycle sweeps."""
    syncd.extra = f'orcid = "{ORCID}"'
    arxiv.claim(ORCID)
    _sweep(syncd)
    assert _runs(syncd) == {AUTHOR: ["ok"]}
    # The slot began a minute after the author's last sweep; the feed is three days old.
    slot = sweep_slot(AUTHOR, datetime.now(UTC), WEEK_S)
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.begin() as conn:
            conn.execute(sync_runs_table.update().values(started_at=slot - timedelta(minutes=1)))
            read = authors_table.update().where(authors_table.c.name == AUTHOR)
            conn.execute(read.values(feed_fetched_at=slot - timedelta(days=3)))
    finally:
        engine.dispose()
    arxiv.reset_log()

    # The round read the clock a second before the slot began, and its feeds come two
    # seconds later, after it began; the next round reads the clock as it is.
    readings: list[sync._Clock] = []
    now = sync._Clock.read

    def before_the_slot() -> sync._Clock:
        first = sync._Clock(slot - timedelta(seconds=1), time.monotonic() - 2.0)
        readings.append(now() if readings else first)
        return readings[-1]

    monkeypatch.setattr(sync._Clock, "read", before_the_slot)
    _sweep(syncd)
    assert len(readings) == 1  # once a round: the sorting's, before the slot
    assert _runs(syncd) == {AUTHOR: ["ok"]}
    assert arxiv.requests == []

    _sweep(syncd)
    assert _runs(syncd) == {AUTHOR: ["ok", "ok"]}
    assert _name_queries(arxiv) == [f'au:"{AUTHOR}"']
    assert [r.path for r in arxiv.requests if r.path.startswith(AUTHOR_FEED_PREFIX)] == [
        f"{AUTHOR_FEED_PREFIX}{ORCID}.atom"
    ]  # the sweep read the feed the skipped cycle left
