"""Alembic migrations: empty and previous-revision databases reach the models' schema."""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from syncd.domain.authors import Author
from syncd.domain.planner import seed_writes
from syncd.domain.record import Record, content_hash
from syncd.domain.vocabulary import AuthorOrigin, Put
from syncd.errors import ConflictError, StoreError
from syncd.logs import configure_logging
from syncd.sources.seeds import load_seeds
from syncd.storage import Storage, migrate
from syncd.storage.database import utc
from syncd.storage.migrate import current_revision, head_revision, schema_drift, upgrade
from syncd.storage.schema import authors_table, events_table, papers_table, revisions_table
from syncd.storage.schema_state import at_head, script_head
from tests.conftest import BOTH_DATABASES, database_for
from tests.fakearxiv import FakeArxiv
from tests.integration.conftest import SEEDS, Syncd
from tests.integration.harvests import harvesting
from tests.integration.rewind import downgrade, papers_before_0022
from tests.recorded import as_tex, with_aliases
from tests.scenario import FEDCG, FLOWTRAIN, LORA, NESTPIPE

# These tests migrate the database themselves.
pytestmark = pytest.mark.empty_database


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: each dialect's DDL differs (batch table rebuilds on SQLite, ALTERs
    and the advisory lock on PostgreSQL), and so does the data migrations' SQL."""
    return database_for(request)


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
        # This syncd writes columns 0001 lacks: store at head, then go back.
        upgrade(storage.engine)
        assert storage.import_seeds("Zhida Jiang", seed_writes(load_seeds(SEEDS))) == 9
        before = [(p.key, p.record) for p in storage.papers.all()]
        downgrade(storage.engine, "0001")
        assert current_revision(storage.engine) == "0001"
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


# The rule syncd applied before 0006 (issue 15): any "withdrawn" in the
# comment, or an abstract opening "this paper has been withdrawn".
_PREVIOUS_RULE = re.compile(r"\b(?:has been |is )?withdrawn\b", re.IGNORECASE)


def _previous_verdict(record: dict[str, Any]) -> bool:
    comment, abstract = record.get("comment") or "", record.get("abstract") or ""
    return bool(_PREVIOUS_RULE.search(comment)) or abstract[:32].lower().startswith(
        "this paper has been withdrawn"
    )


def _store_as_before_0006(database_url: str) -> None:
    """Rewrite every stored record as the syncd before 0006 stored it.

    No withdrawn_by key, its withdrawal verdict, and its hash: content_hash
    of a record without withdrawn_by is the previous hash (tests/unit/test_record).
    """
    engine = sa.create_engine(database_url)
    try:
        with engine.begin() as conn:
            for table in (papers_table, revisions_table):
                for row in conn.execute(sa.select(table.c.id, table.c.record)).all():
                    record = {k: v for k, v in row.record.items() if k != "withdrawn_by"}
                    record["withdrawn"] = _previous_verdict(record)
                    digest = content_hash(Record.from_dict(record))
                    conn.execute(
                        sa.update(table)
                        .where(table.c.id == row.id)
                        .values(record=record, record_hash=digest)
                    )
    finally:
        engine.dispose()


def _stored_records(database_url: str) -> list[tuple[dict[str, Any], str]]:
    engine = sa.create_engine(database_url)
    try:
        with engine.connect() as conn:
            return [
                (row.record, row.record_hash)
                for table in (papers_table, revisions_table)
                for row in conn.execute(sa.select(table.c.record, table.c.record_hash))
            ]
    finally:
        engine.dispose()


def _sync_at_0005(syncd: Syncd) -> None:
    """Sync, take the database back to 0005, and leave its rows as the previous syncd would have."""
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    engine = sa.create_engine(syncd.database_url)
    try:
        downgrade(engine, "0005")
    finally:
        engine.dispose()
    _store_as_before_0006(syncd.database_url)


