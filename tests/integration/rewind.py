"""Taking a test database back to what an older syncd left: its schema, or its rows."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from sqlalchemy.dialects.postgresql import JSONB

from syncd.storage.schema import papers_table, revisions_table

_JSON = sa.JSON().with_variant(JSONB(), "postgresql")
_TIME = sa.DateTime(timezone=True)

# The papers table before 0022: one row per author and paper, the author's hold on it inline.
papers_before_0022 = sa.table(
    "papers",
    *(sa.column(name) for name in ("id", "author_id", "key", "arxiv_id", "status", "origin")),
    *(sa.column(name) for name in ("record_hash", "absent_syncs", "backfill_pending")),
    *(sa.column(name) for name in ("claimed", "candidate_reason")),
    sa.column("record", _JSON),
    sa.column("created_at", _TIME),
    sa.column("updated_at", _TIME),
)


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
