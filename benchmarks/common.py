"""What every row shares: servers in their own processes, databases, timing, statement counts."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import sqlalchemy as sa

from benchmarks import feeds

ROOT = feeds.ROOT
POSTGRES_ADMIN_URL = os.environ.get(
    "SYNCD_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def like_the_cli() -> None:
    """Set the process up as ``syncd``'s command line does: its GC thresholds, and
    its production logging (JSON lines), written to /dev/null.

    Formatting the log lines is part of what a cycle costs, so it stays on.
    Both sides of every row run under these settings.
    """
    from syncd.cli import configure_gc  # noqa: PLC0415
    from syncd.logs import configure_logging  # noqa: PLC0415

    configure_gc()
    configure_logging("info", "json", open(os.devnull, "w"))  # noqa: SIM115


# -- servers ---------------------------------------------------------------------------


class Server:
    """``benchmarks.servers`` in a subprocess; ``url`` is its base URL."""

    def __init__(self, kind: str, *args: str) -> None:
        self._argv = [sys.executable, "-m", "benchmarks.servers", kind, *args]
        self._proc: subprocess.Popen[str] | None = None
        self.port = 0

    def __enter__(self) -> Server:
        self._proc = subprocess.Popen(
            self._argv, cwd=ROOT, stdout=subprocess.PIPE, text=True, env=_env()
        )
        assert self._proc.stdout is not None
        self.port = int(self._proc.stdout.readline())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    paths = [os.environ.get(_SNAPSHOT_VAR), str(ROOT), env.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    return env


_SNAPSHOT_VAR = "SYNCD_BENCH_SNAPSHOT"


def snapshot_syncd(folder: Path) -> str:
    """Copy ``syncd/`` into ``folder`` and import it from there, here and in subprocesses.

    Other people edit ``syncd/`` while a ten-minute run goes on; a copy keeps
    every row on the version there was at the start (code and migrations:
    Alembic finds them through the package).  Returns the copy's digest.
    Must run before anything imports ``syncd``.
    """
    if "syncd" in sys.modules:
        raise RuntimeError("syncd was imported before the snapshot was taken")
    target = folder / "syncd"
    shutil.copytree(ROOT / "syncd", target, ignore=shutil.ignore_patterns("__pycache__"))
    sys.path.insert(0, str(folder))
    os.environ[_SNAPSHOT_VAR] = str(folder)
    import syncd  # noqa: PLC0415

    if Path(syncd.__file__ or "").resolve().parent != target.resolve():
        raise RuntimeError(f"syncd imported from {syncd.__file__}, not the snapshot")
    return tree_digest(target)


def use_snapshot() -> None:
    """In a benchmark subprocess: import ``syncd`` from the parent's snapshot, if it took one.

    ``python -m`` puts the working directory first on ``sys.path``, ahead of
    ``PYTHONPATH``, so the snapshot has to be put in front explicitly.
    """
    folder = os.environ.get(_SNAPSHOT_VAR)
    if folder:
        sys.path.insert(0, folder)


def tree_digest(folder: Path) -> str:
    """A digest of the ``.py`` files under ``folder`` (names and contents)."""
    digest = hashlib.blake2b(digest_size=8)
    for path in sorted(folder.rglob("*.py")):
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def child_env() -> dict[str, str]:
    """The environment for a benchmark subprocess: the project importable."""
    return _env()


def child_answer(module: str, *args: str) -> dict[str, Any]:
    """Run ``python -m module args`` from the project's root and return the JSON object its
    last line of output holds; ``RuntimeError`` with its errors' tail when it fails."""
    done = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{module} {' '.join(args)} failed: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def write_dataset(
    pages_dir: Path, name: str, total: int, page_size: int, *, version: int = 1
) -> str:
    """Render the pages of a ``total``-paper answer into ``pages_dir/name``; return ``name``."""
    folder = pages_dir / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "page_size").write_text(str(page_size))
    for start, body in feeds.pages(total, page_size, version=version):
        (folder / f"{start}.xml").write_bytes(body)
    return name


def page_urls(api_url: str, total: int, page_size: int, query: str) -> list[dict[str, Any]]:
    """The query parameters of every request syncd sends for the answer, in order."""
    return [
        {
            "search_query": query,
            "sortBy": "submittedDate",
            "sortOrder": "descending",
            "start": start,
            "max_results": page_size,
        }
        for start in range(0, max(total, 1), page_size)
    ]


# -- databases -------------------------------------------------------------------------


def sqlite_url(folder: Path, name: str) -> str:
    return f"sqlite:///{folder / (name + '.sqlite3')}"


def postgres_available() -> str | None:
    """None when PostgreSQL answers, else why not."""
    engine = sa.create_engine(POSTGRES_ADMIN_URL)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.SQLAlchemyError as exc:
        return str(getattr(exc, "orig", exc)).splitlines()[0]
    finally:
        engine.dispose()
    return None


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    """A fresh PostgreSQL database, dropped afterwards."""
    admin = sa.create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    name = f"syncd_bench_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin.url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextlib.contextmanager
def database(kind: str, folder: Path, name: str) -> Iterator[str]:
    """A fresh, empty database of ``kind`` (``sqlite`` or ``postgresql``)."""
    if kind == "sqlite":
        yield sqlite_url(folder, name)
    else:
        with postgres_database() as url:
            yield url


def open_store(url: str) -> Any:
    """A ``syncd.storage.Storage`` on ``url`` with the schema migrated, as ``syncd`` starts."""
    from syncd.storage import Storage  # noqa: PLC0415
    from syncd.storage.migrate import upgrade  # noqa: PLC0415

    store = Storage(url)
    upgrade(store.engine)
    return store


