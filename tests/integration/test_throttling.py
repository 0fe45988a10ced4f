"""arXiv throttling us: one cooldown per host for every replica and command, kept in the database.

The fake answers 429 to everything for a while, or to some requests; the
cooldown (syncd.domain.throttle) decides when anything may ask again.  What
is asserted of time are lower bounds that a busy machine can only widen: a
request never starts before the cooldown it read, so it never arrives before
it either, and a storm of a given length leaves room for so many tries.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from apscheduler.schedulers.background import BackgroundScheduler

from syncd.cli.daemon import _Daemon
from syncd.config import load_settings
from syncd.domain.throttle import Cooldown
from syncd.service.app import App
from syncd.sources.arxiv import arxiv_host
from syncd.storage import Storage
from syncd.storage.schema import arxiv_cooldowns_table, authors_table, sync_runs_table
from tests import fakearxiv as fa
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import FakeArxiv
from tests.helpers import eventually
from tests.integration.conftest import Syncd
from tests.integration.daemons import Daemon, start_replicas
from tests.integration.rewind import forget_backfilled
from tests.receiver import Receiver
from tests.scenario import AUTHOR, NESTPIPE, OXYGEN

# A storm's steps: 0.25, 0.5, 1, 2, then 4 s; past backoff_max (2 s), a cycle stops
# on the cooldown instead of sleeping through it, and is resumed when it ends.
FIRST, CAP = 0.25, 4.0


def _cooldown(syncd: Syncd) -> Cooldown:
    storage = Storage(syncd.database_url)
    try:
        return storage.cooldowns.read(arxiv_host(syncd.arxiv.url))
    finally:
        storage.close()


def _monotonic(moment: datetime | None) -> float:
    """``moment`` on this process's monotonic clock, which the fake's request log uses."""
    assert moment is not None
    return time.monotonic() + (moment - datetime.now(UTC)).total_seconds()


def _most_tries(seconds: float) -> int:
    """How many requests one sender can make in a storm of ``seconds``: each after the
    step in force, which doubles from FIRST to CAP with every throttle noted."""
    tries, elapsed, step = 1, 0.0, FIRST
    while elapsed + step <= seconds:
        tries, elapsed, step = tries + 1, elapsed + step, min(2 * step, CAP)
    return tries


def _metric(daemon: Daemon, name: str, host: str) -> float | None:
    """The value of ``name`` for ``host`` on the daemon's /metrics; None while it has none."""
    found = re.search(
        rf'^{name}\{{host="{re.escape(host)}"\}} (\S+)$', daemon.get("/metrics").text, re.M
    )
    return float(found.group(1)) if found is not None else None


