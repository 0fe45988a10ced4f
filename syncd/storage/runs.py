"""Sync runs: one row per cycle of one author, and the replicas' claims on cycles."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.model import SyncRun, SyncStanding, SyncStats, SyncTally
from syncd.domain.vocabulary import RunStatus
from syncd.errors import StoreError
from syncd.storage import rows
from syncd.storage.database import Database, chunks, now, utc
from syncd.storage.groups import group_member_ids
from syncd.storage.liveness import RunLiveness
from syncd.storage.papers import author_id
from syncd.storage.schema import (
    authors_table,
    group_members_table,
    groups_table,
    sync_runs_table,
)

__all__ = ["STALE_RUN_SECONDS", "SyncRuns", "finish_run", "standing_is"]

# A cycle still "running" after this long is stuck, if its process lives at all.
STALE_RUN_SECONDS = 3600.0
# Only these claim an author's cycle: a failed or abandoned run did not sync it.
_CLAIMING = (RunStatus.RUNNING, RunStatus.OK)
_ABANDONED = "the process running this cycle stopped"
_FAILED = (RunStatus.FAILED, RunStatus.ABANDONED)


class SyncRuns:
    """Starting, failing and listing sync cycles.

    A failure that cannot be recorded because the database is what failed is
    kept in memory and recorded by the next ``start`` that reaches the
    database, so no run of this process stays "running" after an outage.
    A run whose process ended without closing it (killed) is closed as
    abandoned by the next ``start`` of any process (see ``RunLiveness``).
    """

    def __init__(self, db: Database) -> None:
        self._db = db
        self._unrecorded: dict[int, tuple[str, SyncStats]] = {}
        self._liveness = RunLiveness(db)

    def start(self, author: str, *, unless_started_within: float | None = None) -> int | None:
        """Record that a cycle of ``author`` has begun; return its id.

        With ``unless_started_within``, this is the replicas' claim: the
        author's row is locked, and if any process started a cycle of the
        author that many seconds ago or less, nothing is recorded and None
        is returned.  Only a run that is running or succeeded claims: a failed
        one, or one whose process is gone (closed here as abandoned), does not.
        The run stays marked as this process's until ``release``.
        """
        run_id = None
        backend_pid = self._liveness.backend_pid()
        try:
            with self._db.transaction() as conn:
                recorded = self._record_failures(conn)
                self._abandon_orphans(conn)
                run_id = self._claim(conn, author, unless_started_within, backend_pid)
                if run_id is not None:
                    # Before the run is visible to others: never seen without its mark.
                    self._liveness.hold(run_id)
        except BaseException:
            if run_id is not None:
                self._liveness.release(run_id)
            raise
        self._forget(recorded)
        return run_id

    def release(self, run_id: int) -> None:
        """Let go of a run this process started: it ended, recorded or not."""
        self._liveness.release(run_id)

    def close(self) -> None:
        """Let go of every run of this process (it is shutting down)."""
        self._liveness.close()

    def _abandon_orphans(self, conn: Connection) -> None:
        """Close as abandoned every run still "running" that no process runs any more."""
        runs = sync_runs_table
        running = conn.execute(
            sa.select(runs.c.id, runs.c.backend_pid).where(runs.c.status == RunStatus.RUNNING)
        ).all()
        orphans = [row.id for row in running if not self._liveness.alive(conn, *row)]
        for chunk in chunks(orphans):
            conn.execute(
                runs.update()
                .where(runs.c.id.in_(chunk), runs.c.status == RunStatus.RUNNING)
                .values(status=RunStatus.ABANDONED, error=_ABANDONED, finished_at=now())
            )

    def _claim(
        self,
        conn: Connection,
        author: str,
        unless_started_within: float | None,
        backend_pid: int | None,
    ) -> int | None:
        """Insert the run unless another one claims the author (see ``start``)."""
        started = now()
        runs = sync_runs_table
        owner = author_id(self._db, conn, author, lock=unless_started_within is not None)
        # A live process stuck in a cycle this long holds it no more.
        stale = started - timedelta(seconds=max(unless_started_within or 0.0, STALE_RUN_SECONDS))
        conn.execute(
            runs.update()
            .where(runs.c.author_id == owner)
            .where(runs.c.status == RunStatus.RUNNING)
            .where(runs.c.started_at < stale)
            .values(status=RunStatus.ABANDONED, error=_ABANDONED, finished_at=started)
        )
        if unless_started_within is not None:
            last = conn.scalar(
                sa.select(sa.func.max(runs.c.started_at))
                .where(runs.c.author_id == owner)
                .where(runs.c.status.in_(_CLAIMING))
            )
            window = timedelta(seconds=unless_started_within)
            if last is not None and utc(last) > started - window:
                return None
        return int(
            conn.execute(
                runs.insert()
                .values(
                    author_id=owner,
                    started_at=started,
                    status=RunStatus.RUNNING,
                    backend_pid=backend_pid,
                )
                .returning(runs.c.id)
            ).scalar_one()
        )

    def fail(self, run_id: int, error: str, stats: SyncStats) -> bool:
        """Mark a cycle failed; nothing it learned is stored.

        Returns whether that was recorded now; if the database does not
        answer, it is recorded by the next ``start`` that reaches it.
        """
        self._unrecorded[run_id] = (error, stats)
        # Not running any more, even if that cannot be recorded yet.
        self._liveness.release(run_id)
        try:
            with self._db.transaction() as conn:
                recorded = self._record_failures(conn)
        except StoreError:
            return False
        self._forget(recorded)
        return True

    def _record_failures(self, conn: Connection) -> list[int]:
        """Close the runs whose failure is still unrecorded; return their ids."""
        for run_id, (error, stats) in self._unrecorded.items():
            _close(conn, run_id, RunStatus.FAILED, stats, error=error)
        return list(self._unrecorded)

    def _forget(self, recorded: list[int]) -> None:
        # Only once their transaction has committed: a rollback keeps them.
        for run_id in recorded:
            self._unrecorded.pop(run_id, None)

    def last_success(self) -> datetime | None:
        """When the most recent successful cycle finished; None if none ever did."""
        query = sa.select(sa.func.max(sync_runs_table.c.finished_at)).where(
            sync_runs_table.c.status == RunStatus.OK
        )
        with self._db.transaction() as conn:
            found = conn.scalar(query)
        return utc(found) if found is not None else None

    def tally(self, group: str | None = None) -> SyncTally:
        """How the followed authors' cycles go (of the group's members, given ``group``),
        counted by the database in one aggregate: no author is read one by one."""
        a = authors_table
        counted = sa.select(*_tally_columns()).where(a.c.removed_at.is_(None))
        if group is not None:
            counted = counted.where(a.c.id.in_(group_member_ids(group)))
        with self._db.transaction() as conn:
            found = _tally(conn.execute(counted).one())
            if found.last_synced is None and found.failing:
                found = replace(found, all_failed=_latest_failure(conn, group))
        return found

    def tallies(self, groups: Sequence[str]) -> dict[str, SyncTally]:
        """``tally`` of each of ``groups`` that has followed members, in one aggregate."""
        a, g, m = authors_table, groups_table, group_members_table
        counted = (
            sa.select(g.c.name, *_tally_columns())
            .select_from(g.join(m, m.c.group_id == g.c.id).join(a, a.c.id == m.c.author_id))
            .where(g.c.name.in_(groups), a.c.removed_at.is_(None))
            .group_by(g.c.name)
        )
        with self._db.transaction() as conn:
            return {row[0]: _tally(row[1:]) for row in conn.execute(counted)}

    def last_claims(self, authors: Sequence[str]) -> dict[str, SyncRun]:
        """Each author's latest cycle that claims it (running or succeeded), by name.

        Authors without one are left out.
        """
        runs = sync_runs_table
        latest = (
            sa.select(sa.func.max(runs.c.id))
            .where(runs.c.status.in_(_CLAIMING))
            .group_by(runs.c.author_id)
        )
        found: dict[str, SyncRun] = {}
        with self._db.transaction() as conn:
            for chunk in chunks(authors):
                query = (
                    sa.select(runs, authors_table.c.name.label("author"))
                    .join(authors_table)
                    .where(runs.c.id.in_(latest), authors_table.c.name.in_(chunk))
                )
                found.update((row.author, rows.sync_run(row)) for row in conn.execute(query))
        return found

    def first_success(self, authors: Collection[str]) -> datetime | None:
        """When the earliest successful cycle of any of ``authors`` started; None if none did."""
        query = (
            sa.select(sa.func.min(sync_runs_table.c.started_at))
            .join(authors_table)
            .where(sync_runs_table.c.status == RunStatus.OK)
        )
        with self._db.transaction() as conn:
            # In slices: 100,000 authors are past a statement's parameters.
            found = [
                conn.scalar(query.where(authors_table.c.name.in_(chunk)))
                for chunk in chunks(sorted(authors))
            ]
        return min((utc(f) for f in found if f is not None), default=None)

    def recent(self, author: str | None = None, limit: int = 20) -> list[SyncRun]:
        """The most recent sync cycles, newest first."""
        query = (
            sa.select(sync_runs_table, authors_table.c.name.label("author"))
            .join(authors_table)
            .order_by(sync_runs_table.c.id.desc())
            .limit(limit)
        )
        if author is not None:
            query = query.where(authors_table.c.name == author)
        with self._db.transaction() as conn:
            return [rows.sync_run(row) for row in conn.execute(query)]


def standing_is(standing: SyncStanding) -> sa.ColumnElement[bool]:
    """Whether an author's cycles stand at ``standing`` (the columns migration 0028's
    triggers keep on ``authors``): failing when their latest finished cycle failed or was
    abandoned (no good one since), synced when it succeeded, never when none ended."""
    ok, failed = authors_table.c.ok_run_id, authors_table.c.failed_run_id
    if standing is SyncStanding.FAILING:
        return sa.and_(failed.is_not(None), sa.or_(ok.is_(None), failed > ok))
    if standing is SyncStanding.SYNCED:
        return sa.and_(ok.is_not(None), sa.or_(failed.is_(None), failed < ok))
    return sa.and_(ok.is_(None), failed.is_(None))


def _tally_columns() -> list[sa.ColumnElement[Any]]:
    """What a tally counts of authors, in ``_tally``'s order."""
    a = authors_table
    return [
        sa.func.count(),
        _count(standing_is(SyncStanding.SYNCED)),
        _count(standing_is(SyncStanding.FAILING)),
        _count(a.c.running_run_id == a.c.latest_run_id),
        _count(a.c.feed_unknown_id.is_not(None)),
        sa.func.max(a.c.ok_finished_at),
    ]