def settle(store: Any) -> None:
    """On PostgreSQL, ``ANALYZE``: the planner statistics autovacuum gathers after a bulk load.

    Right after a first sync of thousands of papers the statistics still say the
    tables are nearly empty, and some of syncd's queries then take plans that are
    10 to 500 times slower (see docs/PERFORMANCE.md); autovacuum analyses such a
    table within a minute or so.  The rows measure that steady state.  SQLite
    gathers no statistics unless told to, and syncd never does, so it is left as is.
    """
    if store.db.dialect == "postgresql":
        with store.engine.connect() as conn:
            conn.execute(sa.text("ANALYZE"))
            conn.commit()


@dataclass
class StatementCounter:
    """Counts the SQL statements an engine sends (``after_cursor_execute``).

    ``verbs``: statements by first keyword.  ``writes``: INSERT/UPDATE/DELETE
    (and row-locking SELECT ... FOR UPDATE) by table; ``changed``: the rows
    those statements reported changed (``cursor.rowcount``; an
    ``INSERT ... ON CONFLICT DO NOTHING`` that hits the conflict changes 0).
    An ``executemany`` is one statement.
    """

    verbs: Counter[str] = field(default_factory=Counter)
    writes: Counter[str] = field(default_factory=Counter)
    changed: Counter[str] = field(default_factory=Counter)
    active: bool = False

    def attach(self, engine: sa.Engine) -> StatementCounter:
        sa.event.listen(engine, "after_cursor_execute", self._seen)
        return self

    def _seen(  # noqa: PLR0917 (SQLAlchemy's event signature)
        self, conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool
    ) -> None:
        if not self.active:
            return
        words = statement.split()
        verb = words[0].upper() if words else "?"
        self.verbs[verb] += 1
        if verb in ("INSERT", "UPDATE", "DELETE"):
            key = f"{verb} {_table_of(verb, words)}"
        elif verb == "SELECT" and "FOR UPDATE" in statement.upper():
            # a row lock writes the locked row's header on PostgreSQL (xmax)
            key = f"SELECT FOR UPDATE {_table_of('DELETE', words)}"
        else:
            return
        self.writes[key] += 1
        rowcount = getattr(cursor, "rowcount", -1)
        self.changed[key] += max(rowcount, 0) if verb != "SELECT" else 0

    @contextlib.contextmanager
    def counting(self) -> Iterator[None]:
        self.verbs.clear()
        self.writes.clear()
        self.changed.clear()
        self.active = True
        try:
            yield
        finally:
            self.active = False

    def report(self) -> dict[str, Any]:
        """The counts, and whether anything but the sync-run record changed."""
        other = {
            k: self.changed[k]
            for k in self.writes
            if not k.endswith(" sync_runs") and self.changed[k]
        }
        return {
            "statements": dict(self.verbs),
            "write_statements": dict(self.writes),
            "rows_changed": dict(self.changed),
            "rows_changed_other_than_sync_run": other,
            "only_run_record_written": not other,
        }


def _table_of(verb: str, words: list[str]) -> str:
    upper = [w.upper() for w in words]
    keyword = {"INSERT": "INTO", "UPDATE": "UPDATE", "DELETE": "FROM"}[verb]
    try:
        return words[upper.index(keyword) + 1].strip('"')
    except (ValueError, IndexError):
        return "?"


# -- timing ----------------------------------------------------------------------------


def _load_malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or ``None`` on a C library without it."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    trim = getattr(ctypes.CDLL(name), "malloc_trim", None)
    return None if trim is None else cast("Callable[[int], int]", trim)


_MALLOC_TRIM = _load_malloc_trim()


def fresh_heap() -> None:
    """Start a timed call from the same heap whatever ran before it: collect, then trim.

    ``gc.collect()`` alone is not enough.  Memory that a previous call freed
    but glibc kept mapped makes the next call's allocations cheaper, and how
    much it keeps depends on what that call was: one lxml parse of a
    2,000-entry page took 14 ms right after syncd's parser or the arxiv
    package's had run, and 26 ms right after a bare parse (docs/PERFORMANCE.md).
    With sides alternating, that decided the parse ratio more than the code
    did (1.2x to 3.0x per repetition).  ``malloc_trim(0)`` hands every freed
    page back, so each side pays for its own memory.
    """
    gc.collect()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


@dataclass
class Paired:
    """Alternating runs of syncd and its baseline; ratios are per repetition."""

    syncd: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)

    @property
    def ratios(self) -> list[float]:
        return [s / b for s, b in zip(self.syncd, self.baseline, strict=True)]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    def summary(self) -> dict[str, Any]:
        return {
            "syncd_seconds": [round(t, 6) for t in self.syncd],
            "baseline_seconds": [round(t, 6) for t in self.baseline],
            "syncd_median_seconds": round(statistics.median(self.syncd), 6),
            "baseline_median_seconds": round(statistics.median(self.baseline), 6),
            "ratios": [round(r, 3) for r in self.ratios],
            "median_ratio": round(self.ratio, 3),
        }


def alternate(
    reps: int,
    syncd: Callable[[int], float],
    baseline: Callable[[int], float],
) -> Paired:
    """Run ``syncd(i)`` and ``baseline(i)`` alternately ``reps`` times (which goes first alternates
    too); each returns the seconds it measured itself."""
    paired = Paired()
    for i in range(reps):
        if i % 2 == 0:
            paired.syncd.append(syncd(i))
            paired.baseline.append(baseline(i))
        else:
            paired.baseline.append(baseline(i))
            paired.syncd.append(syncd(i))
    return paired


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation; ``nan`` for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def duration(seconds: float) -> str:
    """Seconds as the tables print them: milliseconds under a second."""
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"
