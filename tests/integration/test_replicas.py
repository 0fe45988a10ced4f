"""Several `syncd run` replicas on one PostgreSQL; one only on SQLite."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
import time
from datetime import timedelta

import pytest
import sqlalchemy as sa

from syncd.domain.model import SyncStats
from syncd.domain.vocabulary import RunStatus
from syncd.storage import Storage
from syncd.storage.migrate import upgrade
from syncd.storage.schema import events_table, papers_table, revisions_table, sync_runs_table
from tests import fakearxiv as fa
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import FakeArxiv
from tests.helpers import eventually
from tests.integration.conftest import Syncd
from tests.integration.daemons import Daemon, start_replicas
from tests.integration.pacing import PacerTurns
from tests.receiver import Receiver
from tests.scenario import NESTPIPE


def _rows(url: str, query: sa.Select[tuple[object, ...]]) -> list[sa.Row[tuple[object, ...]]]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return list(conn.execute(query))
    finally:
        engine.dispose()


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_three_replicas_do_the_work_once(
    syncd: Syncd, arxiv: FakeArxiv, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """Three replicas: no doubled revision, no event twice, and a kill mid-cycle stalls nothing."""
    replicas = start_replicas(daemons, 3, syncd, receiver)
    assert receiver.wait_for(7, timeout=30)
    arxiv.amend(NESTPIPE, journal_ref="Proc. VLDB 19, 2026")
    assert receiver.wait_for(8, timeout=20)

    # Slow every request down so a cycle is surely in flight, then kill its replica.
    arxiv.inject_always(fa.timeout(0.4))
    running = sync_runs_table.c.status == "running"

    def a_cycle_runs() -> bool:
        return bool(_rows(syncd.database_url, sa.select(sync_runs_table.c.id).where(running)))

    eventually(a_cycle_runs, 20, "a cycle in flight")
    (cycle,) = _rows(syncd.database_url, sa.select(sync_runs_table.c.id).where(running))[-1:]
    marker = re.compile(rf'"cycle": {cycle.id}[,}}]')
    eventually(lambda: any(marker.search(d.log.read_text()) for d in replicas), 10, "its log line")
    victim = next(d for d in replicas if marker.search(d.log.read_text()))
    victim.kill()
    arxiv.clear_faults()
    arxiv.amend(NESTPIPE, doi="10.14778/1234567")
    assert receiver.wait_for(9, timeout=20), "the survivors go on"
    for survivor in (d for d in replicas if d is not victim):
        survivor.stop()

    delivered = [r.msg_id for r in receiver.delivered]
    events = _rows(syncd.database_url, sa.select(events_table.c.id, events_table.c.type))
    assert len(delivered) == len(set(delivered)) == len(events) == 9
    assert sorted(e.type for e in events) == ["paper.linked"] * 7 + ["paper.revised"] * 2

    revisions = _rows(
        syncd.database_url,
        sa.select(
            revisions_table.c.paper_id, revisions_table.c.seq, revisions_table.c.record_hash
        ).order_by(revisions_table.c.paper_id, revisions_table.c.seq),
    )
    for _, group in itertools.groupby(revisions, key=lambda r: r.paper_id):
        hashes = [r.record_hash for r in group]
        assert all(a != b for a, b in itertools.pairwise(hashes)), "a revision was doubled"
    nest = _rows(
        syncd.database_url,
        sa.select(sa.func.count())
        .select_from(revisions_table.join(papers_table))
        .where(papers_table.c.arxiv_id == NESTPIPE),
    )
    assert nest[0][0] == 4  # the seed, the link, the journal ref, the DOI

    # A slot runs once: no run starts within the claim window (interval / 2) of a
    # run that claimed it.  Failed and abandoned runs claim nothing (storage/runs.py),
    # so a survivor may take the killed replica's slot at once.
    runs = _rows(
        syncd.database_url,
        sa.select(sync_runs_table.c.started_at, sync_runs_table.c.status).order_by(
            sync_runs_table.c.started_at
        ),
    )
    assert {r.status for r in runs} <= {RunStatus.OK, RunStatus.FAILED, RunStatus.ABANDONED}
    claimed = [r.started_at for r in runs if r.status == RunStatus.OK]
    for run in runs:
        before = [t for t in claimed if t < run.started_at]
        if before:
            gap = (run.started_at - before[-1]).total_seconds()
            assert gap >= 0.5 - 0.01, f"two replicas ran one slot ({gap:.3f} s apart)"


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_refuses_a_second_replica(
    syncd: Syncd, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """A second `syncd run` on the same SQLite file exits 2 and says why."""
    daemons.append(Daemon(syncd, receiver))
    second = subprocess.run(
        [sys.executable, "-m", "syncd", "--config", str(syncd.config), "run"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"SYNCD_HTTP_PORT": "0", "PATH": "/usr/bin:/bin"},
    )
    assert second.returncode == 2
    assert "SQLite supports one replica" in second.stderr


# Authors with a query of their own: a request each, so every replica has requests to make.
_BUSY_AUTHORS = "".join(
    f'\n[[authors]]\nname = "{name}"\nquery = \'au:"{name}"\'\n'
    for name in ("Ada Lovelace", "Grace Hopper", "Emmy Noether", "Lise Meitner", "Kurt Goedel")
)
INTERVAL = 0.5


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_replicas_share_one_politeness_budget(
    syncd: Syncd,
    arxiv: FakeArxiv,
    receiver: Receiver,
    daemons: list[Daemon],
    pacer_turns: PacerTurns,
) -> None:
    """Three replicas take one turn per interval together, by the database's clock, each
    request a turn of its own; a replica killed with a request open stops nobody.

    The turns are the database's stamps (tests/integration/pacing.py): arrivals at the
    fake come a busy machine's scheduling after them, closer or further apart.
    """
    syncd.request_interval = INTERVAL
    syncd.extra = _BUSY_AUTHORS
    # Requests in flight for a while, so a replica is killed with one open.
    arxiv.inject_always(fa.timeout(0.3))
    replicas = start_replicas(daemons, 3, syncd, receiver)
    eventually(lambda: len(arxiv.requests) >= 12, 60, "the replicas at work")

    running = sync_runs_table.c.status == "running"
    (cycle,) = _rows(syncd.database_url, sa.select(sync_runs_table.c.id).where(running))[-1:]
    marker = re.compile(rf'"cycle": {cycle.id}[,}}]')
    eventually(lambda: any(marker.search(d.log.read_text()) for d in replicas), 10, "its log line")
    victim = next(d for d in replicas if marker.search(d.log.read_text()))
    victim.kill()
    killed_at = time.monotonic()
    eventually(lambda: sum(r.time > killed_at for r in arxiv.requests) >= 8, 30, "survivors")
    for survivor in (d for d in replicas if d is not victim):
        survivor.stop()

    # A killed replica may have taken a turn it never used: never fewer turns than requests.
    assert len(pacer_turns.times()) >= len(arxiv.requests)
    assert min(pacer_turns.gaps()) >= INTERVAL, "two turns closer than the interval"


def test_a_running_cycle_of_a_live_process_keeps_its_claim(database_url: str) -> None:
    """A run its process still runs is neither abandoned nor overtaken by another
    process's start; once it failed, it claims the author's cycle no more."""
    first, second = Storage(database_url), Storage(database_url)
    try:
        upgrade(first.engine)
        running = first.runs.start("Ada Lovelace", unless_started_within=1800)
        assert running is not None
        assert second.runs.start("Ada Lovelace", unless_started_within=1800) is None
        assert [run.status for run in second.runs.recent()] == [RunStatus.RUNNING]
        first.runs.fail(running, "arXiv answered 500", SyncStats())
        assert second.runs.start("Ada Lovelace", unless_started_within=1800) is not None
    finally:
        first.close()
        second.close()


HOUR = 3600.0


@pytest.mark.parametrize(
    ("window", "age", "claimed", "first"),
    [
        # Older than half an hourly period: no claim, but the run is live and stays so.
        pytest.param(1800.0, 2000.0, False, RunStatus.RUNNING, id="past-the-window"),
        # A sweep slot's window (days): a live run two hours old still claims it.
        pytest.param(3 * 86400.0, 2 * HOUR, True, RunStatus.RUNNING, id="within-a-long-window"),
        # Past both the window and an hour: stuck, abandoned, and the author runs again.
        pytest.param(1800.0, HOUR + 100, False, RunStatus.ABANDONED, id="stale"),
        pytest.param(3 * 86400.0, 4 * 86400.0, False, RunStatus.ABANDONED, id="stale-sweep"),
    ],
)
@ON_BOTH_DATABASES  # issue 29/30's acceptance: on both databases
def test_a_live_run_is_abandoned_only_when_stale(
    database_url: str, window: float, age: float, claimed: bool, first: RunStatus
) -> None:
    """A run its process still runs is marked abandoned only past both the claim window and
    STALE_RUN_SECONDS (an hour); before that another process's start leaves it running, and
    is refused while the run is within the window."""
    first_process, second_process = Storage(database_url), Storage(database_url)
    try:
        upgrade(first_process.engine)
        running = first_process.runs.start("Ada Lovelace", unless_started_within=window)
        assert running is not None
        engine = sa.create_engine(database_url)
        try:
            with engine.begin() as conn:
                this_run = sync_runs_table.c.id == running
                started = conn.scalar(sa.select(sync_runs_table.c.started_at).where(this_run))
                aged = started - timedelta(seconds=age)
                conn.execute(sync_runs_table.update().where(this_run).values(started_at=aged))
        finally:
            engine.dispose()
        second = second_process.runs.start("Ada Lovelace", unless_started_within=window)
        assert (second is None) is claimed
        statuses = {run.id: run.status for run in second_process.runs.recent()}
        assert statuses[running] == first
    finally:
        first_process.close()
        second_process.close()
