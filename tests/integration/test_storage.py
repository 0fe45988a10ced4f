"""The storage repositories called directly, on SQLite and PostgreSQL alike.

Most CLI and HTTP tests run on SQLite only (tests/conftest.py's ``database_url``);
these hold the SQL they stand on to both databases: lookups without regard to
case, JSON records that read back as written, timestamps that come back in UTC,
upserts, the outbox's leases, the write sequence that refuses a stale plan,
the harvest's claim, and a cycle that finds its author removed.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import pytest
import sqlalchemy as sa

from syncd.domain.authors import Author
from syncd.domain.model import Event, NewRevision, PaperWrite, SyncStats
from syncd.domain.planner import seed_writes
from syncd.domain.record import Record
from syncd.domain.routing import EndpointSpec
from syncd.domain.vocabulary import AuthorOrigin, EventType, Origin, PaperStatus, RunStatus
from syncd.errors import ConflictError
from syncd.sources.seeds import load_seeds
from syncd.storage import Storage
from syncd.storage.migrate import schema_drift, upgrade
from syncd.storage.models import Attempt
from syncd.storage.papers import StalePlan
from tests.conftest import BOTH_DATABASES, database_for
from tests.fakearxiv import make_record
from tests.integration.conftest import SEEDS
from tests.integration.rewind import downgrade

AUTHOR = "Zhida Jiang"


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: this module is where SQL is held to each dialect."""
    return database_for(request)


@pytest.fixture
def storage(database_url: str) -> Iterator[Storage]:
    """The repositories over a migrated database following ``AUTHOR`` from the config."""
    opened = Storage(database_url)
    opened.authors.reconcile([Author(AUTHOR, AuthorOrigin.CONFIG)])
    yield opened
    opened.close()


def _added(arxiv_id: str, **fields: object) -> PaperWrite:
    """A new tracked paper from arXiv, announced as added."""
    record = make_record(arxiv_id, **fields)  # type: ignore[arg-type]
    return PaperWrite(
        key=arxiv_id,
        arxiv_id=arxiv_id,
        status=PaperStatus.TRACKED,
        origin=Origin.ARXIV,
        revisions=(NewRevision(record, "api"),),
        event_type=EventType.ADDED,
    )


def _cycle(storage: Storage, *writes: PaperWrite, read_seq: int | None = None) -> list[str]:
    """One cycle of ``AUTHOR`` applying ``writes``; the types of the events it published."""
    run_id = storage.runs.start(AUTHOR)
    assert run_id is not None
    events = storage.apply_cycle(run_id, AUTHOR, writes, SyncStats(), read_seq=read_seq)
    return [event.type for event in events]


class TestAuthors:
    def test_a_name_is_found_in_any_case(self, storage: Storage) -> None:
        """The name key is one author without regard to case, in lookups and in writes."""
        assert storage.authors.stored_name("zhida JIANG") == AUTHOR
        assert storage.authors.known(AUTHOR)
        assert not storage.authors.known("ZHIDA JIANG")  # the stored spelling only
        with pytest.raises(ConflictError):
            storage.authors.put([Author("zhida jiang", AuthorOrigin.RUNTIME)])

    def test_put_twice_changes_nothing_and_remove_stops_following(self, storage: Storage) -> None:
        jane = Author("Jane Smith", AuthorOrigin.RUNTIME, orcid="0000-0002-1825-0097")
        assert [str(p) for p in storage.authors.put([jane])] == ["added"]
        assert [str(p) for p in storage.authors.put([jane])] == ["unchanged"]
        assert storage.authors.followed_names() == ["Jane Smith", AUTHOR]
        storage.authors.remove("Jane Smith")
        assert not storage.authors.followed_now("Jane Smith")
        assert storage.authors.known("Jane Smith")  # its row and history stay
        assert storage.authors.followed_names() == [AUTHOR]