def _tally(counted: Sequence[Any]) -> SyncTally:
    authors, synced, failing, running, unknown, last = counted
    return SyncTally(
        authors=int(authors),
        synced=int(synced or 0),
        failing=int(failing or 0),
        running=int(running or 0),
        unknown_ids=int(unknown or 0),
        last_synced=utc(last) if last is not None else None,
    )


def _count(condition: sa.ColumnElement[bool]) -> sa.ColumnElement[int]:
    return sa.func.sum(sa.case((condition, 1), else_=0))


def _latest_failure(conn: Connection, group: str | None) -> SyncRun | None:
    """The newest failed or abandoned cycle of a followed author (a member of ``group``)."""
    a, r = authors_table, sync_runs_table
    query = (
        sa.select(r, a.c.name.label("author"))
        .join(a)
        .where(r.c.status.in_(_FAILED), a.c.removed_at.is_(None))
        .order_by(r.c.id.desc())
        .limit(1)
    )
    if group is not None:
        query = query.where(a.c.id.in_(group_member_ids(group)))
    row = conn.execute(query).first()
    return rows.sync_run(row) if row is not None else None


def finish_run(conn: Connection, run_id: int, stats: SyncStats, events: int) -> None:
    """Close a good cycle's run, inside the transaction that stores what it learned."""
    _close(conn, run_id, RunStatus.OK, stats, events=events)


def _close(
    conn: Connection,
    run_id: int,
    status: RunStatus,
    stats: SyncStats,
    *,
    error: str | None = None,
    events: int = 0,
) -> None:
    values: dict[str, object] = {
        "status": status,
        "finished_at": now(),
        "requests": stats.requests,
        "entries": stats.entries,
    }
    if status is RunStatus.OK:
        values["events"] = events
    else:
        values["error"] = error
    conn.execute(sync_runs_table.update().where(sync_runs_table.c.id == run_id).values(values))
