"""The cooldowns of the arXiv hosts that throttle us, kept where every process reads them.

What a cooldown is, and what a throttle or an answer does to it, is the
domain's (``syncd.domain.throttle``).  Here it outlives a restart and is the
same for every replica and every ``syncd`` command on the database: on
SQLite too, where ``syncd sync`` by hand shares the file with ``syncd run``.

A change is one short transaction that holds the host's row while the
domain's function computes the new state: the row is made if missing
(``INSERT ... ON CONFLICT DO NOTHING``), which on SQLite takes the
database's write lock, and read ``FOR UPDATE``, which on PostgreSQL locks
it.  Two replicas throttled at once are counted in turn, never one over the
other.  Nothing is held past that transaction.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

from syncd.domain.throttle import Cooldown
from syncd.storage.database import Database, utc
from syncd.storage.schema import arxiv_cooldowns_table

__all__ = ["Cooldowns"]

_COOLDOWNS = arxiv_cooldowns_table


class Cooldowns:
    """Each arXiv host's cooldown, by host (``export.arxiv.org``, ``127.0.0.1:8080``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def read(self, host: str) -> Cooldown:
        """The host's cooldown; an empty one when it never throttled us."""
        with self._db.transaction() as conn:
            row = conn.execute(sa.select(_COOLDOWNS).where(_COOLDOWNS.c.host == host)).first()
        return _cooldown(row) if row is not None else Cooldown()

    def update(self, host: str, change: Callable[[Cooldown], Cooldown]) -> Cooldown:
        """Apply ``change`` to the host's cooldown under its lock; return the new one."""
        with self._db.transaction() as conn:
            conn.execute(
                self._db.insert_ignoring_conflicts(_COOLDOWNS, "host").values(
                    host=host, step=0.0, throttles=0
                )
            )
            row = conn.execute(
                sa.select(_COOLDOWNS).where(_COOLDOWNS.c.host == host).with_for_update()
            ).one()
            before = _cooldown(row)
            after = change(before)
            if after != before:
                conn.execute(
                    _COOLDOWNS.update()
                    .where(_COOLDOWNS.c.host == host)
                    .values(
                        step=after.step,
                        not_before=after.not_before,
                        throttled_at=after.throttled_at,
                        throttles=after.throttles,
                    )
                )
        return after

    def all(self) -> dict[str, Cooldown]:
        """Every host's cooldown that ever throttled us, by host."""
        with self._db.transaction() as conn:
            rows = conn.execute(sa.select(_COOLDOWNS).order_by(_COOLDOWNS.c.host)).all()
        return {row.host: _cooldown(row) for row in rows}


def _cooldown(row: sa.Row[tuple[object, ...]]) -> Cooldown:
    return Cooldown(
        step=float(row.step),
        not_before=utc(row.not_before) if row.not_before is not None else None,
        throttled_at=utc(row.throttled_at) if row.throttled_at is not None else None,
        throttles=int(row.throttles),
    )
