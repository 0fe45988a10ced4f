"""A database that goes away under a running daemon: one failure path, honest readiness."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa

from syncd.storage.schema import sync_runs_table
from tests import scenario
from tests.conftest import POSTGRES_ADMIN_URL
from tests.fakearxiv import FakeArxiv, make_record
from tests.helpers import eventually
from tests.integration.conftest import Syncd
from tests.integration.daemons import Daemon
from tests.receiver import Receiver


def _failed_cycles(daemon: Daemon) -> float:
    metrics = daemon.get("/metrics").text
    found = re.search(r'^syncd_sync_cycles_total\{result="failed"\} (\S+)$', metrics, re.M)
    assert found is not None
    return float(found.group(1))


def _failure_lines(daemon: Daemon, text: str) -> list[dict[str, object]]:
    return [
        line
        for line in daemon.lines()
        if line["event"] == "cycle_failed" and text in str(line.get("error"))
    ]


def _unready_with_real_last_success(daemon: Daemon) -> bool:
    answer = daemon.get("/readyz")
    if answer.status_code != 503:
        return False
    checks = answer.json()["checks"]
    return checks["database"] == "unreachable" and "last success" in checks["last_cycle"]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_deleted_sqlite_file_is_noticed(
    syncd: Syncd, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """Deleting the database under the daemon fails every cycle clearly; nothing is recreated."""
    daemon = Daemon(syncd, receiver)
    daemons.append(daemon)
    assert receiver.wait_for(7, timeout=20)
    path = Path(sa.engine.make_url(syncd.database_url).database or "")
    for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        leftover.unlink(missing_ok=True)
    eventually(lambda: bool(_failure_lines(daemon, "deleted or replaced")), 10, "cycle_failed")
    eventually(lambda: _unready_with_real_last_success(daemon), 10, "/readyz 503")
    assert _failed_cycles(daemon) >= 1
    assert not path.exists(), "a new, empty database was created in its place"
    assert daemon.stop() < 10


@contextmanager
def _refusing_connections(database_url: str) -> Iterator[None]:
    """The daemon's PostgreSQL database refuses connections and loses the ones it had."""
    name = sa.engine.make_url(database_url).database
    admin = sa.create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false'))
            conn.execute(
                sa.text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = :name AND pid <> pg_backend_pid()"
                ),
                {"name": name},
            )
        yield
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true'))
        admin.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_postgresql_outage_takes_the_failure_path(
    syncd: Syncd, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """During an outage: cycle_failed lines, the failed counter, 503; afterwards no run hangs."""
    daemon = Daemon(syncd, receiver)
    daemons.append(daemon)
    assert receiver.wait_for(7, timeout=20)
    eventually(daemon.ready, 10, "ready")
    with _refusing_connections(syncd.database_url):
        eventually(lambda: bool(_failure_lines(daemon, "database error")), 15, "cycle_failed")
        eventually(lambda: _unready_with_real_last_success(daemon), 10, "/readyz 503")
        assert _failed_cycles(daemon) >= 1
    finished = len([line for line in daemon.lines() if line["event"] == "cycle_finished"])
    eventually(
        lambda: (
            len([line for line in daemon.lines() if line["event"] == "cycle_finished"]) > finished
        ),
        15,
        "a cycle after the outage",
    )
    eventually(daemon.ready, 10, "ready again")
    assert daemon.stop() < 10
    assert "Traceback" not in daemon.log.read_text()
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.connect() as conn:
            statuses = list(conn.scalars(sa.select(sync_runs_table.c.status)))
    finally:
        engine.dispose()
    assert "running" not in statuses


def _with_file_size_limit(limit: int) -> None:
    """In the child: writes past ``limit`` bytes fail with EFBIG, as on a full disk."""
    import resource  # noqa: PLC0415 - only in the forked child
    import signal  # noqa: PLC0415

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_full_disk_fails_the_cycle_cleanly(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """A cycle that cannot grow the SQLite file fails with one line and no traceback."""
    assert syncd("sync").code == 0
    path = Path(sa.engine.make_url(syncd.database_url).database or "")
    words = " ".join(f"word{n}" for n in range(300))
    for number in range(200):
        record = make_record(f"2611.{20000 + number}", authors=(scenario.AUTHOR, "Yang Xu"))
        arxiv.publish(replace(record, abstract=f"{number} {words}"))
    result = subprocess.run(
        [sys.executable, "-m", "syncd", "--config", str(syncd.config), "sync"],
        capture_output=True,
        text=True,
        timeout=60,
        # Room for the write-ahead log's first frames, not for the whole cycle.
        preexec_fn=lambda: _with_file_size_limit(path.stat().st_size + 65536),
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    (line,) = [x for x in result.stdout.splitlines() + result.stderr.splitlines() if "FAILED" in x]
    assert "disk is full" in line or "database error" in line, line
    failed = [json.loads(x) for x in result.stderr.splitlines() if '"cycle_failed"' in x]
    assert len(failed) == 1