class TestPapers:
    def test_seeds_import_once_and_read_back_as_written(self, storage: Storage) -> None:
        """Records go through JSON columns (JSONB on PostgreSQL) and come back equal."""
        writes = seed_writes(load_seeds(SEEDS))
        assert storage.import_seeds(AUTHOR, writes) == len(writes)
        assert storage.import_seeds(AUTHOR, writes) == 0
        stored = {p.key: p for p in storage.papers.all(AUTHOR)}
        assert set(stored) == {w.key for w in writes}
        for write in writes:
            assert stored[write.key].record == write.revisions[-1].record
            assert stored[write.key].status == PaperStatus.UNLINKED

    def test_a_cycle_stores_papers_events_and_its_run_in_utc(self, storage: Storage) -> None:
        before = datetime.now(UTC)
        assert _cycle(storage, _added("2601.00001"), _added("2601.00002")) == [EventType.ADDED] * 2
        paper = storage.papers.find("2601.00001")
        assert paper is not None and paper.author == AUTHOR
        (revision,) = storage.papers.history(paper.id)
        assert revision.record == make_record("2601.00001")
        assert revision.observed_at.tzinfo is not None and revision.observed_at >= before
        assert [e.paper_key for e in storage.events.since()] == ["2601.00001", "2601.00002"]
        (run,) = storage.runs.recent(AUTHOR)
        assert run.status == RunStatus.OK and run.events == 2
        assert storage.runs.last_success() == run.finished_at

    def test_lookups_by_many_ids_take_every_chunk(self, storage: Storage) -> None:
        """IN lists (= ANY(array) on PostgreSQL) over more ids than one chunk holds."""
        ids = [f"2601.{n:05d}" for n in range(1, 13)]
        _cycle(storage, *(_added(i) for i in ids))
        asked = [*ids, *(f"2602.{n:05d}" for n in range(600))]
        assert set(storage.papers.states(AUTHOR, asked)) == set(ids)
        assert storage.papers.owners(asked) == {i: {AUTHOR} for i in ids}

    def test_a_plan_read_before_another_write_is_refused(self, storage: Storage) -> None:
        """The author's write sequence: a plan from before another apply stores nothing."""
        read = storage.papers.write_seqs([AUTHOR])[AUTHOR]
        _cycle(storage, _added("2601.00001"), read_seq=read)
        assert storage.papers.write_seqs([AUTHOR])[AUTHOR] > read
        with pytest.raises(StalePlan):
            _cycle(storage, _added("2601.00002"), read_seq=read)
        assert [p.key for p in storage.papers.all(AUTHOR)] == ["2601.00001"]

    def test_a_cycle_whose_author_was_removed_stores_nothing(self, storage: Storage) -> None:
        storage.authors.put([Author("Jane Smith", AuthorOrigin.RUNTIME)])
        run_id = storage.runs.start("Jane Smith")
        assert run_id is not None
        storage.authors.remove("Jane Smith")
        with pytest.raises(ConflictError):
            storage.apply_cycle(run_id, "Jane Smith", [_added("2601.00001")], SyncStats())
        assert storage.papers.all() == []
        assert storage.events.since() == []


class TestRuns:
    def test_a_recent_start_claims_the_author(self, storage: Storage) -> None:
        first = storage.runs.start(AUTHOR, unless_started_within=60)
        assert first is not None
        assert storage.runs.start(AUTHOR, unless_started_within=60) is None
        assert storage.runs.fail(first, "arXiv said no", SyncStats(requests=3))
        (run,) = storage.runs.recent(AUTHOR)
        assert (run.status, run.error, run.requests) == (RunStatus.FAILED, "arXiv said no", 3)
        # A failed run claims nothing.
        assert storage.runs.start(AUTHOR, unless_started_within=60) is not None


class TestOutbox:
    @pytest.fixture
    def outbox_with_deliveries(self, storage: Storage) -> Storage:
        """One endpoint and three events of three papers waiting for it."""
        storage.endpoints.register([EndpointSpec("ci", "http://127.0.0.1:9/", "0" * 64)])
        _cycle(storage, *(_added(f"2601.0000{n}") for n in range(1, 4)))
        return storage

    def test_two_workers_never_hold_one_delivery(self, outbox_with_deliveries: Storage) -> None:
        outbox = outbox_with_deliveries.outbox
        first = outbox.claim("worker-1", lease_seconds=60, limit=2)
        second = outbox.claim("worker-2", lease_seconds=60, limit=10)
        assert len(first) == 2 and len(second) == 1
        assert not {c.delivery_id for c in first} & {c.delivery_id for c in second}
        assert outbox.claim("worker-3", lease_seconds=60, limit=10) == []
        assert outbox.release_leases("worker-1") == 2
        assert len(outbox.claim("worker-3", lease_seconds=60, limit=10)) == 2

    def test_attempts_deliver_retry_and_dead_letter(self, outbox_with_deliveries: Storage) -> None:
        outbox = outbox_with_deliveries.outbox
        sent, retried, dead = outbox.claim("worker", lease_seconds=60, limit=10)
        later = datetime.now(UTC) + timedelta(hours=1)
        outbox.record_attempts(
            "worker",
            [
                Attempt(sent.delivery_id, 204, delivered=True),
                Attempt(retried.delivery_id, 503, "busy", retry_at=later),
                Attempt(dead.delivery_id, 400, "refused"),
            ],
        )
        assert outbox.counts() == (1, 1)  # (pending, dead)
        next_due = outbox.next_due()
        assert next_due is not None and abs(next_due - later) < timedelta(seconds=1)
        assert outbox.redeliver(dead=True) == 1
        assert outbox.counts() == (2, 0)
        (summary,) = outbox_with_deliveries.endpoints.summaries()
        assert (summary.pending, summary.delivered, summary.dead) == (2, 1, 0)
        assert outbox.prune_delivered(datetime.now(UTC) + timedelta(seconds=1)) == 1