# Both databases: on PostgreSQL two replicas share the cooldown (on SQLite there is one).
# The other tests here are commands obeying it; tests/integration/test_cooldowns.py holds
# its reads and writes, two processes at once included, to both databases.
@ON_BOTH_DATABASES
@pytest.mark.timeout(300)
def test_a_storm_of_429s_slows_every_replica_and_then_passes(
    syncd: Syncd, arxiv: FakeArxiv, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """Two replicas (on SQLite a daemon and `syncd sync` by hand) under a storm of 429s:
    each sends at most one request per cooldown step, nothing is removed or announced,
    the pages, /readyz and /metrics say arXiv throttles us, the cooldown outlives a
    restart, and syncing resumes by itself when the storm ends."""
    syncd.throttle_cooldown, syncd.throttle_cooldown_max = FIRST, CAP
    on_sqlite = syncd.database_url.startswith("sqlite")
    replicas = start_replicas(daemons, 1 if on_sqlite else 2, syncd, receiver)
    assert receiver.wait_for(7, timeout=60)
    papers, events = syncd.papers(), syncd.counts()["events"]
    host = arxiv_host(arxiv.url)

    storm = time.monotonic()
    arxiv.inject_always(fa.status(429))
    eventually(lambda: _cooldown(syncd).step == CAP, 60, "the cooldown at its cap")
    if on_sqlite:
        by_hand = syncd("sync", "--no-deliver")
        assert by_hand.code == 1
        assert "arXiv is throttling us" in by_hand.err
    daemon = replicas[0]
    assert "arXiv is throttling us" in daemon.get("/").text
    readyz = daemon.get("/readyz").json()["checks"]["arxiv"]
    assert readyz.startswith(f"arXiv is throttling us ({host}: ")
    # A process counts the 429s it received itself: with two replicas the one that
    # claimed the cycle took them, so the count is over both.
    throttled = [_metric(r, "syncd_arxiv_throttled_total", host) for r in replicas]
    assert sum(n or 0 for n in throttled) >= 1, throttled
    cooldown = _metric(daemon, "syncd_arxiv_cooldown_seconds", host)
    assert cooldown is not None and cooldown >= 0

    # Restarted into a cooldown (made long enough to outlast the restart): no request
    # starts before it ends.
    for replica in replicas:
        replica.stop()
    until = datetime.now(UTC) + timedelta(seconds=2 * CAP)
    _set_not_before(syncd.database_url, until)
    sent = len(arxiv.requests)
    replicas = start_replicas(daemons, len(replicas), syncd, receiver)
    eventually(lambda: len(arxiv.requests) > sent, 60, "a try after the restart")
    assert arxiv.requests[sent].time >= _monotonic(until) - 0.01
    time.sleep(3 * CAP)  # the storm goes on: three steps at the cap, a try each at most

    arxiv.clear_faults()
    throttled = [r for r in arxiv.requests if r.status == 429]
    # Two senders at a time, each after the step in force (the restart's wait included).
    assert len(throttled) <= 2 * _most_tries(time.monotonic() - storm)
    assert syncd.counts()["events"] == events
    assert syncd.papers() == papers

    arxiv.amend(NESTPIPE, journal_ref="Proc. VLDB 19, 2026")
    assert receiver.wait_for(8, timeout=60), "syncing resumed by itself"
    eventually(lambda: not _cooldown(syncd).throttling, 30, "the throttle over")
    for replica in replicas:
        replica.stop()


def _set_not_before(database_url: str, moment: datetime) -> None:
    engine = sa.create_engine(database_url)
    try:
        with engine.begin() as conn:
            conn.execute(arxiv_cooldowns_table.update().values(not_before=moment))
    finally:
        engine.dispose()


# Authors with a query of their own: a request each, in a batch each.
_OTHERS = ("Ada Lovelace", "Grace Hopper", "Emmy Noether")
_OWN_QUERIES = "".join(f'\n[[authors]]\nname = "{n}"\nquery = \'au:"{n}"\'\n' for n in _OTHERS)


class _FirstBatchOnly:
    """Throttles every request of a cycle but those of its first name query (both pages)."""

    def __init__(self) -> None:
        self.first: str | None = None

    def __call__(self, params: Mapping[str, str]) -> bool:
        query = params.get("search_query")
        if self.first is None and query is not None:
            self.first = query
        return query is None or query != self.first


def _synced_since(database_url: str, moment: datetime) -> set[str]:
    """The authors with a cycle that succeeded since ``moment``."""
    runs = sync_runs_table
    query = (
        sa.select(authors_table.c.name)
        .join(runs)
        .where(runs.c.status == "ok", runs.c.started_at > moment)
    )
    engine = sa.create_engine(database_url)
    try:
        with engine.connect() as conn:
            return {row.name for row in conn.execute(query)}
    finally:
        engine.dispose()


def _runs_of(database_url: str, name: str) -> int:
    engine = sa.create_engine(database_url)
    try:
        with engine.connect() as conn:
            query = (
                sa.select(sa.func.count())
                .select_from(sync_runs_table.join(authors_table))
                .where(authors_table.c.name == name)
            )
            return int(conn.scalar(query) or 0)
    finally:
        engine.dispose()


def _after_the_cooldown(syncd: Syncd) -> Callable[[], bool]:
    def ended() -> bool:
        state = _cooldown(syncd)
        return state.not_before is None or state.not_before <= datetime.now(UTC)

    return ended


@pytest.mark.slow
def test_a_cycle_stopped_by_throttling_leaves_the_rest_first_in_line(
    syncd: Syncd, arxiv: FakeArxiv
) -> None:
    """arXiv letting one name query through per cycle: the batch throttled stores nothing,
    the authors after it get no run and go first next time, so within a cycle per author
    every one has synced (in the first cycle's order, the last two would never)."""
    syncd.extra = _OWN_QUERIES
    # Past backoff_max (2 s): the cycle stops on the cooldown, as in a storm.
    syncd.throttle_cooldown, syncd.throttle_cooldown_max = 2.5, CAP
    assert syncd("sync").code == 0  # in the file's order: the scenario's, Ada, Grace, Emmy
    first_done = datetime.now(UTC)
    runs = {name: _runs_of(syncd.database_url, name) for name in (*_OTHERS, AUTHOR)}
    outcomes = []
    for _ in range(4):
        eventually(_after_the_cooldown(syncd), 30, "the cooldown over")
        arxiv.clear_faults()
        arxiv.inject_always(fa.status(429, when=_FirstBatchOnly()))
        outcomes.append(syncd("sync", "--no-deliver"))
        if len(outcomes) == 1:  # the scenario's synced, Ada throttled, Grace and Emmy left
            assert {n: _runs_of(syncd.database_url, n) - runs[n] for n in runs} == {
                AUTHOR: 1,
                "Ada Lovelace": 1,
                "Grace Hopper": 0,
                "Emmy Noether": 0,
            }
    assert [o.code for o in outcomes] == [1, 1, 1, 1]
    assert "Ada Lovelace: FAILED: arXiv is throttling us" in outcomes[0].err
    assert "Emmy Noether: FAILED: not synced yet: arXiv is throttling us" in outcomes[0].err
    assert _synced_since(syncd.database_url, first_done) == {*_OTHERS, AUTHOR}


def test_a_harvest_stopped_by_throttling_resumes_from_its_token(
    syncd: Syncd, arxiv: FakeArxiv
) -> None:
    """A harvest whose next page is throttled stops with the first page applied, saying
    so; run again, it asks for the stored token's page once the cooldown ended."""
    syncd.sections += f'\n[harvest]\nenabled = true\nurl = "{arxiv.oai_url}"\n'
    assert syncd("sync").code == 0
    arxiv.inject_always(fa.status(429, when=lambda params: "resumptionToken" in params))
    day = arxiv.oai.today.isoformat()
    stopped = syncd("harvest", "--from", day)
    assert stopped.code == 1
    assert "arXiv is throttling us" in stopped.err
    assert "the pages applied are stored: run it again to resume" in stopped.err
    cooled_until = _cooldown(syncd).not_before
    arxiv.clear_faults()
    asked = len(arxiv.requests)
    resumed = syncd("harvest")
    assert resumed.code == 0, resumed.err
    first = arxiv.requests[asked]
    assert "resumptionToken" in first.params
    assert first.time >= _monotonic(cooled_until) - 0.01
    assert not _cooldown(syncd).throttling


def test_a_backfill_waits_for_the_cooldown_and_resumes(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """`syncd backfill` throttled stops, stores what arrived and says when arXiv may be
    asked; run again within the cooldown it asks nothing; after it, it finishes."""
    # Past backoff_max (2 s): not waited out in place; and long enough that the second
    # run starts within it on a loaded machine (2.5 s was not, beside parallel workers).
    syncd.throttle_cooldown, syncd.throttle_cooldown_max = 6.0, 6.0
    assert syncd("sync").code == 0
    forget_backfilled(syncd.database_url)
    arxiv.inject(fa.status(429))
    stopped = syncd("backfill")
    assert stopped.code == 1
    assert "arXiv is throttling us" in stopped.err
    assert "run it again to resume" in stopped.err
    asked = len(arxiv.requests)
    assert syncd("backfill").code == 1
    assert len(arxiv.requests) == asked  # the cooldown is the database's, not the process's
    eventually(_after_the_cooldown(syncd), 30, "the cooldown over")
    assert syncd("backfill").code == 0
    assert any(f"{OXYGEN}v1" in r.params.get("id_list", "") for r in arxiv.requests[asked:])


def test_the_daemon_resumes_a_throttled_harvest_when_the_cooldown_ends(
    syncd: Syncd, arxiv: FakeArxiv
) -> None:
    """`syncd run`'s harvest stopped by a cooldown past backoff_max is run again by a job
    at the cooldown's end (not at tomorrow's cron), and goes on from its token."""
    syncd.sections += f'\n[harvest]\nenabled = true\nurl = "{arxiv.oai_url}"\n'
    syncd.throttle_cooldown, syncd.throttle_cooldown_max = 2.5, CAP
    assert syncd("sync").code == 0
    # From the fake's today: the next harvest starts there too, and its pages come again.
    assert syncd("harvest", "--from", arxiv.oai.today.isoformat()).code == 0
    app = App.open(load_settings(syncd.config))
    daemon = _Daemon(app)
    scheduler = daemon._scheduler = BackgroundScheduler(timezone=UTC)
    scheduler.start(paused=True)  # the test runs the job itself
    try:
        arxiv.inject_always(fa.status(429, when=lambda params: "resumptionToken" in params))
        daemon.harvest()
        job = scheduler.get_job("harvest_resume")
        assert job is not None
        assert job.next_run_time == _cooldown(syncd).not_before
        assert app.storage.harvests.state().in_progress
        arxiv.clear_faults()
        eventually(_after_the_cooldown(syncd), 30, "the cooldown over")
        asked = len(arxiv.requests)
        job.func()
        assert "resumptionToken" in arxiv.requests[asked].params
        assert not app.storage.harvests.state().in_progress
    finally:
        scheduler.shutdown(wait=False)
        daemon._client.close()
        daemon._harvest_client.close()
        daemon._dispatcher.close(wait=True)
        app.close()
