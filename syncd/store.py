"""The record's storage: the only module that speaks SQL.

SQLite (the embedded default, in WAL mode) and PostgreSQL (production) share
one schema.  Callers hand in frozen write commands and get frozen domain
objects back, never rows.  Everything one sync cycle learns is written by
``apply_cycle`` in a single transaction: papers, revisions and their events
appear together or not at all.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection, Engine

from syncd.errors import NotFoundError, StoreError
from syncd.faults import fault_point
from syncd.outbox import EndpointSpec, accepts
from syncd.record import Record, content_hash, split_arxiv_id

__all__ = [
    "Attempt",
    "Claim",
    "EndpointSummary",
    "Event",
    "NewRevision",
    "Paper",
    "PaperState",
    "PaperWrite",
    "Revision",
    "Store",
    "SyncRun",
    "SyncStats",
    "metadata",
]

T = TypeVar("T")

_JSON = sa.JSON().with_variant(JSONB(), "postgresql")
# A cycle still "running" after this long belongs to a process that died.
STALE_RUN_SECONDS = 3600.0
_TIME = sa.DateTime(timezone=True)

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

authors_table = sa.Table(
    "authors",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("created_at", _TIME, nullable=False),
)

papers_table = sa.Table(
    "papers",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("author_id", sa.ForeignKey("authors.id"), nullable=False),
    sa.Column("key", sa.String(120), nullable=False),
    sa.Column("arxiv_id", sa.String(40)),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("origin", sa.String(8), nullable=False),
    sa.Column("record", _JSON, nullable=False),
    sa.Column("record_hash", sa.String(32), nullable=False),
    sa.Column("absent_syncs", sa.Integer, nullable=False, default=0),
    sa.Column("created_at", _TIME, nullable=False),
    sa.Column("updated_at", _TIME, nullable=False),
    sa.UniqueConstraint("author_id", "key"),
    sa.UniqueConstraint("author_id", "arxiv_id"),
)

sync_runs_table = sa.Table(
    "sync_runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("author_id", sa.ForeignKey("authors.id"), nullable=False),
    sa.Column("started_at", _TIME, nullable=False),
    sa.Column("finished_at", _TIME),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("error", sa.Text),
    sa.Column("requests", sa.Integer, nullable=False, default=0),
    sa.Column("entries", sa.Integer, nullable=False, default=0),
    sa.Column("events", sa.Integer, nullable=False, default=0),
)

revisions_table = sa.Table(
    "revisions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("paper_id", sa.ForeignKey("papers.id"), nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("observed_at", _TIME, nullable=False),
    sa.Column("source", sa.String(200), nullable=False),
    sa.Column("version", sa.Integer),
    sa.Column("kinds", _JSON, nullable=False),
    sa.Column("changes", _JSON, nullable=False),
    sa.Column("record", _JSON, nullable=False),
    sa.Column("record_hash", sa.String(32), nullable=False),
    sa.Column("sync_run_id", sa.ForeignKey("sync_runs.id")),
    sa.UniqueConstraint("paper_id", "seq"),
)

events_table = sa.Table(
    "events",
    metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(40), nullable=False, unique=True),
    sa.Column("type", sa.String(32), nullable=False),
    sa.Column("created_at", _TIME, nullable=False),
    sa.Column("author_id", sa.ForeignKey("authors.id"), nullable=False),
    sa.Column("paper_id", sa.ForeignKey("papers.id"), nullable=False),
    sa.Column("revision_id", sa.ForeignKey("revisions.id")),
    sa.Column("sync_run_id", sa.ForeignKey("sync_runs.id")),
    sa.Column("kinds", _JSON, nullable=False),
    sa.Column("changes", _JSON, nullable=False),
)


endpoints_table = sa.Table(
    "endpoints",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("url", sa.Text, nullable=False),
    sa.Column("events", _JSON, nullable=False),
    sa.Column("kinds", _JSON, nullable=False),
    sa.Column("active", sa.Boolean, nullable=False),
    sa.Column("disabled_at", _TIME),
    sa.Column("disabled_reason", sa.Text),
    sa.Column("created_at", _TIME, nullable=False),
)

deliveries_table = sa.Table(
    "deliveries",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("event_seq", sa.ForeignKey("events.seq"), nullable=False),
    sa.Column("endpoint_id", sa.ForeignKey("endpoints.id"), nullable=False),
    sa.Column("paper_id", sa.ForeignKey("papers.id"), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("next_attempt_at", _TIME, nullable=False),
    sa.Column("lease_owner", sa.String(80)),
    sa.Column("lease_until", _TIME),
    sa.Column("last_status", sa.Integer),
    sa.Column("last_error", sa.Text),
    sa.Column("created_at", _TIME, nullable=False),
    sa.Column("delivered_at", _TIME),
    sa.UniqueConstraint("event_seq", "endpoint_id"),
    # In the claim's order, so a claim reads only as far as its batch.
    sa.Index("ix_deliveries_due", "status", "next_attempt_at", "event_seq"),
    # The claim's "no earlier pending event of this paper" test looks here.
    sa.Index("ix_deliveries_order", "endpoint_id", "paper_id", "status", "event_seq"),
)


# -- what the store hands out -------------------------------------------------


@dataclass(frozen=True, slots=True)
class PaperState:
    """A paper's bookkeeping without its record: cheap to load for a whole page."""

    id: int
    key: str
    arxiv_id: str | None
    status: str
    origin: str
    record_hash: str
    absent_syncs: int


