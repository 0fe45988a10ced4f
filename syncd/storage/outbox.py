"""The webhook outbox: deliveries claimed under leases.

Delivery rows are written with their event (``syncd.storage.events.publish``);
the worker (``syncd.delivery.worker``) claims due ones here, sends them, and
records how each attempt went.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.vocabulary import DeliveryStatus
from syncd.faults import fault_point
from syncd.storage.database import Database, among, chunks, now, utc
from syncd.storage.events import event_seq, events_where
from syncd.storage.models import Attempt, Claim
from syncd.storage.schema import (
    deliveries_table,
    digest_events_table,
    endpoints_table,
    events_table,
)

__all__ = ["Outbox", "due_at"]


class Outbox:
    """The deliveries: claimed, attempted, redelivered, pruned and counted."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def claim(self, owner: str, lease_seconds: float, limit: int) -> list[Claim]:
        """Lease up to ``limit`` due deliveries for ``owner``.

        A delivery waits while an earlier event of the same paper is still
        pending for the same endpoint, so each receiver sees a paper's events
        in order; a digest waits for every earlier delivery to its endpoint,
        so digests go out one after the other, in the order of their cycles.
        A digest is one row: claimed, sent and recorded as one message.
        Rows are locked with SKIP LOCKED on PostgreSQL, and every lease is
        taken by a conditional update, so two workers never hold one.
        """
        at = now()
        until = at + timedelta(seconds=lease_seconds)
        d, earlier = deliveries_table, deliveries_table.alias("earlier")
        earlier_pending = (
            sa.exists()
            .where(earlier.c.endpoint_id == d.c.endpoint_id)
            .where(earlier.c.status == DeliveryStatus.PENDING)
            .where(earlier.c.event_seq < d.c.event_seq)
        )
        blocked = sa.or_(
            earlier_pending.where(earlier.c.paper_id == d.c.paper_id),
            sa.and_(d.c.digest_id.is_not(None), earlier_pending),
        )
        due = (
            sa.select(d.c.id)
            .join(endpoints_table, endpoints_table.c.id == d.c.endpoint_id)
            .where(d.c.status == DeliveryStatus.PENDING, d.c.next_attempt_at <= at)
            .where(sa.or_(d.c.lease_until.is_(None), d.c.lease_until < at))
            .where(endpoints_table.c.active.is_(True), endpoints_table.c.disabled_at.is_(None))
            .where(~blocked)
            .order_by(d.c.next_attempt_at, d.c.event_seq)
            .limit(limit)
        )
        if self._db.dialect == "postgresql":
            due = due.with_for_update(skip_locked=True, of=d)
        with self._db.transaction() as conn:
            candidates = conn.scalars(due).all()
            claimed = [
                delivery_id
                for chunk in chunks(candidates)
                for delivery_id in conn.scalars(
                    d.update()
                    .where(among(conn, d.c.id, chunk), d.c.status == DeliveryStatus.PENDING)
                    .where(sa.or_(d.c.lease_until.is_(None), d.c.lease_until < at))
                    .values(lease_owner=owner, lease_until=until)
                    .returning(d.c.id)
                )
            ]
            claims = _claims(conn, claimed) if claimed else []
        if claims:
            fault_point("store.deliveries_claimed")
        return claims

    def record_attempts(self, owner: str, attempts: Sequence[Attempt]) -> None:
        """Record how a batch of attempts went, in one transaction.

        A success counts even if our lease ran out meanwhile; a failure is
        recorded only while ``owner`` still holds the lease.  A 410
        (``disable_endpoint``) switches the endpoint off and leaves the
        delivery waiting, not dead, until the endpoint is fixed.
        """
        d = deliveries_table
        at = now()
        # One statement per status code, not per delivery: on PostgreSQL each
        # row of an executemany is a statement the server runs (30 µs each).
        delivered: dict[int | None, list[int]] = {}
        for attempt in attempts:
            if attempt.delivered:
                delivered.setdefault(attempt.status, []).append(attempt.delivery_id)
        with self._db.transaction() as conn:
            for status, ids in delivered.items():
                for chunk in chunks(ids):
                    conn.execute(
                        d.update()
                        .where(among(conn, d.c.id, chunk), d.c.status == DeliveryStatus.PENDING)
                        .values(
                            status=DeliveryStatus.DELIVERED,
                            delivered_at=at,
                            attempts=d.c.attempts + 1,
                            last_status=status,
                            last_error=None,
                            lease_owner=None,
                            lease_until=None,
                        )
                    )
            for attempt in (a for a in attempts if not a.delivered):
                values: dict[str, Any] = {
                    "attempts": d.c.attempts + 1,
                    "last_status": attempt.status,
                    "last_error": attempt.error,
                    "lease_owner": None,
                    "lease_until": None,
                }
                condition = sa.and_(
                    d.c.id == attempt.delivery_id,
                    d.c.status == DeliveryStatus.PENDING,
                    d.c.lease_owner == owner,
                )
                if attempt.retry_at is not None:
                    values["next_attempt_at"] = attempt.retry_at
                elif not attempt.disable_endpoint:
                    values["status"] = DeliveryStatus.DEAD
                changed = conn.execute(
                    d.update().where(condition).values(values).returning(d.c.endpoint_id)
                ).first()
                if changed is not None and attempt.disable_endpoint:
                    conn.execute(
                        endpoints_table.update()
                        .where(endpoints_table.c.id == changed.endpoint_id)
                        .values(
                            disabled_at=at,
                            disabled_reason=f"HTTP {attempt.status} from receiver",
                        )
                    )

    def renew_leases(self, owner: str, delivery_ids: Sequence[int], lease_seconds: float) -> None:
        """Extend ``owner``'s leases on ``delivery_ids`` to ``lease_seconds`` from now."""
        d = deliveries_table
        until = now() + timedelta(seconds=lease_seconds)
        with self._db.transaction() as conn:
            for chunk in chunks(delivery_ids):
                conn.execute(
                    d.update()
                    .where(
                        among(conn, d.c.id, chunk),
                        d.c.lease_owner == owner,
                        d.c.status == DeliveryStatus.PENDING,
                    )
                    .values(lease_until=until)
                )

    def release_leases(self, owner: str) -> int:
        """Give back every lease ``owner`` holds (clean shutdown); return how many."""
        d = deliveries_table
        with self._db.transaction() as conn:
            return conn.execute(
                d.update()
                .where(d.c.lease_owner == owner, d.c.status == DeliveryStatus.PENDING)
                .values(lease_owner=None, lease_until=None)
            ).rowcount

    def redeliver(self, event_id: str | None = None, *, dead: bool = False) -> int:
        """Queue an event's deliveries, digests carrying it included (or every dead
        letter), again, now; return how many messages."""
        d = deliveries_table
        query = d.update().values(
            status=DeliveryStatus.PENDING,
            attempts=0,
            next_attempt_at=now(),
            lease_owner=None,
            lease_until=None,
        )
        with self._db.transaction() as conn:
            if event_id is not None:
                seq = event_seq(conn, event_id)
                digests = sa.select(digest_events_table.c.delivery_id).where(
                    digest_events_table.c.event_seq == seq
                )
                query = query.where(sa.or_(d.c.event_seq == seq, d.c.id.in_(digests)))
            if dead:
                query = query.where(d.c.status == DeliveryStatus.DEAD)
            return conn.execute(query).rowcount

    def next_due(self) -> datetime | None:
        """When the earliest pending delivery to a live endpoint is due; None if there is none."""
        d, e = deliveries_table, endpoints_table
        query = (
            sa.select(sa.func.min(due_at()))
            .join(e, e.c.id == d.c.endpoint_id)
            .where(
                d.c.status == DeliveryStatus.PENDING,
                e.c.active.is_(True),
                e.c.disabled_at.is_(None),
            )
        )
        with self._db.transaction() as conn:
            found = conn.scalar(query)
        return utc(found) if found is not None else None

    def prune_delivered(self, before: datetime, limit: int = 5000) -> int:
        """Delete up to ``limit`` deliveries delivered before ``before``, oldest first, with the
        lists of events their digests carried; return how many.  The events stay.

        A delivery is due before it is delivered, so ``next_attempt_at < before``
        holds for every one of them and lets the due index find them in order.
        """
        d, carried = deliveries_table, digest_events_table
        old = (
            sa.select(d.c.id)
            .where(
                d.c.status == DeliveryStatus.DELIVERED,
                d.c.next_attempt_at < before,
                d.c.delivered_at < before,
            )
            .order_by(d.c.next_attempt_at)
            .limit(limit)
        )
        with self._db.transaction() as conn:
            ids = list(conn.scalars(old))
            for chunk in chunks(ids):
                conn.execute(carried.delete().where(carried.c.delivery_id.in_(chunk)))
                conn.execute(d.delete().where(d.c.id.in_(chunk)))
        return len(ids)

    def counts(self) -> tuple[int, int]:
        """How many deliveries are pending and how many are dead-lettered."""
        d = deliveries_table
        query = sa.select(d.c.status, sa.func.count()).group_by(d.c.status)
        with self._db.transaction() as conn:
            counts = {row[0]: row[1] for row in conn.execute(query)}
        return counts.get(DeliveryStatus.PENDING, 0), counts.get(DeliveryStatus.DEAD, 0)


