"""A harvest and the cycles of the same authors, at the same time (issue 30, items 2 and 3).

The races are real: one writer is a ``syncd`` process stopped (SIGSTOP, the
``:stop`` action of ``syncd.faults``) between its plan and its apply, the other
commits the same change meanwhile, then the first goes on.  One change is one
event and one revision, whichever commits first.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from syncd.cli import daemon as daemon_module
from syncd.config import load_settings
from syncd.service.app import App
from syncd.service.harvest import HarvestResult
from syncd.storage import Storage
from syncd.storage.schema import papers_table, revisions_table
from tests.conftest import BOTH_DATABASES, database_for
from tests.helpers import ROOT, eventually
from tests.integration.conftest import Syncd
from tests.integration.harvests import DAY, harvesting, story, told
from tests.scenario import NESTPIPE


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: the two writers race for the author's row lock and write sequence,
    and PostgreSQL's locks (SELECT ... FOR UPDATE) are not SQLite's whole-database writer
    lock."""
    return database_for(request)


JOURNAL = "J. Pipelined Systems 1 (2026)"


def _state(pid: int) -> str:
    """The process's state letter from /proc (``T``: stopped)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0]


@contextmanager
def stopped_at(syncd: Syncd, point: str, *args: str) -> Iterator[Path]:
    """``syncd ARGS`` in its own process, stopped at fault point ``point`` (first pass) for
    the body of the ``with``; then continued, and it must exit 0.  Yields its log."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    env["SYNCD_FAULT_POINTS"] = f"{point}:1:stop"
    log = syncd.workdir / f"stopped-{args[0]}.log"
    argv = [sys.executable, "-m", "syncd", "--config", str(syncd.config), *args]
    with log.open("w") as out:
        process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:

        def stopped() -> bool:
            assert process.poll() is None, log.read_text()[-3000:]
            return _state(process.pid) == "T"

        eventually(stopped, 60, f"`syncd {args[0]}` stopped at {point}")
        yield log
        process.send_signal(signal.SIGCONT)
        assert process.wait(timeout=120) == 0, log.read_text()[-3000:]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def nestpipe_hashes(syncd: Syncd) -> list[str]:
    """NestPipe's revision hashes, in order."""
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.connect() as conn:
            query = (
                sa.select(revisions_table.c.record_hash)
                .join(papers_table)
                .where(papers_table.c.arxiv_id == NESTPIPE)
                .order_by(revisions_table.c.seq)
            )
            return list(conn.scalars(query))
    finally:
        engine.dispose()


def amended(syncd: Syncd) -> int:
    """``[harvest]`` on and a first sync; then arXiv records NestPipe's journal on ``DAY``.
    Returns the events before the change."""
    harvesting(syncd)
    assert syncd("sync").code == 0
    baseline = len(syncd.json("events"))
    syncd.arxiv.oai.today = DAY
    syncd.arxiv.amend(NESTPIPE, journal_ref=JOURNAL)
    return baseline


def told_once(syncd: Syncd, baseline: int) -> None:
    """The change is one ``paper.revised`` and one revision, whoever stored it."""
    events = told(syncd, baseline)
    assert [(e[0], e[1], e[2]) for e in events] == [("paper.revised", NESTPIPE, ("journal_ref",))]
    hashes = nestpipe_hashes(syncd)
    assert all(a != b for a, b in pairwise(hashes)), "a revision was doubled"


def test_a_cycle_stores_the_change_while_a_harvest_page_waits_to_apply(syncd: Syncd) -> None:
    """A harvest planned its page, a ``syncd sync`` stored the same change, then the page is
    applied: it is planned again and announces nothing more."""
    baseline = amended(syncd)
    with stopped_at(syncd, "harvest.page_planned", "harvest", "--from", DAY.isoformat()) as log:
        assert syncd("sync").code == 0
        told_once(syncd, baseline)
    told_once(syncd, baseline)
    assert "harvest_page_replanned" in log.read_text()


def test_a_harvest_stores_the_change_while_a_cycle_waits_to_apply(syncd: Syncd) -> None:
    """A cycle planned its writes, a harvest stored the same change, then the cycle applies:
    it is planned again and announces nothing more."""
    baseline = amended(syncd)
    with stopped_at(syncd, "sync.cycle_planned", "sync") as log:
        outcome = syncd("harvest", "--from", DAY.isoformat())
        assert outcome.code == 0, outcome.err
        told_once(syncd, baseline)
    told_once(syncd, baseline)
    assert "cycle_replanned" in log.read_text()


def test_cycles_run_while_the_daemon_harvests(
    syncd: Syncd, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``syncd run``'s harvest holds no cycle back: with a harvest stopped halfway through
    its pages, a scheduled cycle starts and ends; then the harvest completes."""
    harvesting(syncd)
    assert syncd("sync").code == 0
    story(syncd.arxiv)
    syncd.arxiv.oai.page_size = 1
    halfway, go_on, cycled = threading.Event(), threading.Event(), threading.Event()

    def paused(result: HarvestResult) -> None:
        if result.pages == 1:
            halfway.set()
            go_on.wait(60)

    harvest, sync_all = daemon_module.harvest, daemon_module.sync_all

    def harvesting_halfway(*args: Any, **kwargs: Any) -> HarvestResult:
        return harvest(*args, since=DAY, on_page=paused, **kwargs)

    def cycling(*args: Any, **kwargs: Any) -> Any:
        cycled.set()
        return sync_all(*args, **kwargs)

    monkeypatch.setattr(daemon_module, "harvest", harvesting_halfway)
    monkeypatch.setattr(daemon_module, "sync_all", cycling)
    app = App.open(load_settings(syncd.config))
    daemon = daemon_module._Daemon(app)
    harvester = threading.Thread(target=daemon.harvest)
    try:
        harvester.start()
        assert halfway.wait(60), "the harvest's first page"
        cycle = threading.Thread(target=daemon.cycle)
        cycle.start()
        cycle.join(30)
        assert cycled.is_set() and not cycle.is_alive(), "the cycle waited for the harvest"
        assert app.storage.harvests.state().claimed_at is not None  # still harvesting
    finally:
        go_on.set()
        harvester.join(60)
        for client in (daemon._client, daemon._harvest_client):
            client.close()
        daemon._dispatcher.close()
        app.close()
    storage = Storage(syncd.database_url)
    try:
        state = storage.harvests.state()
    finally:
        storage.close()
    assert state.from_date == DAY and not state.in_progress and state.pages == 8
