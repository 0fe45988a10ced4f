"""One politeness budget for every replica: arXiv turns reserved in the database.

arXiv's terms ask for at most one request every three seconds "from all of
the machines under your control as a whole".  Each replica paces its own
requests in process; with several replicas on one PostgreSQL database they
also reserve each start here, so all of them together keep one interval.

A reservation is one UPDATE of one row (``arxiv_pacer``), which moves
``last_start`` to the first free turn and returns it with the database's
clock: the row lock lasts that statement's transaction only, never the
request, and every reading of time is the database's, so replicas' clocks
need not agree.  A replica that dies after reserving (or mid-request)
leaves at most its own turn unused: the others are delayed by one interval
at most, and nothing waits for it to come back.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

from syncd.storage.database import Database
from syncd.storage.schema import arxiv_pacer_table

__all__ = ["SharedPacer"]

# GREATEST ignores NULL: the first reservation ever starts now.
# statement_timestamp() is one instant for the whole statement.
_RESERVE = sa.text(
    """
    UPDATE arxiv_pacer
    SET last_start = GREATEST(
        last_start + make_interval(secs => :interval), statement_timestamp()
    )
    WHERE id = 1
    RETURNING EXTRACT(EPOCH FROM last_start - statement_timestamp()) AS wait
    """
)


class SharedPacer:
    """Spaces the starts of every replica's arXiv requests (PostgreSQL only).

    It has the shape of the arXiv client's pacer (``wait_turn``), so the
    client paces through it without knowing about the database.
    """

    def __init__(self, db: Database) -> None:
        self._db = db

    def reserve(self, interval: float) -> float:
        """Reserve the next turn at least ``interval`` after the last one; return the wait."""
        with self._db.transaction() as conn:
            wait = conn.execute(_RESERVE, {"interval": interval}).scalar()
            if wait is None:  # the row is gone (restored from an old dump?): make it again
                conn.execute(
                    self._db.insert_ignoring_conflicts(arxiv_pacer_table, "id").values(id=1)
                )
                wait = conn.execute(_RESERVE, {"interval": interval}).scalar()
        return max(0.0, float(wait or 0.0))

    def wait_turn(
        self, interval: float, clock: Callable[[], float], sleep: Callable[[float], None]
    ) -> float:
        """Reserve a turn and sleep until it comes; return the seconds slept."""
        del clock  # the database's clock decides
        waited = self.reserve(interval)
        if waited > 0:
            sleep(waited)
        return waited
