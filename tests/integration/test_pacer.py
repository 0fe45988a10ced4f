"""The arXiv politeness budget replicas share through PostgreSQL (syncd.storage.pacer)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from syncd.migrate import upgrade
from syncd.storage import SharedPacer, Storage
from syncd.storage.schema import arxiv_pacer_table

ON_POSTGRES = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)


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
def test_turns_of_all_replicas_are_one_interval_apart(replicas: list[SharedPacer]) -> None:
    """Three replicas asking at once get turns now, one interval later and two intervals later."""
    waits = [pacer.reserve(0.5) for pacer in replicas]
    assert waits[0] == pytest.approx(0.0, abs=0.05)
    assert 0.4 < waits[1] <= 0.5
    assert 0.9 < waits[2] <= 1.0


@ON_POSTGRES
def test_an_unused_turn_delays_the_others_by_one_interval_at_most(
    replicas: list[SharedPacer],
) -> None:
    """A replica that reserved a turn and died costs the next one that turn, no more."""
    first, dead, next_one = replicas
    first.reserve(0.5)
    dead.reserve(0.5)  # and never sends its request
    assert 0.9 < next_one.reserve(0.5) <= 1.0


@ON_POSTGRES
def test_wait_turn_sleeps_the_reserved_wait(replicas: list[SharedPacer]) -> None:
    """The client's pacer interface sleeps through the injected sleep and reports the wait."""
    slept: list[float] = []
    assert replicas[0].wait_turn(0.5, lambda: 0.0, slept.append) == 0.0
    waited = replicas[1].wait_turn(0.5, lambda: 0.0, slept.append)
    assert slept == [waited]
    assert 0.4 < waited <= 0.5


@ON_POSTGRES
def test_a_lost_row_is_made_again(replicas: list[SharedPacer], database_url: str) -> None:
    """Without its row (a restored old dump) the pacer recreates it and goes on."""
    engine = sa.create_engine(database_url)
    try:
        with engine.begin() as conn:
            conn.execute(arxiv_pacer_table.delete())
    finally:
        engine.dispose()
    assert replicas[0].reserve(0.5) == pytest.approx(0.0, abs=0.05)
    assert 0.4 < replicas[1].reserve(0.5) <= 0.5


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_paces_in_process(database_url: str) -> None:
    """On SQLite (one replica) there is no shared pacer: the client's own does the work."""
    storage = Storage(database_url)
    try:
        assert storage.pacer is None
    finally:
        storage.close()
