"""Which sync runs still have a process: a run's process leaves a mark the system removes
when the process ends, however it ends (SIGKILL included).

On SQLite the mark is a POSIX record lock on byte ``run_id`` of
``<database>.runs.lock``.  On PostgreSQL it is a session the process keeps
open for as long as it lives, whose backend pid the run records: when the
process dies its session ends and leaves ``pg_stat_activity``.  No lock is
held there, so a pooler or a lost connection cannot strand one; behind a
transaction pooler the recorded session outlives the process and a killed
run only goes stale, as before.  A run still "running" without its mark
belongs to no process: it is closed as abandoned and claims no cycle.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.errors import StoreError
from syncd.storage.database import Database

__all__ = ["RunLiveness"]

_pg_stat_activity = sa.table("pg_stat_activity", sa.column("pid", sa.Integer))


class RunLiveness:
    """The marks of this process's running runs, and the test of anyone's."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._held: set[int] = set()
        self._guard = threading.Lock()
        # PostgreSQL: the session that lives as long as this process.
        self._session: Connection | None = None

    def backend_pid(self) -> int | None:
        """What a run of this process records (PostgreSQL: its session's pid), or None."""
        if self._db.dialect != "postgresql":
            return None
        with self._guard:
            if self._session is not None:
                try:
                    return _session_pid(self._session)
                except sa.exc.SQLAlchemyError:
                    # Lost (the server restarted, say): a new session, a new pid.
                    self._session.invalidate()
                    self._session = None
            try:
                self._session = self._db.engine.connect()
                return _session_pid(self._session)
            except sa.exc.SQLAlchemyError as exc:
                reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
                raise StoreError(f"database error: {reason}") from None

    def hold(self, run_id: int) -> None:
        """Mark ``run_id`` as running here, until ``release``."""
        if (path := self._db.sqlite_file) is not None:
            _file_locks(path).hold(run_id)
        self._held.add(run_id)

    def release(self, run_id: int) -> None:
        """Unmark ``run_id``: its run ended (or its failure waits to be recorded)."""
        if run_id not in self._held:
            return
        self._held.discard(run_id)
        if (path := self._db.sqlite_file) is not None:
            _file_locks(path).release(run_id)

    def alive(self, conn: Connection, run_id: int, backend_pid: int | None) -> bool:
        """Whether a process (this one or another) still runs ``run_id``."""
        if run_id in self._held:
            return True
        if self._db.dialect == "postgresql":
            if backend_pid is None:
                return True  # recorded before marks: it goes stale instead
            query = sa.select(sa.exists().where(_pg_stat_activity.c.pid == backend_pid))
            return bool(conn.scalar(query))
        path = self._db.sqlite_file
        # An in-memory database: no other process sees it.
        return path is not None and _file_locks(path).alive(run_id)

    def close(self) -> None:
        """Drop every mark of this process: it is done with its runs."""
        for run_id in list(self._held):
            self.release(run_id)
        with self._guard:
            if self._session is not None:
                self._session.close()
                self._session = None


def _session_pid(session: Connection) -> int:
    pid = int(session.execute(sa.select(sa.func.pg_backend_pid())).scalar_one())
    session.commit()  # idle, not idle in a transaction, between runs
    return pid


class _FileLocks:
    """This process's record locks on one SQLite lock file.

    POSIX keeps them per process, not per descriptor, and closing any
    descriptor of the file drops them all: so one descriptor per file and
    process, never closed, and the runs locked through it known here.
    """

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        self._held: set[int] = set()
        self._guard = threading.Lock()

    def hold(self, run_id: int) -> None:
        with self._guard:
            try:
                fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, run_id)
            except OSError as exc:
                raise StoreError(f"cannot lock sync run {run_id}: {exc.strerror}") from None
            self._held.add(run_id)

    def release(self, run_id: int) -> None:
        with self._guard:
            self._held.discard(run_id)
            fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, run_id)

    def alive(self, run_id: int) -> bool:
        with self._guard:
            if run_id in self._held:
                return True
            try:
                fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, run_id)
            except OSError as exc:
                if exc.errno in (errno.EACCES, errno.EAGAIN):
                    return True  # another process holds it
                raise StoreError(f"cannot test sync run {run_id}: {exc.strerror}") from None
            fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, run_id)
            return False


_FILES: dict[Path, _FileLocks] = {}
_FILES_GUARD = threading.Lock()


def _file_locks(database: Path) -> _FileLocks:
    """The record locks of this process beside the SQLite file ``database``."""
    with _FILES_GUARD:
        if database not in _FILES:
            _FILES[database] = _FileLocks(Path(f"{database}.runs.lock"))
        return _FILES[database]
