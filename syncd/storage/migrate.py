"""Schema migrations with Alembic: upgrade, inspect, and compare with the models.

Migrations ship inside the package (``syncd/migrations``), so an installed
syncd can upgrade its database without the source tree.  On PostgreSQL an
advisory lock serialises upgrades, so replicas starting together do not race.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection, Engine

from syncd.storage.paper_index import SEARCH_INDEX, SEARCH_TABLE
from syncd.storage.schema import metadata
from syncd.storage.schema_state import translated

__all__ = ["current_revision", "head_revision", "schema_drift", "upgrade"]

# Any constant will do; it only has to be the same in every replica.
_MIGRATION_LOCK = 0x5359_4E43  # "SYNC"


def _config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", "syncd:migrations")
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest migration this syncd knows."""
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    """The migration the database is at; None for a database never migrated."""
    with translated("reading the schema revision"), engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema up to ``revision``; raise ``StoreError`` if that fails."""
    with translated("migrating"), engine.begin() as conn, _serialised(conn):
        command.upgrade(_config(conn), revision)


def schema_drift(engine: Engine) -> list[Any]:
    """Differences between the migrated schema and the models; empty when they agree."""
    with translated("comparing the schema"), engine.connect() as conn:
        opts = {"compare_type": True, "include_name": _modelled}
        context = MigrationContext.configure(conn, opts=opts)
        return list(compare_metadata(context, metadata))


def _modelled(name: str | None, kind: str, _parents: Any) -> bool:
    """Whether the comparison looks at a table or index: not the papers' search index,
    which SQLAlchemy's metadata cannot describe (an FTS5 table and its shadow tables on
    SQLite, a GIN index with an operator class on PostgreSQL)."""
    if kind == "table":
        return not (name or "").startswith(SEARCH_TABLE)
    return not (kind == "index" and name == SEARCH_INDEX)


@contextmanager
def _serialised(conn: Connection) -> Iterator[None]:
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
    yield
