"""Alembic's entry point: migrate the connection ``syncd.storage.migrate`` hands in."""

from __future__ import annotations

from alembic import context

from syncd.storage.schema import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    # SQLite cannot ALTER most things in place; batch mode rebuilds tables.
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