class TestVersions:
    def test_refusals_count_up_and_are_forgotten_once_served(self, storage: Storage) -> None:
        """An upsert (ON CONFLICT DO UPDATE) per refused version."""
        versions = storage.versions
        versions.refused({"2601.00001v2": "bad"}, lambda failures: timedelta(hours=failures))
        refusals = versions.refused({"2601.00001v2": "worse"}, lambda f: timedelta(hours=f))
        refusal = refusals["2601.00001v2"]
        assert (refusal.failures, refusal.last_error) == (2, "worse")
        assert refusal.next_try_at is not None and refusal.next_try_at.tzinfo is not None
        assert versions.set_aside_count() == 1
        versions.served(["2601.00001v2"])
        assert versions.refusals() == {}


class TestHarvests:
    def test_one_process_holds_the_harvest(self, database_url: str, storage: Storage) -> None:
        other = Storage(database_url)
        try:
            storage.harvests.start_from(date(2026, 1, 5))
            claimed = storage.harvests.claim()
            assert claimed is not None and claimed.from_date == date(2026, 1, 5)
            assert other.harvests.claim() is None
            storage.harvests.release("the page was cut")
            state = other.harvests.state()
            assert state.last_error == "the page was cut" and state.failing
            assert other.harvests.claim() is not None
        finally:
            other.close()


class TestInstallation:
    def test_the_phase_is_drawn_once_and_every_replica_reads_it(
        self, database_url: str, storage: Storage
    ) -> None:
        """Migration 0021 draws the installation's phase in [0, 1): every process on the
        database reads the same; going back to 0020 drops it, and the way up draws one."""
        phase = storage.installation.phase()
        assert 0.0 <= phase < 1.0
        replica = Storage(database_url)
        try:
            assert replica.installation.phase() == phase
        finally:
            replica.close()
        downgrade(storage.engine, "0020")
        assert "installation" not in sa.inspect(storage.engine).get_table_names()
        upgrade(storage.engine)
        assert 0.0 <= storage.installation.phase() < 1.0
        assert schema_drift(storage.engine) == []


class TestStories:
    """A paper is one story, however many followed authors hold it (issue 32)."""

    CO = "Jane Smith"

    @pytest.fixture
    def both(self, storage: Storage) -> Storage:
        storage.authors.put([Author(self.CO, AuthorOrigin.RUNTIME)])
        return storage

    def _apply(self, storage: Storage, author: str, *writes: PaperWrite) -> list[Event]:
        run_id = storage.runs.start(author)
        assert run_id is not None
        return storage.apply_cycle(run_id, author, writes, SyncStats())

    def _seen(self, storage: Storage, author: str, record: Record) -> PaperWrite:
        """``author``'s write of ``record`` for the paper as stored now, announced as revised."""
        (paper,) = storage.papers.with_ids(author, [record.arxiv_id or ""])
        return PaperWrite(
            key=paper.key,
            arxiv_id=paper.arxiv_id,
            status=PaperStatus.TRACKED,
            origin=Origin.ARXIV,
            paper_id=paper.id,
            revisions=(NewRevision(record, "api", ("title",)),),
            event_type=EventType.REVISED,
            event_kinds=("title",),
            read_hash=paper.record_hash,
        )

    def test_a_second_author_adds_a_name_and_one_change_is_one_event(self, both: Storage) -> None:
        """The co-author's write of a known paper is a tie, no event; a change seen by both
        authors is one revision and one event naming both; a plan of the old record that
        would write another is stale."""
        (added,) = self._apply(both, AUTHOR, _added("2601.00001"))
        assert added.authors == (AUTHOR,)
        assert self._apply(both, self.CO, _added("2601.00001")) == []
        (story,) = both.papers.all()
        assert story.authors == tuple(sorted([AUTHOR, self.CO]))
        v2 = make_record("2601.00001", 2, title="Second thoughts")
        stale = self._seen(both, self.CO, make_record("2601.00001", 2, title="Other thoughts"))
        mine, theirs = self._seen(both, AUTHOR, v2), self._seen(both, self.CO, v2)
        (revised,) = self._apply(both, AUTHOR, mine)
        assert revised.type == EventType.REVISED
        assert revised.authors == tuple(sorted([AUTHOR, self.CO]))
        assert self._apply(both, self.CO, theirs) == []  # the story already holds it
        with pytest.raises(StalePlan):
            self._apply(both, self.CO, stale)
        assert [r.record.title for r in both.papers.history(story.id)][-1] == "Second thoughts"
        assert len(both.papers.history(story.id)) == 2

    def test_a_story_is_removed_when_its_last_author_stops_tracking_it(self, both: Storage) -> None:
        self._apply(both, AUTHOR, _added("2601.00001"))
        self._apply(both, self.CO, _added("2601.00001"))

        def gone(author: str) -> PaperWrite:
            (state,) = both.papers.states(author, ["2601.00001"]).values()
            return PaperWrite(
                key=state.key,
                arxiv_id=state.arxiv_id,
                status=PaperStatus.REMOVED,
                origin=Origin.ARXIV,
                paper_id=state.id,
                absent_syncs=3,
                event_type=EventType.REMOVED,
            )

        assert self._apply(both, AUTHOR, gone(AUTHOR)) == []  # the co-author still tracks it
        (removed,) = self._apply(both, self.CO, gone(self.CO))
        assert (removed.type, removed.authors) == (EventType.REMOVED, (self.CO,))