def test_upgrade_to_withdrawn_by_is_quiet(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """Rows stored at 0005, withdrawals included, pass 0006 and an unchanged arXiv says nothing."""
    arxiv.withdraw(NESTPIPE, "An error in Lemma 2.")  # the notice opens the abstract
    current = arxiv.current(FLOWTRAIN)  # the shape the previous fake arXiv withdrew in
    comment = "This paper has been withdrawn by the authors."
    arxiv.publish(replace(current, version=2, comment=comment, updated=None))
    _sync_at_0005(syncd)
    before = syncd.counts()
    assert all("withdrawn_by" not in record for record, _ in _stored_records(syncd.database_url))

    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    assert syncd("db", "check").code == 0
    after = syncd.counts()
    assert (after["events"], after["revisions"]) == (before["events"], before["revisions"])
    for paper in (NESTPIPE, FLOWTRAIN):
        latest = syncd.json("history", paper)[-1]["record"]
        assert (latest["withdrawn"], latest["withdrawn_by"]) == (True, "author")
    for record, digest in _stored_records(syncd.database_url):
        assert digest == content_hash(Record.from_dict(record))


def test_upgrade_corrects_a_stored_false_alarm_once(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """A version the previous rule called withdrawn gets one event saying it is not, then quiet."""
    current = arxiv.current(LORA)
    comment = "Supersedes the withdrawn arXiv:2101.00001; 12 pages"
    arxiv.publish(replace(current, version=2, comment=comment, updated=None))
    _sync_at_0005(syncd)
    stored = syncd.json("history", LORA)[-1]["record"]
    assert stored["withdrawn"] is True
    last = syncd.json("events")[-1]["id"]

    assert syncd("sync").code == 0
    (event,) = syncd.json("events", "--since", last)
    assert event["kinds"] == ["withdrawn"]
    assert event["changes"] == {"withdrawn": {"old": True, "new": False}}
    before = syncd.counts()
    assert syncd("sync").code == 0
    assert syncd.counts()["events"] == before["events"]


def test_withdrawn_by_downgrades_to_rows_the_previous_syncd_reads(
    syncd: Syncd, arxiv: FakeArxiv
) -> None:
    """Downgrading 0006 drops withdrawn_by from every row and restores the previous hashes."""
    arxiv.withdraw(NESTPIPE, notice="This submission has been withdrawn by arXiv administrators.")
    assert syncd("sync").code == 0
    assert any(r.get("withdrawn_by") == "admin" for r, _ in _stored_records(syncd.database_url))
    engine = sa.create_engine(syncd.database_url)
    try:
        downgrade(engine, "0005")
        assert current_revision(engine) == "0005"
    finally:
        engine.dispose()
    for record, digest in _stored_records(syncd.database_url):
        assert "withdrawn_by" not in record
        assert digest == content_hash(Record.from_dict(record))


def test_upgrade_to_0007_dates_the_stored_versions(syncd: Syncd) -> None:
    """Revisions stored before 0007 get their version's date from their own record's updated."""
    assert syncd("sync").code == 0
    before = syncd.json("history", NESTPIPE)
    engine = sa.create_engine(syncd.database_url)
    try:
        downgrade(engine, "0006")
        upgrade(engine)
    finally:
        engine.dispose()
    after = syncd.json("history", NESTPIPE)
    assert [h["version_date"] for h in after] == [h["version_date"] for h in before]
    assert [h["version_date"] for h in after] == [None, "2026-04-08T09:00:00+00:00"]


def test_0011_adds_the_refusal_counts_and_downgrades_without_them(database_url: str) -> None:
    """0010 → head creates an empty version_refusals; going back to 0010 drops it, data too."""
    storage = Storage(database_url)
    try:
        upgrade(storage.engine, "0010")
        assert "version_refusals" not in sa.inspect(storage.engine).get_table_names()
        upgrade(storage.engine)
        assert storage.versions.refusals() == {}
        storage.versions.refused({f"{NESTPIPE}v1": "refused"}, lambda failures: None)
        assert list(storage.versions.refusals()) == [f"{NESTPIPE}v1"]
        downgrade(storage.engine, "0010")
        assert "version_refusals" not in sa.inspect(storage.engine).get_table_names()
        upgrade(storage.engine)
        assert storage.versions.refusals() == {}
        assert schema_drift(storage.engine) == []
    finally:
        storage.close()


def test_0012_dates_the_baseline_of_authors_that_already_synced(database_url: str) -> None:
    """0011 → head: an author with a successful cycle has its baseline, one without has none."""
    storage = Storage(database_url)
    try:
        upgrade(storage.engine, "0011")
        first_ok = datetime(2026, 3, 1, 12, tzinfo=UTC)
        with storage.engine.begin() as conn:
            authors = sa.table(
                "authors", sa.column("id"), sa.column("name"), sa.column("created_at")
            )
            runs = sa.table(
                "sync_runs",
                *(sa.column(name) for name in ("author_id", "status", "started_at")),
                *(sa.column(name) for name in ("requests", "entries", "events")),
            )
            counts = {"requests": 1, "entries": 0, "events": 0}
            conn.execute(
                authors.insert(),
                [
                    {"id": 1, "name": "Synced", "created_at": first_ok},
                    {"id": 2, "name": "Never synced", "created_at": first_ok},
                ],
            )
            conn.execute(
                runs.insert(),
                [
                    {"author_id": author, "status": status, "started_at": first_ok + later} | counts
                    for author, status, later in [
                        (1, "failed", -timedelta(days=1)),
                        (1, "ok", timedelta(0)),
                        (1, "ok", timedelta(days=1)),
                        (2, "failed", timedelta(0)),
                    ]
                ],
            )
        upgrade(storage.engine)
        assert schema_drift(storage.engine) == []
        with storage.engine.connect() as conn:
            rows = conn.execute(
                sa.select(
                    authors_table.c.name,
                    authors_table.c.baseline_at,
                    authors_table.c.origin,
                    authors_table.c.seeds,
                ).order_by(authors_table.c.id)
            ).all()
        assert [(r.name, r.origin, r.seeds) for r in rows] == [
            ("Synced", "config", []),
            ("Never synced", "config", []),
        ]
        assert [r.baseline_at and utc(r.baseline_at) for r in rows] == [first_ok, None]
        downgrade(storage.engine, "0011")
        assert "author_decisions" not in sa.inspect(storage.engine).get_table_names()
        upgrade(storage.engine)
        assert schema_drift(storage.engine) == []
    finally:
        storage.close()


class TestSchemaCheckAtStart:
    """``at_head``, what every command asks first: Alembic runs only when it says no."""

    def test_the_scripts_head_is_alembics(self) -> None:
        """The head read from the scripts' lines is the head Alembic finds."""
        assert script_head() == head_revision()

    def test_new_behind_and_current_databases(self, database_url: str) -> None:
        """A new database and one a revision behind are not at head; a migrated one is."""
        engine = sa.create_engine(database_url)
        try:
            assert not at_head(engine)
            upgrade(engine)
            assert at_head(engine)
            downgrade(engine, "0010")
            assert not at_head(engine)
        finally:
            engine.dispose()

    def test_commands_at_head_run_no_alembic(
        self, syncd: Syncd, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The first command migrates; the next ones, at head, leave Alembic unloaded."""
        assert syncd("papers").code == 0
        engine = sa.create_engine(syncd.database_url)
        try:
            assert at_head(engine)
        finally:
            engine.dispose()

        def refuse(engine: sa.Engine, revision: str = "head") -> None:
            raise AssertionError("Alembic ran on a database at head")

        monkeypatch.setattr(migrate, "upgrade", refuse)
        assert syncd("papers").code == 0

    def test_an_unreachable_database_fails_as_a_migration_did(self) -> None:
        """A database that cannot be reached fails as the upgrade did: one StoreError."""
        engine = sa.create_engine("postgresql+psycopg://nobody:secret@127.0.0.1:1/none")
        try:
            with pytest.raises(StoreError, match=r"^database error while migrating: "):
                at_head(engine)
        finally:
            engine.dispose()


def test_0013_adds_the_harvest_state_and_downgrades_without_it(database_url: str) -> None:
    """0012 → head creates an empty harvest_state; going back to 0012 drops it, progress too."""
    storage = Storage(database_url)
    try:
        upgrade(storage.engine, "0012")
        assert "harvest_state" not in sa.inspect(storage.engine).get_table_names()
        upgrade(storage.engine)
        assert storage.harvests.state().from_date is None
        storage.harvests.start_from(date(2026, 7, 1))
        assert storage.harvests.state().from_date == date(2026, 7, 1)
        downgrade(storage.engine, "0012")
        assert "harvest_state" not in sa.inspect(storage.engine).get_table_names()
        upgrade(storage.engine)
        assert storage.harvests.state().from_date is None
        assert schema_drift(storage.engine) == []
    finally:
        storage.close()


def test_0014_indexes_a_papers_events_and_downgrades_without_it(database_url: str) -> None:
    """0013 → head adds ix_events_paper_seq, which a paper's events are read along; back to
    0013 drops it and keeps the events."""
    storage = Storage(database_url)
    try:
        # This syncd writes columns 0013 lacks (authors.name_key): store at head, then go back.
        upgrade(storage.engine)
        assert storage.import_seeds("Zhida Jiang", seed_writes(load_seeds(SEEDS))) == 9
        downgrade(storage.engine, "0013")
        with storage.engine.begin() as conn:  # an event per paper, as a cycle would add
            old = papers_before_0022
            papers = conn.execute(sa.select(old.c.id, old.c.author_id)).all()
            conn.execute(
                events_table.insert(),
                [
                    {
                        "id": f"evt_{paper.id:032x}", "type": "paper.added",
                        "created_at": datetime(2026, 12, 1, tzinfo=UTC),
                        "author_id": paper.author_id, "paper_id": paper.id,
                        "kinds": [], "changes": {},
                    }
                    for paper in papers
                ],
            )  # fmt: skip

        def indexes() -> set[str]:
            found = sa.inspect(storage.engine).get_indexes("events")
            return {str(index["name"]) for index in found}

        assert "ix_events_paper_seq" not in indexes()
        upgrade(storage.engine)
        assert "ix_events_paper_seq" in indexes()
        events = storage.events.since()
        assert len(events) == 9
        downgrade(storage.engine, "0013")
        assert "ix_events_paper_seq" not in indexes()
        upgrade(storage.engine)
        assert storage.events.since() == events
        assert schema_drift(storage.engine) == []
    finally:
        storage.close()


def test_0015_records_a_harvests_failure_and_downgrades_without_it(database_url: str) -> None:
    """0014 → head adds the last failure's time and error to a stored harvest_state; back
    to 0014 drops them and keeps the harvest's ``from``."""
    storage = Storage(database_url)
    try:
        upgrade(storage.engine, "0014")
        storage.harvests.start_from(date(2026, 7, 1))  # writes only 0014's columns
        upgrade(storage.engine)
        assert storage.harvests.state().last_failure_at is None
        assert storage.harvests.claim() is not None
        storage.harvests.release("arXiv answered 503")
        assert storage.harvests.state().last_error == "arXiv answered 503"
        assert storage.harvests.state().failing
        downgrade(storage.engine, "0014")
        columns = {c["name"] for c in sa.inspect(storage.engine).get_columns("harvest_state")}
        assert not columns & {"last_failure_at", "last_error"}
        upgrade(storage.engine)
        assert storage.harvests.state().from_date == date(2026, 7, 1)
        assert storage.harvests.state().last_error is None
        assert schema_drift(storage.engine) == []
    finally:
        storage.close()


def test_0016_keeps_one_author_per_name_and_stops_hostile_ones(database_url: str) -> None:
    """0015 → head: surplus spaces are normalised; of names one without regard to case the
    earliest followed stays followed, the others stop with their papers; a hostile name and a
    broken query stop; each stop is logged; nothing is deleted; down and up again is stable."""
    storage = Storage(database_url)
    log = io.StringIO()
    configure_logging("warning", "json", log)
    try:
        upgrade(storage.engine, "0015")
        authors = sa.table(
            "authors",
            *(sa.column(name) for name in ("id", "name", "origin", "query")),
            *(sa.column(name, sa.DateTime(timezone=True)) for name in ("created_at", "removed_at")),
        )
        created = datetime(2026, 3, 1, tzinfo=UTC)
        removed = datetime(2026, 4, 1, tzinfo=UTC)
        rows = [
            (1, "Jane Smith", None, None),
            (2, "jane smith", None, None),  # followed: stops, as the same author as 1
            (3, "JANE  SMITH", None, removed),  # already removed: stays so, no key
            (4, " Ada  Lovelace", None, None),  # normalised in place
            (5, 'Zed Zulu" OR au:"Eve Evans', None, None),  # refused: stops, no key
            (6, "Grace Hopper", 'au:"Hopper_G', None),  # broken query: stops, keeps its key
            (7, "Emmy  Noether", None, None),  # kept, and renamed onto 8's name
            (8, "Emmy Noether", None, removed),  # gives its name up
        ]
        with storage.engine.begin() as conn:
            conn.execute(
                authors.insert(),
                [
                    {"id": i, "name": name, "query": query, "removed_at": gone}
                    | {"origin": "runtime", "created_at": created}
                    for i, name, query, gone in rows
                ],
            )
        with storage.engine.begin() as conn:  # each spelling's cycles stored a paper of its own
            record = Record.from_dict({"arxiv_id": NESTPIPE, "version": 1, "authors": []})
            conn.execute(
                papers_before_0022.insert(),
                [
                    {"author_id": author_id, "key": NESTPIPE, "arxiv_id": NESTPIPE}
                    | {"status": "tracked", "origin": "arxiv", "record": record.to_dict()}
                    | {"record_hash": content_hash(record), "absent_syncs": 0}
                    | {"created_at": created, "updated_at": created}
                    for author_id in (1, 2)
                ],
            )
        upgrade(storage.engine)
        assert schema_drift(storage.engine) == []
        with storage.engine.connect() as conn:
            a = authors_table
            query = sa.select(a.c.id, a.c.name, a.c.name_key, a.c.removed_at).order_by(a.c.id)
            after = [(r.id, r.name, r.name_key, r.removed_at is None) for r in conn.execute(query)]
        assert after == [
            (1, "Jane Smith", "jane smith", True),
            (2, "jane smith", None, False),
            (3, "JANE  SMITH", None, False),
            (4, "Ada Lovelace", "ada lovelace", True),
            (5, 'Zed Zulu" OR au:"Eve Evans', None, False),
            (6, "Grace Hopper", "grace hopper", False),
            (7, "Emmy Noether", "emmy noether", True),
            (8, "Emmy Noether (duplicate #8)", None, False),
        ]
        stopped = [json.loads(line) for line in log.getvalue().splitlines()]
        assert sorted(
            e["author_id"] for e in stopped if e["event"] == "author_no_longer_followed"
        ) == [2, 5, 6]
        # Each spelling keeps its hold on the paper, one story since 0022.
        assert [p.author for p in storage.papers.all("jane smith")] == ["jane smith"]
        assert [p.author for p in storage.papers.all("Jane Smith")] == ["Jane Smith"]
        assert len(storage.papers.all()) == 1
        assert [f.definition.name for f in storage.authors.followed()] == [
            "Ada Lovelace",
            "Emmy Noether",
            "Jane Smith",
        ]
        assert "jane smith" not in storage.authors.names()  # the name "Jane Smith" keeps
        with pytest.raises(ConflictError, match="kept by author #2, a duplicate"):
            storage.authors.reconcile([Author("jane smith", AuthorOrigin.CONFIG)])
        fixed = Author("Grace Hopper", AuthorOrigin.RUNTIME, query='au:"Hopper_G"')
        assert storage.authors.put([fixed]) == [Put.UPDATED]  # followed again, history and all
        downgrade(storage.engine, "0015")
        upgrade(storage.engine)
        assert schema_drift(storage.engine) == []
        assert [f.definition.name for f in storage.authors.followed()] == [
            "Ada Lovelace",
            "Emmy Noether",
            "Grace Hopper",
            "Jane Smith",
        ]
    finally:
        storage.close()


def _store_as_read_before_0017(database_url: str) -> None:
    """Rewrite every stored arXiv record as syncd read it before 0017, with its hash then.

    TeX as typed and times with ``+00:00`` (a harvest, a feed), categories with
    their alias (arXivRaw), FlowTrain's authors as ``.atom2``'s one joined name,
    and NestPipe's first two as arXivRaw's older split left "A & B".
    """
    engine = sa.create_engine(database_url)
    try:
        with engine.begin() as conn:
            for table in (papers_table, revisions_table):
                for row in conn.execute(sa.select(table.c.id, table.c.record)).all():
                    if row.record.get("version") is None:
                        continue  # a seed record: what a page showed
                    read = _read_before_0017(row.record)
                    conn.execute(
                        sa.update(table)
                        .where(table.c.id == row.id)
                        .values(record=read, record_hash=content_hash(Record.from_dict(read)))
                    )
    finally:
        engine.dispose()


def _read_before_0017(record: dict[str, Any]) -> dict[str, Any]:
    names = [as_tex(name) or name for name in record["authors"]]
    if record["arxiv_id"] == FLOWTRAIN:
        names = [", ".join(names)]
    elif record["arxiv_id"] == NESTPIPE:
        names = [f"{names[0]} & {names[1]}", *names[2:]]
    texts = {f: as_tex(record[f]) for f in ("title", "abstract", "comment", "journal_ref")}
    times = {f: record[f].replace("Z", "+00:00") for f in ("published", "updated")}
    categories = list(with_aliases(tuple(record["categories"])))
    return record | texts | times | {"authors": names, "categories": categories}


def _records(database_url: str, table: sa.Table) -> list[tuple[dict[str, Any], str]]:
    """Each row's record and hash, in id order."""
    engine = sa.create_engine(database_url)
    try:
        with engine.connect() as conn:
            query = sa.select(table.c.record, table.c.record_hash).order_by(table.c.id)
            return [(row.record, row.record_hash) for row in conn.execute(query)]
    finally:
        engine.dispose()


def test_upgrade_to_canonical_records_is_quiet(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """Rows read by an older syncd (TeX, +00:00, aliases, one joined name, an older split)
    are re-read by 0017; unchanged papers met again by a sync and a harvest say nothing,
    and the one list 0017 cannot re-read is stored as read now, once, without an event."""
    arxiv.amend(FEDCG, categories=("cs.DC", "cs.LG", "cs.IT"))
    assert syncd("sync").code == 0
    canonical = {t: _records(syncd.database_url, t) for t in (papers_table, revisions_table)}
    engine = sa.create_engine(syncd.database_url)
    try:
        downgrade(engine, "0016")
    finally:
        engine.dispose()
    _store_as_read_before_0017(syncd.database_url)

    assert syncd("db", "upgrade").code == 0
    for table, rows in canonical.items():
        migrated = _records(syncd.database_url, table)
        assert len(migrated) == len(rows)
        for (record, digest), (expected, _) in zip(migrated, rows, strict=True):
            assert digest == content_hash(Record.from_dict(record))
            names = record["authors"]
            if record.get("arxiv_id") == NESTPIPE:  # an older split: left to the comparison
                assert names[0] == " & ".join(expected["authors"][:2])
                names = expected["authors"]
            assert record | {"authors": names} == expected

    before = syncd.counts()
    harvesting(syncd)
    for command_line in [("sync",), ("harvest", "--from", arxiv.oai.today.isoformat()), ("sync",)]:
        outcome = syncd(*command_line)
        assert outcome.code == 0, outcome.err
    after = syncd.counts()
    assert after["events"] == before["events"]
    assert after["revisions"] == before["revisions"] + 1  # NestPipe's list, read once more
    assert _records(syncd.database_url, papers_table) == canonical[papers_table]
