"""The arXiv hosts' cooldowns in the database (syncd.storage.cooldowns), on both databases."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from syncd.domain.throttle import Cooldown, CooldownPolicy, after_throttle
from syncd.storage import Storage
from syncd.storage.migrate import schema_drift, upgrade
from tests.conftest import BOTH_DATABASES, database_for
from tests.integration.rewind import downgrade


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: a cooldown is one row every process shares, updated under a row lock (FOR
    UPDATE) on PostgreSQL and inserted with each dialect's ON CONFLICT DO NOTHING."""
    return database_for(request)


HOST = "export.arxiv.org"
NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
POLICY = CooldownPolicy(first=60.0, cap=3600.0)


@pytest.fixture
def replicas(database_url: str) -> Iterator[tuple[Storage, Storage]]:
    """Two storages on one database, as two processes (replicas, or a command) open it."""
    first, second = Storage(database_url), Storage(database_url)
    upgrade(first.engine)
    try:
        yield first, second
    finally:
        first.close()
        second.close()


def _throttle(state: Cooldown) -> Cooldown:
    return after_throttle(state, POLICY, sent_at=NOON, now=NOON, retry_after=None)


def test_a_host_never_throttled_has_no_cooldown(replicas: tuple[Storage, Storage]) -> None:
    """Reading a host with no row is an empty cooldown, and lists nothing."""
    first, _ = replicas
    assert first.cooldowns.read(HOST) == Cooldown()
    assert first.cooldowns.all() == {}


def test_a_throttle_is_every_process_s_and_outlives_it(
    replicas: tuple[Storage, Storage], database_url: str
) -> None:
    """What one process records, another reads as it was, and so does one started later."""
    first, second = replicas
    recorded = first.cooldowns.update(HOST, _throttle)
    assert recorded == Cooldown(60.0, NOON + timedelta(seconds=60), NOON, 1)
    assert second.cooldowns.read(HOST) == recorded
    first.close()
    restarted = Storage(database_url)
    try:
        assert restarted.cooldowns.read(HOST) == recorded
        assert restarted.cooldowns.all() == {HOST: recorded}
    finally:
        restarted.close()


def test_each_host_has_its_own(replicas: tuple[Storage, Storage]) -> None:
    """A throttle of the API host leaves the author feeds' host alone."""
    first, _ = replicas
    first.cooldowns.update(HOST, _throttle)
    assert first.cooldowns.read("arxiv.org") == Cooldown()
    assert set(first.cooldowns.all()) == {HOST}


def test_changes_from_two_processes_at_once_are_all_counted(
    replicas: tuple[Storage, Storage],
) -> None:
    """Each change reads and writes under the host's lock: none overwrites another."""

    def count(state: Cooldown) -> Cooldown:
        return replace(state, throttles=state.throttles + 1)

    def throttle_often(storage: Storage) -> None:
        for _ in range(25):
            storage.cooldowns.update(HOST, count)

    threads = [threading.Thread(target=throttle_often, args=(s,)) for s in replicas]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert replicas[0].cooldowns.read(HOST).throttles == 50


def test_an_unchanged_cooldown_is_not_written(replicas: tuple[Storage, Storage]) -> None:
    """A change that changes nothing leaves the row as it was (nothing to decay)."""
    first, _ = replicas
    before = first.cooldowns.update(HOST, _throttle)
    assert first.cooldowns.update(HOST, lambda state: state) == before
    assert first.cooldowns.read(HOST) == before


@pytest.mark.empty_database
def test_0018_adds_the_cooldowns_and_downgrades_without_them(database_url: str) -> None:
    """0017 → head creates an empty arxiv_cooldowns; going back to 0017 drops it."""
    storage = Storage(database_url)
    try:
        upgrade(storage.engine, "0017")
        assert "arxiv_cooldowns" not in sa.inspect(storage.engine).get_table_names()
        upgrade(storage.engine)
        assert storage.cooldowns.all() == {}
        storage.cooldowns.update(HOST, _throttle)
        downgrade(storage.engine, "0017")
        assert "arxiv_cooldowns" not in sa.inspect(storage.engine).get_table_names()
        upgrade(storage.engine)
        assert storage.cooldowns.all() == {}
        assert schema_drift(storage.engine) == []
    finally:
        storage.close()