def due_at() -> sa.ColumnElement[Any]:
    """When a pending delivery is due: a delivery leased by a process that died is due
    when its lease ends."""
    d = deliveries_table
    return sa.case(
        (d.c.lease_until > d.c.next_attempt_at, d.c.lease_until), else_=d.c.next_attempt_at
    )


def _claims(conn: Connection, delivery_ids: Sequence[int]) -> list[Claim]:
    """The claims of the deliveries ``delivery_ids``, each with the events it carries.

    Every IN list is chunked: a digest may carry more events than the
    database binds parameters in one statement (SQLite 32,766, PostgreSQL 65,535).
    """
    d, e, carried = deliveries_table, endpoints_table, digest_events_table
    rows = [
        row
        for chunk in chunks(delivery_ids)
        for row in conn.execute(
            sa.select(d.c.id, d.c.event_seq, d.c.attempts, d.c.digest_id, e.c.name)
            .join(e, e.c.id == d.c.endpoint_id)
            .where(among(conn, d.c.id, chunk))
        )
    ]
    rows.sort(key=lambda row: row.event_seq)
    # A digest's events are all in digest_events, its own event_seq among them.
    seqs = {row.id: [] if row.digest_id else [row.event_seq] for row in rows}
    digests = [row.id for row in rows if row.digest_id is not None]
    for chunk in chunks(digests):
        query = sa.select(carried).where(among(conn, carried.c.delivery_id, chunk))
        for row in conn.execute(query):
            seqs[row.delivery_id].append(row.event_seq)
    for listed in seqs.values():
        listed.sort()
    wanted = sorted({seq for listed in seqs.values() for seq in listed})
    events = {
        ev.seq: ev
        for chunk in chunks(wanted)
        for ev in events_where(conn, among(conn, events_table.c.seq, chunk))
    }
    return [
        Claim(
            delivery_id=row.id,
            endpoint=row.name,
            attempts=row.attempts,
            events=tuple(events[seq] for seq in seqs[row.id]),
            digest_id=row.digest_id,
        )
        for row in rows
    ]
