"""Alembic migrations: empty and previous-revision databases reach the models' schema."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from syncd.migrate import current_revision, head_revision, schema_drift, upgrade
from syncd.planner import seed_writes
from syncd.seeds import load_seeds
from syncd.storage import Storage
from tests.integration.conftest import SEEDS, Syncd


def test_empty_database_upgrades_to_the_models(database_url: str) -> None:
    """An empty database migrated to head has exactly the schema the models describe."""
    engine = sa.create_engine(database_url)
    try:
        assert current_revision(engine) is None
        upgrade(engine)
        assert current_revision(engine) == head_revision()
        assert schema_drift(engine) == []
        upgrade(engine)  # idempotent
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_previous_revision_upgrades_with_its_data(database_url: str) -> None:
    """A database at 0001 holding a seeded snapshot upgrades to head and keeps every row."""
    storage = Storage(database_url)
    try:
        upgrade(storage.engine, "0001")
        assert storage.import_seeds("Zhida Jiang", seed_writes(load_seeds(SEEDS))) == 9
        before = [(p.key, p.record) for p in storage.papers.all()]
        upgrade(storage.engine)
        assert current_revision(storage.engine) == head_revision()
        assert [(p.key, p.record) for p in storage.papers.all()] == before
        assert schema_drift(storage.engine) == []
        assert storage.outbox.counts() == (0, 0)
    finally:
        storage.close()


def test_db_commands(syncd: Syncd) -> None:
    """`db upgrade` migrates and `db check` tells a current schema from an old one."""
    engine = sa.create_engine(syncd.database_url)
    try:
        upgrade(engine, "0001")
    finally:
        engine.dispose()
    behind = syncd("db", "check")
    assert behind.code == 1
    assert "0001" in behind.err
    done = syncd("db", "upgrade")
    assert done.code == 0
    assert head_revision() in done.out
    assert syncd("db", "check").code == 0


def test_auto_migration_can_be_turned_off(syncd: Syncd, monkeypatch: pytest.MonkeyPatch) -> None:
    """With migrate off nothing is created, and a command fails saying the database is wrong."""
    monkeypatch.setenv("SYNCD_DATABASE_MIGRATE", "false")
    outcome = syncd("papers")
    assert outcome.code == 1
    assert "database error" in outcome.err
