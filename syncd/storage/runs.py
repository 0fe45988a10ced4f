"""Sync runs: one row per cycle of one author, and the replicas' claims on cycles."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.model import AuthorSyncs, SyncRun, SyncStats
from syncd.domain.vocabulary import RunStatus
from syncd.errors import StoreError
from syncd.storage import rows
from syncd.storage.database import Database, chunks, now, utc
from syncd.storage.liveness import RunLiveness
from syncd.storage.papers import author_id
from syncd.storage.schema import authors_table, sync_runs_table

__all__ = ["STALE_RUN_SECONDS", "SyncRuns", "finish_run"]

# A cycle still "running" after this long is stuck, if its process lives at all.
STALE_RUN_SECONDS = 3600.0
# Only these claim an author's cycle: a failed or abandoned run did not sync it.
_CLAIMING = (RunStatus.RUNNING, RunStatus.OK)
_ABANDONED = "the process running this cycle stopped"


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

    def by_author(self) -> list[AuthorSyncs]:
        """Every author's last good and last failed cycle, and whether one is running, by name."""
        runs = sync_runs_table
        latest = sa.select(sa.func.max(runs.c.id)).group_by(runs.c.author_id, runs.c.status)
        query = (
            sa.select(
                runs,
                authors_table.c.name.label("author"),
                authors_table.c.feed_unknown_id.label("unknown_id"),
            )
            .join(authors_table)
            .where(runs.c.id.in_(latest))
        )
        by_name: dict[str, list[SyncRun]] = {}
        unknown: dict[str, str | None] = {}
        with self._db.transaction() as conn:
            for row in conn.execute(query):
                by_name.setdefault(row.author, []).append(rows.sync_run(row))
                unknown[row.author] = row.unknown_id
        return [_author_syncs(name, by_name[name], unknown[name]) for name in sorted(by_name)]

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


def _author_syncs(author: str, latest: list[SyncRun], unknown_id: str | None) -> AuthorSyncs:
    """``latest`` (an author's last run of each status) as how the author's cycles went."""
    status = {run.status: run for run in latest}
    failures = [status[s] for s in (RunStatus.FAILED, RunStatus.ABANDONED) if s in status]
    return AuthorSyncs(
        author=author,
        last_success=status.get(RunStatus.OK),
        last_failure=max(failures, key=lambda run: run.id, default=None),
        # Only the newest run: an older one still "running" is an orphan not yet closed.
        running=max(latest, key=lambda run: run.id).status is RunStatus.RUNNING,
        unknown_id=unknown_id,
    )


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
