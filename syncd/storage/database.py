"""The database handle: engine, transactions, and what every repository shares.

SQLite (the embedded default, in WAL mode) and PostgreSQL (production) share
one schema.  Every statement runs inside ``Database.transaction``, which turns
driver errors into ``StoreError`` with the driver's own message.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection, Engine

from syncd.errors import ConfigError, StoreError
from syncd.storage.files import make_private

__all__ = ["Database", "chunks", "now", "utc"]

T = TypeVar("T")


class Database:
    """One engine and its transactions."""

    def __init__(self, url: str) -> None:
        # The schema is Alembic's business (syncd.storage.migrate); the database only uses it.
        self._url = url
        self._engine = _create_engine(url)
        self._sqlite_file = _sqlite_file(url)
        # (device, inode) of the SQLite file when first opened; see _check_file.
        self._identity: tuple[int, int] | None = None

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine, for schema migrations."""
        return self._engine

    @property
    def sqlite_file(self) -> Path | None:
        """The SQLite database's file; None for PostgreSQL or an in-memory database."""
        return self._sqlite_file

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._engine.dialect.name

    def close(self) -> None:
        """Release every pooled connection."""
        self._engine.dispose()

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A connection in a transaction: committed on success, rolled back on any error."""
        # Before connecting: a new connection to a deleted path creates an empty file.
        self._check_file()
        try:
            with self._engine.begin() as conn:
                if self._identity is None:
                    self._identity = self._file_identity()
                yield conn
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(f"database error: {_brief(exc)}") from exc

    def _check_file(self) -> None:
        """Refuse to go on when the SQLite path no longer names the file we have open.

        A deleted (or replaced) database file stays writable through open
        connections: cycles would report "ok" into a file nobody can read,
        and a restart would find an empty one and announce every paper again.
        """
        if self._identity is not None and self._file_identity() != self._identity:
            raise StoreError(
                f"the SQLite database {self._sqlite_file} was deleted or replaced while syncd"
                " had it open; refusing to write to a file nobody can read. Restore it from a"
                " backup (or move it back) and restart syncd"
            )

    def _file_identity(self) -> tuple[int, int] | None:
        if self._sqlite_file is None:
            return None
        try:
            stat = os.stat(self._sqlite_file)
        except FileNotFoundError:
            return None
        return stat.st_dev, stat.st_ino

    def insert_ignoring_conflicts(self, table: sa.Table, key: str | Sequence[str]) -> Any:
        """An INSERT of ``table`` that does nothing when ``key`` (a column, or the columns
        of a composite key) already has the value."""
        insert = sqlite_insert if self.dialect == "sqlite" else postgresql_insert
        columns = [key] if isinstance(key, str) else list(key)
        return insert(table).on_conflict_do_nothing(index_elements=columns)

    def upsert(self, table: sa.Table, keys: Sequence[str]) -> Any:
        """An INSERT of ``table`` that overwrites the other columns when ``keys`` exist."""
        insert = (sqlite_insert if self.dialect == "sqlite" else postgresql_insert)(table)
        others = {c.name: insert.excluded[c.name] for c in table.columns if c.name not in keys}
        return insert.on_conflict_do_update(index_elements=list(keys), set_=others)

    @contextmanager
    def only_replica(self) -> Iterator[None]:
        """Refuse a second daemon on one SQLite file: SQLite has no cross-process claims."""
        url = sa.engine.make_url(self._url)
        if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
            yield
            return
        path = Path(f"{url.database}.run.lock")
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ConfigError(
                    f"another `syncd run` already uses {url.database}: SQLite supports one "
                    "replica; use PostgreSQL to run several"
                ) from None
            yield


def chunks(items: Sequence[T], size: int = 500) -> Iterator[Sequence[T]]:
    """``items`` in slices of ``size``, for IN lists.

    SQLite caps bound parameters, and huge lists plan badly.
    """
    for start in range(0, len(items), size):
        yield items[start : start + size]


def among(
    conn: Connection, column: sa.ColumnElement[Any], values: Sequence[Any]
) -> sa.ColumnElement[bool]:
    """``column IN values``; on PostgreSQL ``column = ANY(array)``.

    The array is one parameter; an IN list is one per value, and the
    PostgreSQL dialect renders each with its cast at every execution: a
    tenth of a quiet cycle over 10,000 papers went there.
    """
    if conn.dialect.name == "postgresql":
        array = postgresql.ARRAY(column.type)
        return column == sa.any_(sa.bindparam(None, list(values), type_=array))
    return column.in_(values)


def now() -> datetime:
    """The current time in UTC, as every timestamp is stored."""
    return datetime.now(UTC)


def utc(value: datetime) -> datetime:
    """``value`` as an aware UTC time: SQLite hands back naive ones, all written in UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL; None for PostgreSQL or an in-memory database."""
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database).resolve()


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
        # Owner-only before SQLite opens it: it holds the outbox and URL hashes.
        make_private(Path(database))
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


def _brief(exc: sa.exc.SQLAlchemyError) -> str:
    # The driver's own message, without SQLAlchemy's statement and parameter dump.
    original = getattr(exc, "orig", None)
    text = str(original if original is not None else exc)
    return " ".join(text.split())[:500]
