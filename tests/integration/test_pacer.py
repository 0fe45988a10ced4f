"""The arXiv politeness budget replicas share through PostgreSQL (syncd.storage.pacer)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from syncd.config import ArxivSettings, PublicationsSettings
from syncd.sources.crossref import CrossrefClient
from syncd.sources.polite import host_of
from syncd.storage import SharedPacer, Storage
from syncd.storage.database import Database
from syncd.storage.migrate import upgrade
from syncd.storage.pacer import SEND_MARGIN
from syncd.storage.schema import arxiv_pacer_table, host_pacers_table
from tests.fakecrossref import FakeCrossref
from tests.integration.pacing import PacerTurns

ON_POSTGRES = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
INTERVAL = 0.5
START = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


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


@pytest.fixture
def stopped_clock(database_url: str) -> Iterator[tuple[list[SharedPacer], sa.Engine]]:
    """Three replicas' shared pacers reading the time from a table the test sets, and that
    table's engine.

    The pacer asks PostgreSQL's ``clock_timestamp()``; on these connections the
    search path finds a function of that name, reading ``stopped_clock.now``,
    before pg_catalog's.  So a turn's arithmetic is checked to the microsecond,
    with no sleeping and no race against a loaded machine.
    """
    admin = sa.create_engine(database_url)
    with admin.begin() as conn:
        conn.execute(sa.text("CREATE SCHEMA IF NOT EXISTS stopped_clock"))
        conn.execute(sa.text("CREATE TABLE IF NOT EXISTS stopped_clock.now (at timestamptz)"))
        conn.execute(
            sa.text(
                "CREATE OR REPLACE FUNCTION stopped_clock.clock_timestamp() RETURNS timestamptz"
                " LANGUAGE sql AS 'SELECT at FROM stopped_clock.now'"
            )
        )
    upgrade(admin)
    search_path = "-csearch_path=public,stopped_clock,pg_catalog"
    url = admin.url.update_query_dict({"options": search_path}).render_as_string(False)
    databases = [Database(url) for _ in range(3)]
    try:
        yield [SharedPacer(db) for db in databases], admin
    finally:
        for db in databases:
            db.close()
        with admin.begin() as conn:
            conn.execute(sa.text("DROP SCHEMA stopped_clock CASCADE"))
        admin.dispose()


def _set_clock(engine: sa.Engine, at: datetime) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM stopped_clock.now"))
        conn.execute(sa.text("INSERT INTO stopped_clock.now VALUES (:at)"), {"at": at})


@ON_POSTGRES
def test_a_turn_lasts_the_interval_and_the_send_margin(
    stopped_clock: tuple[list[SharedPacer], sa.Engine],
) -> None:
    """A stamp precedes its request by a few ms: exactly one interval after a turn is too soon.

    The next turn comes a margin (a few hundredths of a second) later, so the
    requests, not only their stamps, arrive an interval apart.
    """
    (pacer, *_), engine = stopped_clock
    start = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    _set_clock(engine, start)
    assert pacer.try_take(INTERVAL) == 0.0
    _set_clock(engine, start + timedelta(seconds=INTERVAL))
    assert 0.005 <= pacer.try_take(INTERVAL) <= 0.1
    _set_clock(engine, start + timedelta(seconds=INTERVAL + 0.1))
    assert pacer.try_take(INTERVAL) == 0.0


@ON_POSTGRES
def test_a_turn_is_taken_once_per_interval_across_replicas(
    stopped_clock: tuple[list[SharedPacer], sa.Engine],
) -> None:
    """The first replica takes the turn; the others, asking at once, learn what is left of it."""
    (first, second, third), engine = stopped_clock
    _set_clock(engine, START)
    assert first.try_take(INTERVAL) == 0.0
    assert second.try_take(INTERVAL) == pytest.approx(INTERVAL + SEND_MARGIN, abs=1e-6)
    _set_clock(engine, START + timedelta(seconds=0.1))
    assert third.try_take(INTERVAL) == pytest.approx(INTERVAL + SEND_MARGIN - 0.1, abs=1e-6)
    _set_clock(engine, START + timedelta(seconds=INTERVAL + SEND_MARGIN))
    assert second.try_take(INTERVAL) == 0.0
    assert first.try_take(INTERVAL) == pytest.approx(INTERVAL + SEND_MARGIN, abs=1e-6)


@ON_POSTGRES
def test_replicas_waiting_together_start_one_interval_apart(
    replicas: list[SharedPacer], pacer_turns: PacerTurns
) -> None:
    """Three replicas pacing at once take one turn each, an interval apart by the database's
    clock (the stamps themselves: a busy machine delays a thread after its turn, not the turn)."""

    def request(pacer: SharedPacer) -> None:
        pacer.wait_turn(INTERVAL, time.monotonic, time.sleep)

    threads = [threading.Thread(target=request, args=(pacer,)) for pacer in replicas]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    assert len(pacer_turns.times()) == 3
    assert min(pacer_turns.gaps()) >= INTERVAL + SEND_MARGIN - 1e-6


@ON_POSTGRES
def test_a_replica_gone_while_waiting_holds_nothing(
    stopped_clock: tuple[list[SharedPacer], sa.Engine],
) -> None:
    """One that learned its wait and died costs nobody anything: the turn goes to who asks."""
    (first, gone, next_one), engine = stopped_clock
    _set_clock(engine, START)
    first.try_take(INTERVAL)
    assert gone.try_take(INTERVAL) > 0  # and it never comes back
    _set_clock(engine, START + timedelta(seconds=INTERVAL + SEND_MARGIN))
    assert next_one.try_take(INTERVAL) == 0.0


@ON_POSTGRES
def test_wait_turn_sleeps_what_is_left(stopped_clock: tuple[list[SharedPacer], sa.Engine]) -> None:
    """The client's pacer interface sleeps through the injected sleep and reports the wait."""
    (first, second, _), engine = stopped_clock
    _set_clock(engine, START)
    slept: list[float] = []
    assert first.wait_turn(INTERVAL, time.monotonic, slept.append) == 0.0
    assert slept == []
    _set_clock(engine, START + timedelta(seconds=0.1))
    moment = [START + timedelta(seconds=0.1)]

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        moment[0] += timedelta(seconds=seconds)
        _set_clock(engine, moment[0])

    waited = second.wait_turn(INTERVAL, time.monotonic, sleep)
    assert waited == pytest.approx(INTERVAL + SEND_MARGIN - 0.1, abs=1e-6)
    assert sum(slept) == pytest.approx(waited)


