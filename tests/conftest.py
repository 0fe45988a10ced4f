"""Shared fixtures: a database of each kind, a fake arXiv on loopback, a syncd runner.

PostgreSQL tests skip with a visible reason when no server is reachable;
with SYNCD_TEST_REQUIRE_POSTGRES=1 (set by .ci/run) they fail instead.  The
browser tests do the same for Debian's Chromium (SYNCD_TEST_REQUIRE_BROWSER).
Hypothesis runs under the reproducible "ci" profile unless HYPOTHESIS_PROFILE
names another (tests/hypothesis_profiles.py).
"""

from __future__ import annotations

import itertools
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
import structlog

from syncd.sources.arxiv import _pacing
from syncd.storage.database import Database
from syncd.storage.migrate import upgrade
from tests.hypothesis_profiles import load_profile

# Before any test module is imported: their @settings start from the profile.
load_profile()

pytest_plugins = [
    "tests.helpers",
    "tests.integration.daemons",
    "tests.integration.pacing",
    "tests.integration.publications",
]

POSTGRES_ADMIN_URL = os.environ.get(
    "SYNCD_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that starts `syncd run` (the ``daemons`` fixture) is slow: it waits on a real
    process's schedule for seconds.  Others are marked where they are.

    In a pytest-xdist worker the slow tests come first (every worker collects alike):
    handed out a few at a time (``make test``), they start at once and the short ones
    fill in around them, instead of one ending the run alone.
    """
    for item in items:
        if "daemons" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
    if "PYTEST_XDIST_WORKER" in os.environ:
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True)
def _fresh_logging() -> Iterator[None]:
    """Reset structlog after each test: the CLI may have pointed it at a closed stream."""
    yield
    structlog.reset_defaults()


@pytest.fixture(autouse=True)
def _no_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's tables fit ``COLUMNS`` when it is set: read them whole, as a pipe does,
    whoever started pytest (pytest-xdist's workers run with ``COLUMNS=80``)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(autouse=True)
def _no_cooldown_left() -> Iterator[None]:
    """Forget the arXiv cooldowns kept in this process's memory after each test: a fake on
    a port another test's throttling fake had would otherwise start cooled down."""
    yield
    _pacing._COOLDOWNS.reset()


def _postgres_unavailable(reason: str) -> None:
    if os.environ.get("SYNCD_TEST_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL is required here but unreachable: {reason}")
    pytest.skip(f"PostgreSQL not reachable at {POSTGRES_ADMIN_URL}: {reason}")


def browser_unavailable(reason: str) -> None:
    """Skip a browser test with ``reason``, or fail it where a browser is required (CI)."""
    if os.environ.get("SYNCD_TEST_REQUIRE_BROWSER") == "1":
        pytest.fail(f"Chromium is required here but unusable: {reason}")
    pytest.skip(f"no usable Chromium: {reason}")


class PostgresDatabases:
    """The databases one test session (one xdist worker) makes on the PostgreSQL server.

    Each is named after the session's own prefix, so parallel workers and other
    checkouts' runs never meet; whatever a test leaves is dropped at the end.
    """

    def __init__(self, admin: sa.Engine) -> None:
        self._admin = admin
        self._prefix = f"syncd_test_{uuid.uuid4().hex[:10]}"
        self._numbers = itertools.count()
        self._made: list[str] = []

    def create(self, template: str | None = None) -> str:
        """A new database (a copy of ``template``, else empty); its name."""
        name = f"{self._prefix}_{next(self._numbers)}"
        copy = f' TEMPLATE "{template}"' if template else ""
        with self._admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"{copy}'))
        self._made.append(name)
        return name

    def url(self, name: str) -> str:
        return self._admin.url.set(database=name).render_as_string(hide_password=False)

    def drop(self, name: str) -> None:
        """Drop ``name``, ending any connection a test's daemon still holds."""
        with self._admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        self._made.remove(name)

    def drop_all(self) -> None:
        for name in reversed(self._made):
            self.drop(name)


@pytest.fixture(scope="session")
def postgres_databases() -> Iterator[PostgresDatabases]:
    """This session's databases on the PostgreSQL server; skips (or fails) when unreachable."""
    admin = sa.create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect():
            pass
    except sa.exc.OperationalError as exc:
        admin.dispose()
        _postgres_unavailable(str(exc.orig).splitlines()[0])
    databases = PostgresDatabases(admin)
    try:
        yield databases
    finally:
        databases.drop_all()
        admin.dispose()


@pytest.fixture(scope="session")
def postgres_template(postgres_databases: PostgresDatabases) -> str:
    """A PostgreSQL database migrated to head once per session, copied for each test.

    ``CREATE DATABASE ... TEMPLATE`` copies it in tens of milliseconds, where
    migrating through every revision took a tenth of a second or more per test.
    Nothing connects to it after this: PostgreSQL copies only an idle template.
    """
    name = postgres_databases.create()
    _migrate(postgres_databases.url(name))
    return name


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to head once per session, copied for each test."""
    path = tmp_path_factory.mktemp("template") / "syncd.sqlite3"
    _migrate(f"sqlite:///{path}")
    return path


def _migrate(url: str) -> None:
    """Open ``url`` as syncd does (SQLite in WAL mode, owner-only) and migrate it to head."""
    database = Database(url)
    try:
        upgrade(database.engine)
    finally:
        database.close()


# The test ids end in [sqlite] or [postgresql]; .ci/run counts the PostgreSQL ones.
BOTH_DATABASES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def database_for(request: pytest.FixtureRequest) -> str:
    """The test's own database of the kind ``request.param`` names: a copy of the migrated
    template, or an empty one for a test marked ``empty_database``."""
    empty = request.node.get_closest_marker("empty_database") is not None
    if request.param == "sqlite":
        path = request.getfixturevalue("tmp_path_factory").mktemp("db") / "syncd.sqlite3"
        if not empty:
            shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
            path.chmod(0o600)  # as syncd makes it: some tests look at the file's mode
        return f"sqlite:///{path}"
    template = None if empty else request.getfixturevalue("postgres_template")
    return _postgres_database(request, template)


def _postgres_database(request: pytest.FixtureRequest, template: str | None) -> str:
    databases: PostgresDatabases = request.getfixturevalue("postgres_databases")
    name = databases.create(template)
    request.addfinalizer(lambda: databases.drop(name))
    return databases.url(name)


@pytest.fixture(params=["sqlite"])
def database_url(request: pytest.FixtureRequest) -> str:
    """The test's own database, migrated to head: SQLite only, unless asked for both.

    Most behaviour does not depend on the database: the storage repositories'
    tests (tests/integration/test_storage.py) hold the SQL to both, and modules
    whose behaviour differs by database override this fixture with
    ``BOTH_DATABASES``, saying why in its docstring; a test does with
    ``ON_BOTH_DATABASES``.  Mark a test ``empty_database`` (migrations, first
    runs) for a database never migrated.
    """
    return database_for(request)


ON_BOTH_DATABASES = pytest.mark.parametrize("database_url", BOTH_DATABASES, indirect=True)