@dataclass(frozen=True, slots=True)
class Paper:
    """A tracked paper as it stands now."""

    id: int
    author: str
    key: str
    arxiv_id: str | None
    status: str
    origin: str
    record: Record
    record_hash: str
    absent_syncs: int


@dataclass(frozen=True, slots=True)
class Revision:
    """One entry of a paper's append-only history."""

    seq: int
    observed_at: datetime
    source: str
    version: int | None
    kinds: tuple[str, ...]
    changes: dict[str, Any]
    record: Record


@dataclass(frozen=True, slots=True)
class Event:
    """A published change: what webhooks deliver and ``syncd events`` lists."""

    seq: int
    id: str
    type: str
    created_at: datetime
    author: str
    paper_key: str
    arxiv_id: str | None
    kinds: tuple[str, ...]
    changes: dict[str, Any]
    record: Record | None


@dataclass(frozen=True, slots=True)
class SyncRun:
    """One sync cycle of one author, successful or not."""

    id: int
    author: str
    started_at: datetime
    finished_at: datetime | None
    status: str
    error: str | None
    requests: int
    entries: int
    events: int


@dataclass(frozen=True, slots=True)
class Claim:
    """A delivery this process has leased: send it, then report how it went."""

    delivery_id: int
    endpoint: str
    url: str
    attempts: int
    event: Event


@dataclass(frozen=True, slots=True)
class Attempt:
    """How one delivery attempt went, as the dispatcher reports it.

    Not delivered and no ``retry_at``: dead-lettered, unless the endpoint is
    being disabled (a 410), when the delivery waits for it.
    """

    delivery_id: int
    status: int | None
    error: str | None = None
    delivered: bool = False
    retry_at: datetime | None = None
    disable_endpoint: bool = False


@dataclass(frozen=True, slots=True)
class EndpointSummary:
    """An endpoint and the state of its deliveries, for ``syncd webhooks list``."""

    name: str
    url: str
    active: bool
    disabled_at: datetime | None
    disabled_reason: str | None
    pending: int
    delivered: int
    dead: int


# -- what callers hand in -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class NewRevision:
    """A revision to append: the record observed and how it differs from the last one."""

    record: Record
    source: str
    kinds: tuple[str, ...] = ()
    changes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PaperWrite:
    """Insert (``paper_id is None``) or update one paper, append revisions, publish an event.

    The event, if any, is attached to the last appended revision.
    """

    key: str
    arxiv_id: str | None
    status: str
    origin: str
    paper_id: int | None = None
    absent_syncs: int = 0
    revisions: tuple[NewRevision, ...] = ()
    event_type: str | None = None
    event_kinds: tuple[str, ...] = ()
    event_changes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SyncStats:
    """Counters a cycle reports about itself."""

    requests: int = 0
    entries: int = 0


