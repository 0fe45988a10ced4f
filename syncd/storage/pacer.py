"""One politeness budget for every replica: arXiv turns taken in the database.

arXiv's terms ask for at most one request every three seconds "from all of
the machines under your control as a whole".  Each replica paces its own
requests in process; with several replicas on one PostgreSQL database they
also take each turn here, so all of them together keep one interval.

A turn is taken, right before the request is sent, in one short
transaction on one row (``arxiv_pacer``): lock it, and if ``interval`` has
passed since ``last_start``, stamp ``last_start`` with the database's clock
and go; else learn how long is left, sleep, and try again.  Stamping when
the request really starts (not when a future slot is booked) keeps a late
sender from squeezing the next request closer, and every reading of time is
the database's, so replicas' clocks need not agree.  No lock outlives the
transaction: a replica killed mid-request has stamped its own start only,
so it delays the others by one interval at most, and one killed while
waiting holds nothing at all.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

from syncd.storage.database import Database
from syncd.storage.schema import arxiv_pacer_table

__all__ = ["SEND_MARGIN", "SharedPacer"]

# Seconds until the next turn (negative or NULL: it is now), with the row
# locked until the transaction ends.
_LEFT = sa.text(
    """
    SELECT EXTRACT(EPOCH FROM
        last_start + make_interval(secs => :interval) - clock_timestamp()) AS left
    FROM arxiv_pacer WHERE id = 1 FOR UPDATE
    """
)
_TAKE = sa.text("UPDATE arxiv_pacer SET last_start = clock_timestamp() WHERE id = 1")
# The stamp is taken a few milliseconds before the request leaves (the commit,
# the way back, the client's own work), and not always the same few: turns are
# this much longer than the interval, so the requests themselves, not only
# their stamps, arrive an interval apart.
SEND_MARGIN = 0.02

# The stamp must be quick, not durable: a stamp lost in a crash costs nothing,
# and waiting for the WAL to flush would delay the request it times.
_QUICK_COMMIT = sa.text("SET LOCAL synchronous_commit TO OFF")


class SharedPacer:
    """Spaces the starts of every replica's arXiv requests (PostgreSQL only).

    It has the shape of the arXiv client's pacer (``wait_turn``), so the
    client paces through it without knowing about the database.
    """

    def __init__(self, db: Database) -> None:
        self._db = db

    def try_take(self, interval: float) -> float:
        """Take the turn if ``interval`` has passed since the last one (return 0.0), else
        return the seconds left."""
        with self._db.transaction() as conn:
            conn.execute(_QUICK_COMMIT)
            row = conn.execute(_LEFT, {"interval": interval + SEND_MARGIN}).first()
            if row is None:  # the row is gone (restored from an old dump?): make it again
                conn.execute(
                    self._db.insert_ignoring_conflicts(arxiv_pacer_table, "id").values(id=1)
                )
                row = conn.execute(_LEFT, {"interval": interval + SEND_MARGIN}).one()
            left = float(row.left) if row.left is not None else 0.0
            if left > 0:
                return left
            conn.execute(_TAKE)
        return 0.0

    def wait_turn(
        self, interval: float, clock: Callable[[], float], sleep: Callable[[float], None]
    ) -> float:
        """Sleep until this process's request may start, and take the turn; return the wait."""
        del clock  # the database's clock decides
        waited = 0.0
        while (left := self.try_take(interval)) > 0:
            sleep(left)
            waited += left
        return waited
