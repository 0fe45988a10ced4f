"""The turns arXiv requests took, as the pacer that granted them stamped them.

Spacing is asserted where it is enforced.  A loaded machine can deliver a
request to the fake arbitrarily long after its turn, so two arrivals may be
closer than the interval although their turns were not; it cannot move the
stamps, each taken at least ``request_interval`` after the one before by the
pacer's own clock.  On SQLite the process's pacer stamps a turn with the
monotonic clock (``last_start``); on PostgreSQL the database stamps
``arxiv_pacer.last_start``, and a trigger installed here copies every stamp,
whichever process took the turn, into a table of its own.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa

from syncd.sources.arxiv import _connection, _pacing
from syncd.storage.migrate import upgrade

__all__ = ["PacerTurns", "RecordingPacer", "pacer_turns"]

# Made afresh for each test: the database outlives one (only syncd's own tables are dropped).
_INSTALL = (
    "DROP SCHEMA IF EXISTS pacer_log CASCADE",
    "CREATE SCHEMA pacer_log",
    "CREATE TABLE pacer_log.turns (at timestamptz NOT NULL)",
    """
    CREATE OR REPLACE FUNCTION pacer_log.record_turn() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO pacer_log.turns VALUES (NEW.last_start);
        RETURN NEW;
    END $$
    """,
    "DROP TRIGGER IF EXISTS record_turn ON arxiv_pacer",
    "CREATE TRIGGER record_turn AFTER UPDATE OF last_start ON arxiv_pacer"
    " FOR EACH ROW EXECUTE FUNCTION pacer_log.record_turn()",
)
_TURNS = sa.text("SELECT EXTRACT(EPOCH FROM at) AS at FROM pacer_log.turns ORDER BY at")


class RecordingPacer:
    """The process's pacer, noting the stamp of every turn it grants."""

    def __init__(self, pacer: _pacing.ProcessPacer) -> None:
        self._pacer = pacer
        self.stamps: list[float] = []

    def wait_turn(
        self, interval: float, clock: Callable[[], float], sleep: Callable[[float], None]
    ) -> float:
        waited = self._pacer.wait_turn(interval, clock, sleep)
        stamp = self._pacer.last_start
        assert stamp is not None
        self.stamps.append(stamp)
        return waited


class PacerTurns:
    """When each turn started, in seconds on the pacer's clock, oldest first."""

    def __init__(self, read: Callable[[], list[float]]) -> None:
        self._read = read

    def times(self) -> list[float]:
        """Every turn taken so far."""
        return self._read()

    def gaps(self) -> list[float]:
        """The seconds between consecutive turns."""
        times = self.times()
        return [b - a for a, b in itertools.pairwise(times)]


@pytest.fixture
def pacer_turns(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[PacerTurns]:
    """The turns taken on ``database_url``'s pacer: this process's on SQLite (its clients
    built from now on), every replica's on PostgreSQL (the database is migrated first)."""
    if database_url.startswith("sqlite"):
        recording = RecordingPacer(_pacing._PACER)
        monkeypatch.setattr(_connection, "_PACER", recording)
        yield PacerTurns(lambda: list(recording.stamps))
        return
    engine = sa.create_engine(database_url)
    try:
        upgrade(engine)
        with engine.begin() as conn:
            for statement in _INSTALL:
                conn.execute(sa.text(statement))

        def read() -> list[float]:
            with engine.connect() as conn:
                return [float(row.at) for row in conn.execute(_TURNS)]

        yield PacerTurns(read)
        with engine.begin() as conn:
            conn.execute(sa.text("DROP SCHEMA pacer_log CASCADE"))
    finally:
        engine.dispose()