@ON_POSTGRES
def test_a_lost_row_is_made_again(stopped_clock: tuple[list[SharedPacer], sa.Engine]) -> None:
    """Without its row (a restored old dump) the pacer recreates it and goes on."""
    (first, second, _), engine = stopped_clock
    with engine.begin() as conn:
        conn.execute(arxiv_pacer_table.delete())
    _set_clock(engine, START)
    assert first.try_take(INTERVAL) == 0.0
    assert second.try_take(INTERVAL) == pytest.approx(INTERVAL + SEND_MARGIN, abs=1e-6)


@ON_POSTGRES
def test_a_host_has_its_own_row_and_budget(
    stopped_clock: tuple[list[SharedPacer], sa.Engine],
) -> None:
    """A host's pacer makes its row on first use and keeps a budget apart from arXiv's and
    from other hosts': replicas asking for one host share it, the others are not held."""
    (first, second, third), engine = stopped_clock
    databases = [pacer._db for pacer in (first, second, third)]
    crossref = [SharedPacer(db, "api.crossref.org") for db in databases]
    openalex = SharedPacer(databases[0], "api.openalex.org")
    _set_clock(engine, START)
    assert crossref[0].try_take(INTERVAL) == 0.0
    assert crossref[1].try_take(INTERVAL) == pytest.approx(INTERVAL + SEND_MARGIN, abs=1e-6)
    assert openalex.try_take(INTERVAL) == 0.0
    assert first.try_take(INTERVAL) == 0.0  # arXiv's budget is not the hosts'
    with engine.begin() as conn:
        hosts = sorted(conn.execute(sa.select(host_pacers_table.c.host)).scalars())
    assert hosts == ["api.crossref.org", "api.openalex.org"]
    _set_clock(engine, START + timedelta(seconds=INTERVAL + SEND_MARGIN))
    assert crossref[2].try_take(INTERVAL) == 0.0
    assert crossref[0].try_take(INTERVAL) == pytest.approx(INTERVAL + SEND_MARGIN, abs=1e-6)


@ON_POSTGRES
def test_storage_gives_a_host_pacer_on_postgres(database_url: str) -> None:
    """Storage hands out a host's shared pacer by name on PostgreSQL."""
    storage = Storage(database_url)
    try:
        pacer = storage.host_pacer("api.crossref.org")
        assert pacer is not None and pacer.host == "api.crossref.org"
    finally:
        storage.close()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_paces_in_process(database_url: str) -> None:
    """On SQLite (one replica) there is no shared pacer: the client's own does the work."""
    storage = Storage(database_url)
    try:
        assert storage.pacer is None
        assert storage.host_pacer("api.crossref.org") is None
    finally:
        storage.close()


@ON_POSTGRES
def test_a_crossref_client_takes_its_turns_on_its_hosts_row(database_url: str) -> None:
    """The Crossref client paces through the storage's pacer of its host, as the arXiv client
    paces through arXiv's: each request stamps the host's row."""
    storage = Storage(database_url)
    upgrade(storage.engine)
    try:
        with FakeCrossref() as crossref:
            pacer = storage.host_pacer(host_of(crossref.url))
            assert pacer is not None
            publications = PublicationsSettings(crossref_url=crossref.url, crossref_interval=0.05)
            with CrossrefClient(publications, ArxivSettings(), pacer=pacer) as client:
                client.notices(["10.1000/unknown"])
                stamped = _host_stamp(storage.engine, host_of(crossref.url))
                client.notices(["10.1000/unknown"])
            assert len(crossref.requests) == 2
            assert stamped is not None
            later = _host_stamp(storage.engine, host_of(crossref.url))
            assert later is not None and later >= stamped + timedelta(seconds=0.05)
    finally:
        storage.close()


def _host_stamp(engine: sa.Engine, host: str) -> datetime | None:
    with engine.begin() as conn:
        query = sa.select(host_pacers_table.c.last_start).where(host_pacers_table.c.host == host)
        return conn.execute(query).scalar_one_or_none()
