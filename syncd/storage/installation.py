"""This installation's own values, drawn once when its database was made."""

from __future__ import annotations

import sqlalchemy as sa

from syncd.storage.database import Database
from syncd.storage.schema import installation_table

__all__ = ["Installation"]


class Installation:
    """The one row of ``installation`` (migration 0021)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def phase(self) -> float:
        """Where in each interval this installation's cycles start, in [0, 1): the same
        for every replica on the database, for as long as the database lives."""
        with self._db.transaction() as conn:
            return float(conn.scalar(sa.select(installation_table.c.phase)) or 0.0)
