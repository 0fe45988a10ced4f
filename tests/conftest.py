"""Shared fixtures: a database of each kind, a fake arXiv on loopback, a syncd runner.

PostgreSQL tests skip with a visible reason when no server is reachable;
with SYNCD_TEST_REQUIRE_POSTGRES=1 (set by .ci/run) they fail instead.  The
browser tests do the same for Debian's Chromium (SYNCD_TEST_REQUIRE_BROWSER).
Hypothesis runs under the reproducible "ci" profile unless HYPOTHESIS_PROFILE
names another (tests/hypothesis_profiles.py).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
import structlog

from syncd.sources.arxiv import _pacing
from syncd.storage.schema import metadata
from tests.hypothesis_profiles import load_profile

# Before any test module is imported: their @settings start from the profile.
load_profile()

pytest_plugins = ["tests.helpers", "tests.integration.daemons", "tests.integration.pacing"]

POSTGRES_ADMIN_URL = os.environ.get(
    "SYNCD_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


@pytest.fixture(autouse=True)
def _fresh_logging() -> Iterator[None]:
    """Reset structlog after each test: the CLI may have pointed it at a closed stream."""
    yield
    structlog.reset_defaults()


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


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this test session, dropped afterwards."""
    admin = sa.create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    name = f"syncd_test_{uuid.uuid4().hex[:10]}"
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    except sa.exc.OperationalError as exc:
        admin.dispose()
        _postgres_unavailable(str(exc.orig).splitlines()[0])
    url = admin.url.set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """An empty database of each supported kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('db') / 'syncd.sqlite3'}"
    url: str = request.getfixturevalue("postgres_server_url")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        metadata.drop_all(conn)
        conn.execute(sa.text("DROP TABLE IF EXISTS alembic_version"))
    engine.dispose()
    return url
