"""Taking a test database back to what an older syncd left: its schema, or its rows."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from syncd.storage.schema import papers_table, revisions_table


def downgrade(engine: sa.Engine, revision: str) -> None:
    """Take the schema (and its rows) back to ``revision``, as that syncd had them."""
    with engine.begin() as conn:
        config = Config()
        config.set_main_option("script_location", "syncd:migrations")
        config.attributes["connection"] = conn
        command.downgrade(config, revision)


def forget_backfilled(database_url: str) -> None:
    """Make the database one syncd wrote before backfills existed."""
    engine = sa.create_engine(database_url)
    try:
        with engine.begin() as conn:
            conn.execute(revisions_table.delete().where(revisions_table.c.source.like("arxiv:v%")))
            conn.execute(papers_table.update().values(backfill_pending=False))
    finally:
        engine.dispose()
