"""The endpoints the configuration names, and how their deliveries stand.

The deliveries themselves, claimed under leases and attempted, are the
outbox's (``syncd.storage.outbox``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.model import EndpointSummary
from syncd.domain.routing import EndpointSpec
from syncd.domain.vocabulary import DeliveryStatus
from syncd.storage.database import Database, chunks, now, utc
from syncd.storage.outbox import due_at
from syncd.storage.schema import deliveries_table, endpoints_table

__all__ = ["Endpoints"]


class Endpoints:
    """The endpoints table, and each endpoint's deliveries counted."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def register(self, specs: Sequence[EndpointSpec]) -> None:
        """Make the endpoint table match the configuration.

        New names are added, a changed URL re-enables a disabled endpoint
        (the operator fixed it), and names no longer configured go inactive:
        their deliveries wait, they are never sent without a secret.
        """
        with self._db.transaction() as conn:
            rows = {r.name: r for r in conn.execute(sa.select(endpoints_table))}
            for spec in specs:
                values: dict[str, Any] = {
                    "url_hash": spec.url_hash,
                    "format": spec.format.value,
                    "grouping": spec.group.value,
                    "events": list(spec.events),
                    "kinds": list(spec.kinds),
                    "authors": list(spec.authors),
                    "groups": list(spec.groups),
                }
                row = rows.get(spec.name)
                if row is None:
                    conn.execute(
                        endpoints_table.insert().values(
                            name=spec.name, active=True, created_at=now(), **values
                        )
                    )
                    continue
                # A row from before URLs were hashed has none: it gets one, and
                # no URL change can be told from it.
                if row.url_hash is not None and row.url_hash != spec.url_hash:
                    values |= {"disabled_at": None, "disabled_reason": None}
                conn.execute(
                    endpoints_table.update()
                    .where(endpoints_table.c.id == row.id)
                    .values(active=True, **values)
                )
            gone = sorted(set(rows) - {spec.name for spec in specs})
            for chunk in chunks(gone):
                conn.execute(
                    endpoints_table.update()
                    .where(endpoints_table.c.name.in_(chunk))
                    .values(active=False)
                )

    def summaries(self) -> list[EndpointSummary]:
        """Every endpoint ever configured, with its delivery counts and, of its pending
        deliveries, when the first is due and why the first that failed failed."""
        d, e = deliveries_table, endpoints_table

        def count(status: str) -> sa.ColumnElement[int]:
            return sa.func.count(d.c.id).filter(d.c.status == status)

        pending = d.c.status == DeliveryStatus.PENDING
        query = (
            sa.select(
                e,
                count(DeliveryStatus.PENDING).label("pending"),
                count(DeliveryStatus.DELIVERED).label("delivered"),
                count(DeliveryStatus.DEAD).label("dead"),
                sa.func.min(due_at()).filter(pending).label("next_attempt_at"),
            )
            .outerjoin(d, d.c.endpoint_id == e.c.id)
            .group_by(e.c.id)
            .order_by(e.c.name)
        )
        with self._db.transaction() as conn:
            errors = _first_pending_errors(conn)
            return [
                EndpointSummary(
                    name=row.name,
                    active=row.active,
                    disabled_at=utc(row.disabled_at) if row.disabled_at else None,
                    disabled_reason=row.disabled_reason,
                    pending=row.pending,
                    delivered=row.delivered,
                    dead=row.dead,
                    next_attempt_at=utc(row.next_attempt_at) if row.next_attempt_at else None,
                    last_error=errors.get(row.id),
                )
                for row in conn.execute(query)
            ]


def _first_pending_errors(conn: Connection) -> dict[int, str]:
    """Per endpoint id, the error of its first pending delivery (by when it is due) that
    failed an attempt: what holds its queue up."""
    d = deliveries_table
    rank = (
        sa.func.row_number()
        .over(partition_by=d.c.endpoint_id, order_by=(due_at(), d.c.id))
        .label("rank")
    )
    failed = (
        sa.select(d.c.endpoint_id, d.c.last_error, rank)
        .where(d.c.status == DeliveryStatus.PENDING, d.c.last_error.is_not(None))
        .subquery()
    )
    query = sa.select(failed.c.endpoint_id, failed.c.last_error).where(failed.c.rank == 1)
    return {row.endpoint_id: row.last_error for row in conn.execute(query)}