class Store:
    """All reads and writes of syncd's database."""

    def __init__(self, url: str) -> None:
        # The schema is Alembic's business (syncd.migrate); the store only uses it.
        self._engine = _create_engine(url)

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine, for schema migrations."""
        return self._engine

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._engine.dialect.name

    def close(self) -> None:
        """Release every pooled connection."""
        self._engine.dispose()

    # -- writes -----------------------------------------------------------

    def import_seeds(self, author: str, papers: Sequence[PaperWrite]) -> int:
        """Store seed papers whose key the author does not have yet; return how many were new.

        All or nothing: one transaction.  Seeding publishes no events.
        """
        with self._transaction() as conn:
            # Locked: replicas seeding at the same moment take turns.
            author_id = self._author_id(conn, author, lock=True)
            known = set(
                conn.scalars(
                    sa.select(papers_table.c.key).where(papers_table.c.author_id == author_id)
                )
            )
            fresh = [p for p in papers if p.key not in known]
            self._write_papers(conn, author, author_id, fresh, run_id=None, endpoints=[])
            return len(fresh)

    def start_sync_run(
        self, author: str, *, unless_started_within: float | None = None
    ) -> int | None:
        """Record that a cycle of ``author`` has begun; return its id.

        With ``unless_started_within``, this is the replicas' claim: the
        author's row is locked, and if any process started a cycle of the
        author that many seconds ago or less, nothing is recorded and None
        is returned.  A replica killed mid-cycle holds its claim no longer.
        """
        now = _now()
        with self._transaction() as conn:
            author_id = self._author_id(conn, author, lock=unless_started_within is not None)
            # A process killed mid-cycle leaves its run "running"; close those
            # that no live cycle can still own.
            stale = now - timedelta(seconds=max(unless_started_within or 0.0, STALE_RUN_SECONDS))
            conn.execute(
                sync_runs_table.update()
                .where(sync_runs_table.c.author_id == author_id)
                .where(sync_runs_table.c.status == "running")
                .where(sync_runs_table.c.started_at < stale)
                .values(status="abandoned", error="the process running this cycle stopped")
            )
            if unless_started_within is not None:
                last = conn.scalar(
                    sa.select(sa.func.max(sync_runs_table.c.started_at)).where(
                        sync_runs_table.c.author_id == author_id
                    )
                )
                if last is not None and _utc(last) > now - timedelta(seconds=unless_started_within):
                    return None
            return int(
                conn.execute(
                    sync_runs_table.insert()
                    .values(author_id=author_id, started_at=now, status="running")
                    .returning(sync_runs_table.c.id)
                ).scalar_one()
            )

    def fail_sync_run(self, run_id: int, error: str, stats: SyncStats) -> None:
        """Mark a cycle failed; nothing it learned is stored."""
        with self._transaction() as conn:
            conn.execute(
                sync_runs_table.update()
                .where(sync_runs_table.c.id == run_id)
                .values(
                    status="failed",
                    error=error,
                    finished_at=_now(),
                    requests=stats.requests,
                    entries=stats.entries,
                )
            )

    def apply_cycle(
        self, run_id: int, author: str, writes: Sequence[PaperWrite], stats: SyncStats
    ) -> list[Event]:
        """Write a good cycle's papers, revisions and events and close its run, atomically."""
        with self._transaction() as conn:
            author_id = self._author_id(conn, author)
            endpoints = self._live_endpoints(conn)
            events = self._write_papers(
                conn, author, author_id, writes, run_id=run_id, endpoints=endpoints
            )
            fault_point("store.cycle_written")
            conn.execute(
                sync_runs_table.update()
                .where(sync_runs_table.c.id == run_id)
                .values(
                    status="ok",
                    finished_at=_now(),
                    requests=stats.requests,
                    entries=stats.entries,
                    events=len(events),
                )
            )
        fault_point("store.cycle_committed")
        return events

    # -- outbox -----------------------------------------------------------

    def register_endpoints(self, specs: Sequence[EndpointSpec]) -> None:
        """Make the endpoint table match the configuration.

        New names are added, a changed URL re-enables a disabled endpoint
        (the operator fixed it), and names no longer configured go inactive:
        their deliveries wait, they are never sent without a secret.
        """
        with self._transaction() as conn:
            rows = {r.name: r for r in conn.execute(sa.select(endpoints_table))}
            for spec in specs:
                values: dict[str, Any] = {
                    "url": spec.url,
                    "events": list(spec.events),
                    "kinds": list(spec.kinds),
                }
                row = rows.get(spec.name)
                if row is None:
                    conn.execute(
                        endpoints_table.insert().values(
                            name=spec.name, active=True, created_at=_now(), **values
                        )
                    )
                    continue
                if row.url != spec.url:
                    values |= {"disabled_at": None, "disabled_reason": None}
                conn.execute(
                    endpoints_table.update()
                    .where(endpoints_table.c.id == row.id)
                    .values(active=True, **values)
                )
            gone = set(rows) - {spec.name for spec in specs}
            if gone:
                conn.execute(
                    endpoints_table.update()
                    .where(endpoints_table.c.name.in_(gone))
                    .values(active=False)
                )

    def claim_deliveries(self, owner: str, lease_seconds: float, limit: int) -> list[Claim]:
        """Lease up to ``limit`` due deliveries for ``owner``.

        A delivery waits while an earlier event of the same paper is still
        pending for the same endpoint, so each receiver sees a paper's events
        in order.  Rows are locked with SKIP LOCKED on PostgreSQL, and every
        lease is taken by a conditional update, so two workers never hold one.
        """
        now = _now()
        until = now + timedelta(seconds=lease_seconds)
        d, earlier = deliveries_table, deliveries_table.alias("earlier")
        blocked = (
            sa.exists()
            .where(earlier.c.endpoint_id == d.c.endpoint_id)
            .where(earlier.c.paper_id == d.c.paper_id)
            .where(earlier.c.status == "pending")
            .where(earlier.c.event_seq < d.c.event_seq)
        )
        due = (
            sa.select(d.c.id)
            .join(endpoints_table, endpoints_table.c.id == d.c.endpoint_id)
            .where(d.c.status == "pending", d.c.next_attempt_at <= now)
            .where(sa.or_(d.c.lease_until.is_(None), d.c.lease_until < now))
            .where(endpoints_table.c.active.is_(True), endpoints_table.c.disabled_at.is_(None))
            .where(~blocked)
            .order_by(d.c.next_attempt_at, d.c.event_seq)
            .limit(limit)
        )
        if self.dialect == "postgresql":
            due = due.with_for_update(skip_locked=True, of=d)
        with self._transaction() as conn:
            candidates = conn.scalars(due).all()
            claimed = []
            if candidates:
                claimed = list(
                    conn.scalars(
                        d.update()
                        .where(d.c.id.in_(candidates), d.c.status == "pending")
                        .where(sa.or_(d.c.lease_until.is_(None), d.c.lease_until < now))
                        .values(lease_owner=owner, lease_until=until)
                        .returning(d.c.id)
                    )
                )
            claims = self._claims(conn, claimed) if claimed else []
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
        now = _now()
        # One statement per status code, not per delivery: on PostgreSQL each
        # row of an executemany is a statement the server runs (30 µs each).
        delivered: dict[int | None, list[int]] = {}
        for attempt in attempts:
            if attempt.delivered:
                delivered.setdefault(attempt.status, []).append(attempt.delivery_id)
        with self._transaction() as conn:
            for status, ids in delivered.items():
                for chunk in _chunks(ids):
                    conn.execute(
                        d.update()
                        .where(d.c.id.in_(chunk), d.c.status == "pending")
                        .values(
                            status="delivered",
                            delivered_at=now,
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
                    d.c.id == attempt.delivery_id, d.c.status == "pending", d.c.lease_owner == owner
                )
                if attempt.retry_at is not None:
                    values["next_attempt_at"] = attempt.retry_at
                elif not attempt.disable_endpoint:
                    values["status"] = "dead"
                changed = conn.execute(
                    d.update().where(condition).values(values).returning(d.c.endpoint_id)
                ).first()
                if changed is not None and attempt.disable_endpoint:
                    conn.execute(
                        endpoints_table.update()
                        .where(endpoints_table.c.id == changed.endpoint_id)
                        .values(
                            disabled_at=now,
                            disabled_reason=f"HTTP {attempt.status} from receiver",
                        )
                    )

    def renew_leases(self, owner: str, delivery_ids: Sequence[int], lease_seconds: float) -> None:
        """Extend ``owner``'s leases on ``delivery_ids`` to ``lease_seconds`` from now."""
        d = deliveries_table
        until = _now() + timedelta(seconds=lease_seconds)
        with self._transaction() as conn:
            for chunk in _chunks(delivery_ids):
                conn.execute(
                    d.update()
                    .where(d.c.id.in_(chunk), d.c.lease_owner == owner, d.c.status == "pending")
                    .values(lease_until=until)
                )

    def release_leases(self, owner: str) -> int:
        """Give back every lease ``owner`` holds (clean shutdown); return how many."""
        d = deliveries_table
        with self._transaction() as conn:
            return conn.execute(
                d.update()
                .where(d.c.lease_owner == owner, d.c.status == "pending")
                .values(lease_owner=None, lease_until=None)
            ).rowcount

    def redeliver(self, event_id: str | None = None, *, dead: bool = False) -> int:
        """Queue an event's deliveries (or every dead letter) again, now; return how many."""
        d = deliveries_table
        query = d.update().values(
            status="pending", attempts=0, next_attempt_at=_now(), lease_owner=None, lease_until=None
        )
        with self._transaction() as conn:
            if event_id is not None:
                seq = conn.scalar(
                    sa.select(events_table.c.seq).where(events_table.c.id == event_id)
                )
                if seq is None:
                    raise NotFoundError(f"no event with id {event_id!r}")
                query = query.where(d.c.event_seq == seq)
            if dead:
                query = query.where(d.c.status == "dead")
            return conn.execute(query).rowcount

    def endpoint_summaries(self) -> list[EndpointSummary]:
        """Every endpoint ever configured, with its delivery counts."""
        d, e = deliveries_table, endpoints_table

        def count(status: str) -> sa.ColumnElement[int]:
            return sa.func.count(d.c.id).filter(d.c.status == status)

        query = (
            sa.select(e, count("pending"), count("delivered"), count("dead"))
            .outerjoin(d, d.c.endpoint_id == e.c.id)
            .group_by(e.c.id)
            .order_by(e.c.name)
        )
        with self._transaction() as conn:
            return [
                EndpointSummary(
                    name=row.name,
                    url=row.url,
                    active=row.active,
                    disabled_at=_utc(row.disabled_at) if row.disabled_at else None,
                    disabled_reason=row.disabled_reason,
                    pending=row[-3],
                    delivered=row[-2],
                    dead=row[-1],
                )
                for row in conn.execute(query)
            ]

    def next_delivery_due(self) -> datetime | None:
        """When the earliest pending delivery to a live endpoint is due; None if there is none."""
        d, e = deliveries_table, endpoints_table
        # A delivery leased by a process that died is due when its lease ends.
        due = sa.case(
            (d.c.lease_until > d.c.next_attempt_at, d.c.lease_until), else_=d.c.next_attempt_at
        )
        query = (
            sa.select(sa.func.min(due))
            .join(e, e.c.id == d.c.endpoint_id)
            .where(d.c.status == "pending", e.c.active.is_(True), e.c.disabled_at.is_(None))
        )
        with self._transaction() as conn:
            found = conn.scalar(query)
        return _utc(found) if found is not None else None

    def outbox_counts(self) -> tuple[int, int]:
        """How many deliveries are pending and how many are dead-lettered."""
        d = deliveries_table
        query = sa.select(d.c.status, sa.func.count()).group_by(d.c.status)
        with self._transaction() as conn:
            counts = {row[0]: row[1] for row in conn.execute(query)}
        return counts.get("pending", 0), counts.get("dead", 0)

    def paper_counts(self) -> dict[str, int]:
        """How many papers have each status."""
        query = sa.select(papers_table.c.status, sa.func.count()).group_by(papers_table.c.status)
        with self._transaction() as conn:
            return {row[0]: row[1] for row in conn.execute(query)}

    def last_successful_sync(self) -> datetime | None:
        """When the most recent successful cycle finished; None if none ever did."""
        query = sa.select(sa.func.max(sync_runs_table.c.finished_at)).where(
            sync_runs_table.c.status == "ok"
        )
        with self._transaction() as conn:
            found = conn.scalar(query)
        return _utc(found) if found is not None else None

    def ping(self) -> bool:
        """Whether the database answers a trivial query."""
        try:
            with self._transaction() as conn:
                conn.execute(sa.text("SELECT 1"))
        except StoreError:
            return False
        return True

    def _claims(self, conn: Connection, delivery_ids: Sequence[int]) -> list[Claim]:
        d, e = deliveries_table, endpoints_table
        rows = conn.execute(
            sa.select(d.c.id, d.c.event_seq, d.c.attempts, e.c.name, e.c.url)
            .join(e, e.c.id == d.c.endpoint_id)
            .where(d.c.id.in_(delivery_ids))
            .order_by(d.c.event_seq)
        ).all()
        events = {
            ev.seq: ev
            for ev in self._events_where(conn, events_table.c.seq.in_([r.event_seq for r in rows]))
        }
        return [
            Claim(
                delivery_id=row.id,
                endpoint=row.name,
                url=row.url,
                attempts=row.attempts,
                event=events[row.event_seq],
            )
            for row in rows
        ]

    # -- reads ------------------------------------------------------------

    def papers(self, author: str | None = None) -> list[Paper]:
        """Every paper, or one author's, ordered by author and key."""
        query = _paper_select().order_by(authors_table.c.name, papers_table.c.key)
        if author is not None:
            query = query.where(authors_table.c.name == author)
        with self._transaction() as conn:
            return [_paper(row) for row in conn.execute(query)]

    def paper_states(self, author: str, arxiv_ids: Collection[str]) -> dict[str, PaperState]:
        """The author's papers among ``arxiv_ids``, by arXiv id; unknown ids are left out."""
        found: dict[str, PaperState] = {}
        with self._transaction() as conn:
            for chunk in _chunks(list(arxiv_ids)):
                query = _state_select(author).where(papers_table.c.arxiv_id.in_(chunk))
                found |= {row.arxiv_id: _state(row) for row in conn.execute(query)}
        return found

    def papers_with_ids(self, author: str, arxiv_ids: Collection[str]) -> list[Paper]:
        """The author's papers among ``arxiv_ids``, records included."""
        papers: list[Paper] = []
        with self._transaction() as conn:
            for chunk in _chunks(list(arxiv_ids)):
                query = (
                    _paper_select()
                    .where(authors_table.c.name == author)
                    .where(papers_table.c.arxiv_id.in_(chunk))
                )
                papers += [_paper(row) for row in conn.execute(query)]
        return papers

    def papers_with_status(self, author: str, status: str) -> list[Paper]:
        """The author's papers of one status (e.g. the few ``unlinked`` seed papers)."""
        query = (
            _paper_select()
            .where(authors_table.c.name == author, papers_table.c.status == status)
            .order_by(papers_table.c.id)
        )
        with self._transaction() as conn:
            return [_paper(row) for row in conn.execute(query)]

    def tracked_count(self, author: str) -> int:
        """How many of the author's papers are tracked."""
        query = (
            sa.select(sa.func.count())
            .select_from(papers_table.join(authors_table))
            .where(authors_table.c.name == author, papers_table.c.status == "tracked")
        )
        with self._transaction() as conn:
            return int(conn.scalar(query) or 0)

    def tracked_missing_from(self, author: str, seen: Collection[str]) -> list[PaperState]:
        """The author's tracked papers whose arXiv id is not in ``seen``.

        Streams the tracked ids so a large record is never loaded whole.
        """
        query = _state_select(author).where(papers_table.c.status == "tracked")
        with self._transaction() as conn:
            rows = conn.execution_options(yield_per=5000).execute(query)
            return [_state(row) for row in rows if row.arxiv_id not in seen]

    def identity_basis(self, author: str) -> tuple[set[str], set[str]]:
        """Author names and categories of the author's tracked and seed papers.

        What a new entry must share something with to be taken as the
        author's own (see ``syncd.linking.identify``).
        """
        query = (
            sa.select(papers_table.c.record)
            .join(authors_table)
            .where(authors_table.c.name == author)
            .where(papers_table.c.status.in_(("tracked", "unlinked")))
        )
        names: set[str] = set()
        categories: set[str] = set()
        with self._transaction() as conn:
            for (record,) in conn.execution_options(yield_per=2000).execute(query):
                names.update(record.get("authors") or ())
                categories.update(record.get("categories") or ())
                if record.get("primary_category"):
                    categories.add(record["primary_category"])
        return names, categories

    def find_paper(self, ref: str) -> Paper | None:
        """The paper whose key or arXiv id (version ignored) is ``ref``; None when there is none."""
        try:
            arxiv_id: str | None = split_arxiv_id(ref)[0]
        except ValueError:
            arxiv_id = None
        condition = papers_table.c.key == ref
        if arxiv_id is not None:
            condition = sa.or_(condition, papers_table.c.arxiv_id == arxiv_id)
        with self._transaction() as conn:
            row = conn.execute(_paper_select().where(condition).order_by(papers_table.c.id)).first()
        return _paper(row) if row is not None else None

    def history(self, paper_id: int) -> list[Revision]:
        """A paper's revisions, oldest first."""
        query = (
            sa.select(revisions_table)
            .where(revisions_table.c.paper_id == paper_id)
            .order_by(revisions_table.c.seq)
        )
        with self._transaction() as conn:
            return [_revision(row) for row in conn.execute(query)]

    def events(self, since: str | None = None) -> list[Event]:
        """Events in publication order, all or only those after event ``since``.

        Raises ``NotFoundError`` when ``since`` names no event.
        """
        with self._transaction() as conn:
            condition: sa.ColumnElement[bool] = sa.true()
            if since is not None:
                seq = conn.scalar(sa.select(events_table.c.seq).where(events_table.c.id == since))
                if seq is None:
                    raise NotFoundError(f"no event with id {since!r}")
                condition = events_table.c.seq > seq
            return self._events_where(conn, condition)

    def sync_runs(self, author: str | None = None, limit: int = 20) -> list[SyncRun]:
        """The most recent sync cycles, newest first."""
        query = (
            sa.select(sync_runs_table, authors_table.c.name.label("author"))
            .join(authors_table)
            .order_by(sync_runs_table.c.id.desc())
            .limit(limit)
        )
        if author is not None:
            query = query.where(authors_table.c.name == author)
        with self._transaction() as conn:
            return [_sync_run(row) for row in conn.execute(query)]

    # -- internals --------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        try:
            with self._engine.begin() as conn:
                yield conn
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(f"database error: {_brief(exc)}") from exc

    def _author_id(self, conn: Connection, name: str, *, lock: bool = False) -> int:
        """The author's id, created if new; ``lock`` holds the row until the transaction ends."""
        insert = sqlite_insert if self.dialect == "sqlite" else postgresql_insert
        conn.execute(
            insert(authors_table)
            .values(name=name, created_at=_now())
            .on_conflict_do_nothing(index_elements=["name"])
        )
        query = sa.select(authors_table.c.id).where(authors_table.c.name == name)
        if lock:
            query = query.with_for_update()
        return int(conn.execute(query).scalar_one())

    def _write_papers(
        self,
        conn: Connection,
        author: str,
        author_id: int,
        writes: Sequence[PaperWrite],
        *,
        run_id: int | None,
        endpoints: Sequence[sa.Row[Any]],
    ) -> list[Event]:
        """Apply ``writes`` with a few executemany statements; return the published events.

        Each event's outbox rows, one per accepting endpoint, go in the same
        transaction: an event is never without its deliveries.  Ids are read
        back by unique keys rather than RETURNING, which would make SQLite
        insert row by row.
        """
        now = _now()
        # Each record is hashed once, for its revision and, if latest, its paper.
        hashes = {id(r.record): content_hash(r.record) for w in writes for r in w.revisions}
        paper_ids = self._insert_papers(conn, author_id, writes, now, hashes)
        pairs = list(zip(writes, paper_ids, strict=True))
        last_seq = self._last_revision_seqs(
            conn, [paper_id for write, paper_id in pairs if write.paper_id and write.revisions]
        )
        revision_rows: list[dict[str, Any]] = [
            {
                "paper_id": paper_id,
                "seq": last_seq.get(paper_id, 0) + offset,
                "observed_at": now,
                "source": revision.source,
                "version": revision.record.version,
                "kinds": list(revision.kinds),
                "changes": dict(revision.changes),
                "record": revision.record.to_dict(),
                "record_hash": hashes[id(revision.record)],
                "sync_run_id": run_id,
            }
            for write, paper_id in pairs
            for offset, revision in enumerate(write.revisions, start=1)
        ]
        if revision_rows:
            conn.execute(revisions_table.insert(), revision_rows)
        self._update_papers(conn, writes, now, hashes, last_seq)
        announced = [(w, paper_id) for w, paper_id in pairs if w.event_type is not None]
        # the event of a write is attached to its last revision
        last_revision = self._last_revision_ids(
            conn, [paper_id for write, paper_id in announced if write.revisions]
        )
        # One random part per batch and a counter: uuid4 per event costs a
        # system call each, and 96 random bits already make ids unique.
        prefix = uuid.uuid4().hex[:24]
        event_rows: list[dict[str, Any]] = [
            {
                "id": f"evt_{prefix}{number:08x}",
                "type": write.event_type,
                "created_at": now,
                "author_id": author_id,
                "paper_id": paper_id,
                "revision_id": last_revision.get(paper_id) if write.revisions else None,
                "sync_run_id": run_id,
                "kinds": list(write.event_kinds),
                "changes": dict(write.event_changes),
            }
            for number, (write, paper_id) in enumerate(announced)
        ]
        if event_rows:
            conn.execute(events_table.insert(), event_rows)
        event_seqs = self._event_seqs(conn, [row["id"] for row in event_rows])
        delivery_rows = [
            {
                "event_seq": seq,
                "endpoint_id": endpoint.id,
                "paper_id": paper_id,
                "status": "pending",
                "attempts": 0,
                "next_attempt_at": now,
                "created_at": now,
            }
            for (write, paper_id), seq in zip(announced, event_seqs, strict=True)
            for endpoint in endpoints
            if accepts(endpoint.events, endpoint.kinds, write.event_type or "", write.event_kinds)
        ]
        if delivery_rows:
            conn.execute(deliveries_table.insert(), delivery_rows)
        return [
            Event(
                seq=seq,
                id=row["id"],
                type=row["type"],
                created_at=now,
                author=author,
                paper_key=write.key,
                arxiv_id=write.arxiv_id,
                kinds=tuple(write.event_kinds),
                changes=row["changes"],
                record=write.revisions[-1].record if write.revisions else None,
            )
            for (write, _), row, seq in zip(announced, event_rows, event_seqs, strict=True)
        ]

    def _insert_papers(
        self,
        conn: Connection,
        author_id: int,
        writes: Sequence[PaperWrite],
        now: datetime,
        hashes: Mapping[int, str],
    ) -> list[int]:
        """Insert the new papers; return every write's paper id, in order."""
        inserts: list[dict[str, Any]] = [
            {
                "author_id": author_id,
                "key": write.key,
                "arxiv_id": write.arxiv_id,
                "status": write.status,
                "origin": write.origin,
                "absent_syncs": write.absent_syncs,
                "record": write.revisions[-1].record.to_dict(),
                "record_hash": hashes[id(write.revisions[-1].record)],
                "created_at": now,
                "updated_at": now,
            }
            for write in writes
            if write.paper_id is None
        ]
        if inserts:
            conn.execute(papers_table.insert(), inserts)
        new_ids = self._paper_ids(conn, author_id, [row["key"] for row in inserts])
        return [w.paper_id if w.paper_id is not None else new_ids[w.key] for w in writes]

    def _update_papers(
        self,
        conn: Connection,
        writes: Sequence[PaperWrite],
        now: datetime,
        hashes: Mapping[int, str],
        last_seq: Mapping[int, int],
    ) -> None:
        """Update the known papers, after their new revisions are written.

        A paper's record is its latest revision's, copied in SQL rather than
        encoded a second time: a busy cycle rewrites thousands of records.
        """
        p, r = papers_table, revisions_table
        latest_record = (
            sa.select(r.c.record)
            .where(r.c.paper_id == p.c.id, r.c.seq == sa.bindparam("b_seq"))
            .scalar_subquery()
        )
        rows: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
        for write in writes:
            if write.paper_id is None:
                continue
            row: dict[str, Any] = {
                "b_id": write.paper_id,
                "arxiv_id": write.arxiv_id,  # set when a seed paper is linked
                "status": write.status,
                "absent_syncs": write.absent_syncs,
                "updated_at": now,
            }
            if write.revisions:
                row["record_hash"] = hashes[id(write.revisions[-1].record)]
                row["b_seq"] = last_seq.get(write.paper_id, 0) + len(write.revisions)
            rows[bool(write.revisions)].append(row)
        # executemany needs one shape per statement: with or without a new record
        for with_record, same_shape in rows.items():
            if not same_shape:
                continue
            values: dict[str, Any] = {
                c: sa.bindparam(c) for c in ("arxiv_id", "status", "absent_syncs", "updated_at")
            }
            if with_record:
                values |= {"record_hash": sa.bindparam("record_hash"), "record": latest_record}
            statement = p.update().where(p.c.id == sa.bindparam("b_id")).values(values)
            conn.execute(statement, same_shape)

    def _paper_ids(self, conn: Connection, author_id: int, keys: Sequence[str]) -> dict[str, int]:
        ids: dict[str, int] = {}
        for chunk in _chunks(keys):
            query = sa.select(papers_table.c.key, papers_table.c.id).where(
                papers_table.c.author_id == author_id, papers_table.c.key.in_(chunk)
            )
            ids |= {row.key: row.id for row in conn.execute(query)}
        return ids

    def _last_revision_seqs(self, conn: Connection, paper_ids: Sequence[int]) -> dict[int, int]:
        return self._per_paper(conn, sa.func.max(revisions_table.c.seq), paper_ids)

    def _last_revision_ids(self, conn: Connection, paper_ids: Sequence[int]) -> dict[int, int]:
        return self._per_paper(conn, sa.func.max(revisions_table.c.id), paper_ids)

    def _per_paper(
        self, conn: Connection, aggregate: sa.ColumnElement[Any], paper_ids: Sequence[int]
    ) -> dict[int, int]:
        found: dict[int, int] = {}
        for chunk in _chunks(paper_ids):
            query = (
                sa.select(revisions_table.c.paper_id, aggregate)
                .where(revisions_table.c.paper_id.in_(chunk))
                .group_by(revisions_table.c.paper_id)
            )
            found |= {row[0]: row[1] for row in conn.execute(query)}
        return found

    def _event_seqs(self, conn: Connection, event_ids: Sequence[str]) -> list[int]:
        """The seqs of events just inserted, in the order of ``event_ids``."""
        seqs: dict[str, int] = {}
        for chunk in _chunks(event_ids):
            query = sa.select(events_table.c.id, events_table.c.seq).where(
                events_table.c.id.in_(chunk)
            )
            seqs |= {row.id: row.seq for row in conn.execute(query)}
        return [seqs[event_id] for event_id in event_ids]

    def _live_endpoints(self, conn: Connection) -> list[sa.Row[Any]]:
        query = sa.select(endpoints_table).where(
            endpoints_table.c.active.is_(True), endpoints_table.c.disabled_at.is_(None)
        )
        return list(conn.execute(query))

    def _events_where(self, conn: Connection, condition: sa.ColumnElement[bool]) -> list[Event]:
        query = (
            sa.select(
                events_table,
                authors_table.c.name.label("author"),
                papers_table.c.key.label("paper_key"),
                papers_table.c.arxiv_id,
                revisions_table.c.record,
            )
            .join(authors_table, events_table.c.author_id == authors_table.c.id)
            .join(papers_table, events_table.c.paper_id == papers_table.c.id)
            .outerjoin(revisions_table, events_table.c.revision_id == revisions_table.c.id)
            .where(condition)
            .order_by(events_table.c.seq)
        )
        return [_event(row) for row in conn.execute(query)]


def _create_engine(url: str) -> Engine:
    if not url.startswith("sqlite"):
        return sa.create_engine(url, pool_pre_ping=True)
    database = sa.engine.make_url(url).database
    if database and database != ":memory:":
        folder = Path(database).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a file in the way, no permission: exit 1, one line
            reason = exc.strerror or str(exc)
            raise StoreError(f"cannot create the database folder {folder}: {reason}") from None
    engine = sa.create_engine(url, connect_args={"timeout": 30})
    sa.event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers (the CLI, the HTTP API) work while a cycle writes.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _state_select(author: str) -> sa.Select[Any]:
    p = papers_table
    return (
        sa.select(
            p.c.id, p.c.key, p.c.arxiv_id, p.c.status, p.c.origin, p.c.record_hash, p.c.absent_syncs
        )
        .join(authors_table)
        .where(authors_table.c.name == author)
    )


def _state(row: sa.Row[Any]) -> PaperState:
    return PaperState(
        id=row.id,
        key=row.key,
        arxiv_id=row.arxiv_id,
        status=row.status,
        origin=row.origin,
        record_hash=row.record_hash,
        absent_syncs=row.absent_syncs,
    )


def _chunks(items: Sequence[T], size: int = 500) -> Iterator[Sequence[T]]:
    # Bound IN lists: SQLite caps bound parameters, and huge lists plan badly.
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _paper_select() -> sa.Select[Any]:
    return sa.select(papers_table, authors_table.c.name.label("author")).join(authors_table)


def _now() -> datetime:
    return datetime.now(UTC)


def _utc(value: datetime) -> datetime:
    # SQLite hands back naive datetimes; everything we wrote was UTC.
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _brief(exc: sa.exc.SQLAlchemyError) -> str:
    # The driver's own message, without SQLAlchemy's statement and parameter dump.
    original = getattr(exc, "orig", None)
    text = str(original if original is not None else exc)
    return " ".join(text.split())[:500]


def _paper(row: sa.Row[Any]) -> Paper:
    return Paper(
        id=row.id,
        author=row.author,
        key=row.key,
        arxiv_id=row.arxiv_id,
        status=row.status,
        origin=row.origin,
        record=Record.from_dict(row.record),
        record_hash=row.record_hash,
        absent_syncs=row.absent_syncs,
    )


def _revision(row: sa.Row[Any]) -> Revision:
    return Revision(
        seq=row.seq,
        observed_at=_utc(row.observed_at),
        source=row.source,
        version=row.version,
        kinds=tuple(row.kinds),
        changes=row.changes,
        record=Record.from_dict(row.record),
    )


def _event(row: sa.Row[Any]) -> Event:
    return Event(
        seq=row.seq,
        id=row.id,
        type=row.type,
        created_at=_utc(row.created_at),
        author=row.author,
        paper_key=row.paper_key,
        arxiv_id=row.arxiv_id,
        kinds=tuple(row.kinds),
        changes=row.changes,
        record=Record.from_dict(row.record) if row.record is not None else None,
    )


def _sync_run(row: sa.Row[Any]) -> SyncRun:
    return SyncRun(
        id=row.id,
        author=row.author,
        started_at=_utc(row.started_at),
        finished_at=_utc(row.finished_at) if row.finished_at is not None else None,
        status=row.status,
        error=row.error,
        requests=row.requests,
        entries=row.entries,
        events=row.events,
    )
