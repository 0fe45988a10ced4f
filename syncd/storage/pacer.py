"""One politeness budget for every replica: turns taken in the database, for arXiv or a host.

arXiv's terms ask for at most one request every three seconds "from all of
the machines under your control as a whole"; Crossref's polite pool and
OpenAlex count what all of them send as well.  Each replica paces its own
requests in process; with several replicas on one PostgreSQL database they
also take each turn here, so all of them together keep one interval.

A turn is taken, right before the request is sent, in one short
transaction on one row (arXiv's in ``arxiv_pacer``, one budget for all of
arXiv's hosts; any other host's in ``host_pacers``, inserted the first time
it is asked for): lock it, and if ``interval`` has
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
from syncd.storage.schema import arxiv_pacer_table, host_pacers_table

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
_HOST_LEFT = sa.text(
    """
    SELECT EXTRACT(EPOCH FROM
        last_start + make_interval(secs => :interval) - clock_timestamp()) AS left
    FROM host_pacers WHERE host = :host FOR UPDATE
    """
)
_HOST_TAKE = sa.text("UPDATE host_pacers SET last_start = clock_timestamp() WHERE host = :host")
# The stamp is taken a few milliseconds before the request leaves (the commit,
# the way back, the client's own work), and not always the same few: turns are
# this much longer than the interval, so the requests themselves, not only
# their stamps, arrive an interval apart.
SEND_MARGIN = 0.02

# The stamp must be quick, not durable: a stamp lost in a crash costs nothing,
# and waiting for the WAL to flush would delay the request it times.
_QUICK_COMMIT = sa.text("SET LOCAL synchronous_commit TO OFF")


class SharedPacer:
    """Spaces the starts of every replica's requests to arXiv, or to ``host`` (PostgreSQL only).

    It has the shape of a connection's pacer (``wait_turn``,
    ``syncd.sources.polite``), so the client paces through it without knowing
    about the database.  Without ``host`` it is arXiv's one budget.
    """

    def __init__(self, db: Database, host: str | None = None) -> None:
        self._db = db
        self._host = host

    @property
    def host(self) -> str | None:
        """The host this pacer spaces, or ``None`` for arXiv's budget."""
        return self._host

    def try_take(self, interval: float) -> float:
        """Take the turn if ``interval`` has passed since the last one (return 0.0), else
        return the seconds left."""
        if self._host is None:
            left_sql, take_sql, key, table = _LEFT, _TAKE, {}, arxiv_pacer_table
            row_values: dict[str, object] = {"id": 1}
        else:
            left_sql, take_sql, table = _HOST_LEFT, _HOST_TAKE, host_pacers_table
            key = row_values = {"host": self._host}
        asked = {"interval": interval + SEND_MARGIN, **key}
        with self._db.transaction() as conn:
            conn.execute(_QUICK_COMMIT)
            row = conn.execute(left_sql, asked).first()
            if row is None:  # no row yet (a new host, or restored from an old dump): make it
                primary_key = next(iter(row_values))
                conn.execute(
                    self._db.insert_ignoring_conflicts(table, primary_key).values(**row_values)
                )
                row = conn.execute(left_sql, asked).one()
            left = float(row.left) if row.left is not None else 0.0
            if left > 0:
                return left
            conn.execute(take_sql, key)
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
