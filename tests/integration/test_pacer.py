"""The arXiv politeness budget replicas share through PostgreSQL (syncd.storage.pacer)."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from syncd.migrate import upgrade
from syncd.storage import SharedPacer, Storage
from syncd.storage.pacer import SEND_MARGIN
from syncd.storage.schema import arxiv_pacer_table

ON_POSTGRES = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
INTERVAL = 0.5


@pytest.fixture
def replicas(database_url: str) -> Iterator[list[SharedPacer]]:
    """Three storages on one database, as three replicas open it; their shared pacers."""
    storages = [Storage(database_url) for _ in range(3)]
    upgrade(storages[0].engine)
    try:
        pacers = [s.pacer for s in storages]
        assert all(p is not None for p in pacers)
        yield [p for p in pacers if p is not None]
    finally:
        for storage in storages:
            storage.close()


@ON_POSTGRES
def test_a_turn_is_taken_once_per_interval_across_replicas(replicas: list[SharedPacer]) -> None:
    """The first replica takes the turn; the others, asking at once, learn what is left of it."""
    first, second, third = replicas
    assert first.try_take(INTERVAL) == 0.0
    assert 0.4 < second.try_take(INTERVAL) <= INTERVAL + SEND_MARGIN
    assert 0.4 < third.try_take(INTERVAL) <= INTERVAL + SEND_MARGIN
    time.sleep(INTERVAL + SEND_MARGIN)
    assert second.try_take(INTERVAL) == 0.0
    assert 0.4 < first.try_take(INTERVAL) <= INTERVAL + SEND_MARGIN


@ON_POSTGRES
def test_replicas_waiting_together_start_one_interval_apart(replicas: list[SharedPacer]) -> None:
    """Three replicas pacing at once start at least an interval apart, each once."""
    starts: list[float] = []

    def request(pacer: SharedPacer) -> None:
        pacer.wait_turn(INTERVAL, time.monotonic, time.sleep)
        starts.append(time.monotonic())

    threads = [threading.Thread(target=request, args=(pacer,)) for pacer in replicas]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    starts.sort()
    assert len(starts) == 3
    assert all(b - a >= INTERVAL - 0.01 for a, b in itertools.pairwise(starts))
    assert starts[-1] - starts[0] < 3 * INTERVAL


@ON_POSTGRES
def test_a_replica_gone_while_waiting_holds_nothing(replicas: list[SharedPacer]) -> None:
    """One that learned its wait and died costs nobody anything: the turn goes to who asks."""
    first, gone, next_one = replicas
    first.try_take(INTERVAL)
    assert gone.try_take(INTERVAL) > 0  # and it never comes back
    time.sleep(INTERVAL + SEND_MARGIN)
    assert next_one.try_take(INTERVAL) == 0.0


@ON_POSTGRES
def test_wait_turn_sleeps_what_is_left(replicas: list[SharedPacer]) -> None:
    """The client's pacer interface sleeps through the injected sleep and reports the wait."""
    slept: list[float] = []
    assert replicas[0].wait_turn(INTERVAL, time.monotonic, slept.append) == 0.0

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(seconds)

    waited = replicas[1].wait_turn(INTERVAL, time.monotonic, sleep)
    assert sum(slept) == pytest.approx(waited)
    assert 0.4 < waited <= INTERVAL + SEND_MARGIN + 0.05


@ON_POSTGRES
def test_a_lost_row_is_made_again(replicas: list[SharedPacer], database_url: str) -> None:
    """Without its row (a restored old dump) the pacer recreates it and goes on."""
    engine = sa.create_engine(database_url)
    try:
        with engine.begin() as conn:
            conn.execute(arxiv_pacer_table.delete())
    finally:
        engine.dispose()
    assert replicas[0].try_take(INTERVAL) == 0.0
    assert 0.4 < replicas[1].try_take(INTERVAL) <= INTERVAL + SEND_MARGIN


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_paces_in_process(database_url: str) -> None:
    """On SQLite (one replica) there is no shared pacer: the client's own does the work."""
    storage = Storage(database_url)
    try:
        assert storage.pacer is None
    finally:
        storage.close()
