"""Where papers were published, in storage (issue 33), on SQLite and PostgreSQL alike: the
papers due a lookup, a lookup's plan written with its events and their deliveries, the turn
two replicas cannot both take, failed lookups, a person's decisions, quiet papers, a purge."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from syncd.delivery.payload import claim_body
from syncd.domain.authors import Author
from syncd.domain.model import NewRevision, PaperWrite, SyncStats
from syncd.domain.publications import (
    Evidence,
    LinkState,
    MatchLevel,
    Notice,
    PlannedEvent,
    PublicationLink,
    PublicationPlan,
    PublicationSource,
    link_json,
    notice_json,
)
from syncd.domain.routing import EndpointSpec
from syncd.domain.vocabulary import (
    AuthorOrigin,
    DeliveryFormat,
    DeliveryGroup,
    EventType,
    Origin,
    PaperStatus,
)
from syncd.errors import NotFoundError
from syncd.storage import DuePaper, Storage
from syncd.storage.database import utc
from syncd.storage.models import Attempt, Claim
from syncd.storage.schema import (
    deliveries_table,
    digest_events_table,
    events_table,
    publication_checks_table,
    publication_links_table,
    publication_notices_table,
)
from tests.conftest import BOTH_DATABASES, database_for
from tests.fakearxiv import make_record

ADA, BOB = "Ada Lovelace", "Bob Kahn"
# Lookups run now: standing() counts what is due by the database's clock.
NOW = datetime.now(UTC).replace(microsecond=0)
WEEK = timedelta(days=7)
DOI = "10.1038/s41567-024-01234-5"
BETTER = "10.1103/physrevlett.133.010101"


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: the lookups' SQL, and the turn replicas race for, are held to each."""
    return database_for(request)


@pytest.fixture
def storage(database_url: str) -> Iterator[Storage]:
    """A migrated database following Ada and Bob from the file."""
    opened = Storage(database_url)
    opened.authors.reconcile([Author(ADA, AuthorOrigin.CONFIG), Author(BOB, AuthorOrigin.CONFIG)])
    yield opened
    opened.close()


def _write(
    arxiv_id: str,
    *,
    event: EventType | None = EventType.ADDED,
    status: PaperStatus = PaperStatus.TRACKED,
    **fields: Any,
) -> PaperWrite:
    """A new paper from arXiv: announced as added, or (``event=None``) quietly."""
    return PaperWrite(
        key=arxiv_id,
        arxiv_id=arxiv_id,
        status=status,
        origin=Origin.ARXIV,
        revisions=(NewRevision(make_record(arxiv_id, **fields), "api"),),
        event_type=event,
    )


def _cycle(storage: Storage, author: str, *writes: PaperWrite) -> None:
    run_id = storage.runs.start(author)
    assert run_id is not None
    storage.apply_cycle(run_id, author, writes, SyncStats())


def _link(
    doi: str = DOI,
    state: LinkState = LinkState.ACCEPTED,
    *,
    level: MatchLevel = MatchLevel.LINK,
    score: float = 1.0,
) -> PublicationLink:
    bibliographic = level == MatchLevel.BIBLIOGRAPHIC
    return PublicationLink(
        doi=doi,
        venue="Nature Physics",
        type="journal-article",
        date="2024-05-02",
        title="On the analytical engine",
        url=f"https://doi.org/{doi}",
        evidence=Evidence(
            level=level,
            source=PublicationSource.CROSSREF,
            how="crossref-search" if bibliographic else "crossref-relation-doi",
            score=score,
            title_similarity=0.93 if bibliographic else None,
            author_share=0.5 if bibliographic else None,
            year_gap=1 if bibliographic else None,
        ),
        state=state,
    )


def _published(link: PublicationLink) -> PublicationPlan:
    """A lookup that found ``link``: the paper's publication, announced."""
    return PublicationPlan(
        links=(link,),
        events=(PlannedEvent(EventType.PUBLISHED, {"publication": link_json(link)}),),
    )


def _due(storage: Storage, arxiv_id: str) -> DuePaper:
    (paper,) = storage.publications.due(NOW, 10, arxiv_ids=[arxiv_id])
    return paper


def _apply(
    storage: Storage, paper: DuePaper, plan: PublicationPlan, *, searched: bool = False
) -> list[Any] | None:
    return storage.publications.apply(
        paper, plan, checked_at=NOW, due_at=NOW + WEEK, searched=searched
    )


def _rows(storage: Storage, table: sa.Table, *where: Any) -> list[Any]:
    with storage.db.transaction() as conn:
        return list(conn.execute(sa.select(table).where(*where)))


def _count(storage: Storage, table: sa.Table) -> int:
    with storage.db.transaction() as conn:
        return int(conn.scalar(sa.select(sa.func.count()).select_from(table)) or 0)


class TestDue:
    def test_new_tracked_papers_with_an_arxiv_id_are_due_oldest_first(
        self, storage: Storage
    ) -> None:
        """Candidates, seeds without an arXiv id and papers only a removed author tracks
        are not looked up; the rest come in the order they arrived, ``limit`` at a time."""
        _cycle(storage, ADA, _write("2601.00001"), _write("2601.00002"))
        _cycle(storage, ADA, _write("2601.00003", status=PaperStatus.CANDIDATE, event=None))
        storage.authors.put([Author("Cy Young", AuthorOrigin.RUNTIME)])
        _cycle(storage, "Cy Young", _write("2601.00004"))
        storage.authors.remove("Cy Young")
        _cycle(storage, BOB, _write("2601.00005"))
        due = storage.publications.due(NOW, 10)
        assert [p.arxiv_id for p in due] == ["2601.00001", "2601.00002", "2601.00005"]
        assert [p.arxiv_id for p in storage.publications.due(NOW, 2)] == [
            "2601.00001",
            "2601.00002",
        ]
        first = due[0]
        assert (first.turn, first.searched_at, first.quiet) == (0, None, False)
        assert first.record == make_record("2601.00001")
        assert first.known.links == () and first.known.notice_dois == frozenset()

    def test_a_looked_up_paper_is_due_again_at_its_time_or_when_its_record_changes(
        self, storage: Storage
    ) -> None:
        _cycle(storage, ADA, _write("2601.00001"), _write("2601.00002"))
        for arxiv_id in ("2601.00001", "2601.00002"):
            assert _apply(storage, _due(storage, arxiv_id), PublicationPlan()) == []
        assert storage.publications.due(NOW, 10) == []
        later = storage.publications.due(NOW + WEEK, 10)
        assert [(p.arxiv_id, p.turn) for p in later] == [("2601.00001", 1), ("2601.00002", 1)]
        # arXiv now gives 00002 a DOI: it is read at once, not in a week.
        (paper,) = storage.papers.with_ids(ADA, ["2601.00002"])
        revised = make_record("2601.00002", doi=DOI)
        write = PaperWrite(
            key=paper.key,
            arxiv_id=paper.arxiv_id,
            status=PaperStatus.TRACKED,
            origin=Origin.ARXIV,
            paper_id=paper.id,
            revisions=(NewRevision(revised, "api", ("doi",)),),
            event_type=EventType.REVISED,
            event_kinds=("doi",),
            read_hash=paper.record_hash,
        )
        _cycle(storage, ADA, write)
        (changed,) = storage.publications.due(NOW, 10)
        assert (changed.arxiv_id, changed.record.doi) == ("2601.00002", DOI)
        assert storage.publications.standing()["due"] == 1

    def test_named_papers_are_due_whenever_asked_and_unknown_ids_are_named(
        self, storage: Storage
    ) -> None:
        _cycle(storage, ADA, _write("2601.00001"))
        _apply(storage, _due(storage, "2601.00001"), _published(_link()))
        assert storage.publications.due(NOW, 10) == []
        (paper,) = storage.publications.due(NOW, 10, arxiv_ids=["2601.00001"])
        assert paper.known.current == _link()
        with pytest.raises(NotFoundError, match=r"2601\.09999"):
            storage.publications.due(NOW, 10, arxiv_ids=["2601.00001", "2601.09999"])

    def test_quiet_papers_are_recorded_without_events_on_their_first_lookup(
        self, storage: Storage
    ) -> None:
        """A paper of a baseline (no ``paper.added``) is quiet until looked up once; an
        announced one never is."""
        _cycle(storage, ADA, _write("2601.00001", event=None), _write("2601.00002"))
        quiet, announced = storage.publications.due(NOW, 10)
        assert (quiet.arxiv_id, quiet.quiet, announced.quiet) == ("2601.00001", True, False)
        assert _apply(storage, quiet, _published(_link())) == []
        assert _count(storage, events_table) == 1  # the other paper's paper.added
        assert _due(storage, "2601.00001").known.current == _link()
        assert not _due(storage, "2601.00001").quiet
        better = _link(BETTER)
        plan = _published(better)
        (event,) = _apply(storage, _due(storage, "2601.00001"), plan) or []
        assert event.type == EventType.PUBLISHED


class TestApply:
    @pytest.fixture
    def endpoints(self, storage: Storage) -> Storage:
        """A webhook of every event, one grouped by cycle, one of revisions only, one of
        Bob's papers only."""
        storage.endpoints.register(
            [
                EndpointSpec("hook", "http://127.0.0.1:9/a", "0" * 64),
                EndpointSpec("daily", "http://127.0.0.1:9/b", "1" * 64, group=DeliveryGroup.CYCLE),
                EndpointSpec(
                    "revised", "http://127.0.0.1:9/c", "2" * 64, events=("paper.revised",)
                ),
                EndpointSpec("bobs", "http://127.0.0.1:9/d", "3" * 64, authors=(BOB,)),
            ]
        )
        return storage

    def test_a_lookup_writes_links_notices_events_and_their_deliveries(
        self, endpoints: Storage
    ) -> None:
        """One transaction: the link and the notice, ``paper.published`` and
        ``paper.corrected`` about the paper's story (filed under the first author following
        it, naming who tracks it, no revision, no run), one delivery per event to the
        webhook and one digest of both to the cycle's endpoint, which deliver."""
        storage = endpoints
        _cycle(storage, BOB, _write("2601.00001"))
        _cycle(storage, ADA, _write("2601.00001"))
        # The paper.added's deliveries, delivered: a paper's events go out in order.
        _deliver_all(storage)
        link = _link()
        notice = Notice(f"{DOI}.corr", "correction", "2024-07-01", "publisher", DOI)
        plan = PublicationPlan(
            links=(link,),
            notices=(notice,),
            events=(
                PlannedEvent(EventType.PUBLISHED, {"publication": link_json(link)}),
                PlannedEvent(
                    EventType.CORRECTED,
                    {"publication": link_json(link), "notice": notice_json(notice)},
                ),
            ),
        )
        published, corrected = (
            _apply(storage, _due(storage, "2601.00001"), plan, searched=True) or []
        )
        assert [published.type, corrected.type] == [EventType.PUBLISHED, EventType.CORRECTED]
        assert published.author == ADA  # followed first, though Bob found it
        assert published.authors == (ADA, BOB)
        assert published.record == make_record("2601.00001")
        assert corrected.changes == {"publication": link_json(link), "notice": notice_json(notice)}
        rows = _rows(storage, events_table, events_table.c.seq.in_([published.seq, corrected.seq]))
        assert {(r.revision_id, r.sync_run_id, tuple(r.kinds)) for r in rows} == {(None, None, ())}
        assert [e.id for e in storage.events.since()][-2:] == [published.id, corrected.id]
        assert storage.events.since()[-1].record == make_record("2601.00001")

        (link_row,) = _rows(storage, publication_links_table)
        (notice_row,) = _rows(storage, publication_notices_table)
        assert (link_row.key, link_row.state, link_row.decided_at) == (DOI, "accepted", None)
        assert (notice_row.link_id, notice_row.doi) == (link_row.id, f"{DOI}.corr")
        (check,) = _rows(storage, publication_checks_table)
        assert (check.turn, check.failures, check.last_error) == (1, 0, None)
        assert check.searched_at is not None and check.checked_at is not None

        fresh = [published.seq, corrected.seq]
        deliveries = _rows(storage, deliveries_table, deliveries_table.c.event_seq.in_(fresh))
        by_endpoint = {
            name: [d for d in deliveries if d.endpoint_id == _endpoint_id(storage, name)]
            for name in ("hook", "daily", "revised", "bobs")
        }
        assert sorted(d.event_seq for d in by_endpoint["hook"] + by_endpoint["bobs"]) == sorted(
            fresh * 2
        )
        assert by_endpoint["revised"] == []
        (digest,) = by_endpoint["daily"]
        assert digest.digest_id is not None
        carried = _rows(
            storage, digest_events_table, digest_events_table.c.delivery_id == digest.id
        )
        assert sorted(r.event_seq for r in carried) == fresh

        claims = _deliver_all(storage)
        assert len(claims) == 5  # two events to two webhooks, one digest
        for claim in claims:
            body = json.loads(claim_body(claim, DeliveryFormat.STANDARD, public_url=None))
            events = body["data"]["events"] if claim.digest_id else [body["data"]]
            assert [e["type"] for e in events] == (
                [EventType.PUBLISHED, EventType.CORRECTED]
                if claim.digest_id
                else [claim.events[0].type]
            )
            for event in events:
                assert event["record"]["arxiv_id"] == "2601.00001"
                assert event["changes"]["publication"]["doi"] == DOI
                assert event["authors"] == [ADA, BOB]

    def test_a_link_written_again_keeps_when_it_was_found(self, storage: Storage) -> None:
        """A better link replaces the first: both stay, the first as replaced and dated
        when it was found; a lookup without a search leaves ``searched_at`` alone."""
        _cycle(storage, ADA, _write("2601.00001"))
        first = _link(level=MatchLevel.BIBLIOGRAPHIC, score=0.93)
        _apply(storage, _due(storage, "2601.00001"), _published(first), searched=True)
        (before,) = _rows(storage, publication_links_table)
        paper = _due(storage, "2601.00001")
        better = _link(BETTER)
        plan = PublicationPlan(links=(better, replace(first, state=LinkState.REPLACED)))
        storage.publications.apply(
            paper, plan, checked_at=NOW + WEEK, due_at=NOW + 2 * WEEK, searched=False
        )
        links = {r.key: r for r in _rows(storage, publication_links_table)}
        assert links[DOI].state == LinkState.REPLACED
        assert links[DOI].found_at == before.found_at
        assert links[DOI].title_similarity == 0.93
        assert links[BETTER].state == LinkState.ACCEPTED
        (check,) = _rows(storage, publication_checks_table)
        assert check.turn == 2
        assert check.searched_at == before.found_at  # the first lookup's search
        paper = _due(storage, "2601.00001")
        assert [link.doi for link in paper.known.links] == [DOI, BETTER]
        assert paper.known.current == better
        assert paper.searched_at == NOW


def _deliver_all(storage: Storage) -> list[Claim]:
    """Claim and deliver until nothing is left (a paper's events go out one at a time)."""
    claims: list[Claim] = []
    while fresh := storage.outbox.claim("worker", lease_seconds=60, limit=10):
        claims += fresh
        storage.outbox.record_attempts(
            "worker", [Attempt(c.delivery_id, 204, delivered=True) for c in fresh]
        )
    return claims


def _endpoint_id(storage: Storage, name: str) -> int:
    with storage.db.transaction() as conn:
        return int(conn.scalar(sa.text("SELECT id FROM endpoints WHERE name = :n"), {"n": name}))


class TestTurns:
    def test_a_turn_is_written_once(self, storage: Storage) -> None:
        """Two lookups of one turn (two replicas): the second writes nothing, announces
        nothing and says so; the same at the next turn, whose row exists."""
        _cycle(storage, ADA, _write("2601.00001"))
        for _ in range(2):
            paper = _due(storage, "2601.00001")
            plan = _published(_link(f"10.1000/{paper.turn}"))
            assert _apply(storage, paper, plan)
            events = _count(storage, events_table)
            assert _apply(storage, paper, plan) is None
            storage.publications.failed(paper, error="late", when=NOW, retry_at=NOW)
            assert _count(storage, events_table) == events
        (check,) = _rows(storage, publication_checks_table)
        assert (check.turn, check.failures) == (2, 0)
        assert _count(storage, publication_links_table) == 2

    def test_replicas_racing_for_a_turn_write_it_once(self, database_url: str) -> None:
        """Four replicas (each its own engine) apply one lookup at the same moment, first
        on a paper never looked up (no check row) and then on its next turn: each time one
        writes and announces, the others write nothing."""
        replicas = [Storage(database_url) for _ in range(4)]
        try:
            first = replicas[0]
            first.authors.reconcile([Author(ADA, AuthorOrigin.CONFIG)])
            _cycle(first, ADA, _write("2601.00001"))
            for turn in range(2):
                paper = _due(first, "2601.00001")
                assert paper.turn == turn
                plan = _published(_link(f"10.1000/{turn}"))
                start = threading.Barrier(len(replicas))

                def race(
                    replica: Storage,
                    paper: DuePaper = paper,
                    plan: Any = plan,
                    start: threading.Barrier = start,
                ) -> Any:
                    start.wait()
                    return _apply(replica, paper, plan)

                with ThreadPoolExecutor(len(replicas)) as pool:
                    outcomes = list(pool.map(race, replicas))
                assert sorted(o is None for o in outcomes) == [False, True, True, True]
                published = [e for e in first.events.since() if e.type == EventType.PUBLISHED]
                assert len(published) == turn + 1
            (check,) = _rows(first, publication_checks_table)
            assert check.turn == 2
        finally:
            for replica in replicas:
                replica.close()


class TestFailures:
    def test_a_failed_lookup_changes_no_link_and_is_retried(self, storage: Storage) -> None:
        _cycle(storage, ADA, _write("2601.00001"), _write("2601.00002", event=None))
        _apply(storage, _due(storage, "2601.00001"), _published(_link()))
        for arxiv_id in ("2601.00001", "2601.00002"):
            storage.publications.failed(
                _due(storage, arxiv_id),
                error="Crossref answered 503 " + "x" * 600,
                when=NOW,
                retry_at=NOW + timedelta(hours=1),
            )
        checks = {r.paper_id: r for r in _rows(storage, publication_checks_table)}
        assert sorted((r.turn, r.failures) for r in checks.values()) == [(1, 1), (2, 1)]
        for check in checks.values():
            stamp = NOW.isoformat(timespec="seconds")
            assert check.last_error.startswith(f"{stamp}: Crossref answered 503")
            assert len(check.last_error) == 500
        assert _due(storage, "2601.00001").known.current == _link()
        assert storage.publications.due(NOW, 10) == []
        assert len(storage.publications.due(NOW + timedelta(hours=1), 10)) == 2
        assert storage.publications.standing()["failing"] == 2
        # A failure is no lookup: a quiet paper stays quiet.
        assert _due(storage, "2601.00002").quiet
        storage.publications.failed(
            _due(storage, "2601.00002"), error="again", when=NOW, retry_at=NOW
        )
        _apply(storage, _due(storage, "2601.00002"), PublicationPlan())
        by_id = {r.paper_id: r for r in _rows(storage, publication_checks_table)}
        assert [(r.failures, r.last_error) for r in by_id.values()].count((0, None)) == 1
        assert storage.publications.standing()["failing"] == 1


class TestReview:
    def test_a_candidate_waits_for_a_person_who_confirms_it(self, storage: Storage) -> None:
        """The candidate is listed with its paper; confirmed, it is dated, announced and no
        longer listed; a lookup planned before the decision writes nothing."""
        _cycle(storage, ADA, _write("2601.00001", title="Engines"), _write("2601.00002"))
        candidate = _link(state=LinkState.CANDIDATE, level=MatchLevel.BIBLIOGRAPHIC, score=0.7)
        _apply(storage, _due(storage, "2601.00001"), PublicationPlan(links=(candidate,)))
        other = _link(BETTER, LinkState.CANDIDATE, level=MatchLevel.BIBLIOGRAPHIC, score=0.65)
        _apply(storage, _due(storage, "2601.00002"), PublicationPlan(links=(other,)))
        items = storage.publications.review()
        assert [(i.paper_key, i.arxiv_id, i.link) for i in items] == [
            ("2601.00001", "2601.00001", candidate),
            ("2601.00002", "2601.00002", other),
        ]
        assert items[0].title == "Engines"
        assert storage.publications.standing()["candidate"] == 2

        stale = _due(storage, "2601.00001")
        paper_id, known = storage.publications.known("2601.00001")
        assert known.links == (candidate,)
        confirmed = replace(candidate, state=LinkState.CONFIRMED)
        decision = _published(confirmed)
        decided_at = NOW + timedelta(hours=2)
        (event,) = storage.publications.decide(paper_id, decision, when=decided_at)
        assert (event.type, event.changes["publication"]["state"]) == (
            EventType.PUBLISHED,
            "confirmed",
        )
        assert [i.arxiv_id for i in storage.publications.review()] == ["2601.00002"]
        (row,) = _rows(storage, publication_links_table, publication_links_table.c.key == DOI)
        assert row.state == LinkState.CONFIRMED
        assert utc(row.decided_at) == decided_at
        assert _apply(storage, stale, PublicationPlan(links=(candidate,))) is None
        assert storage.publications.known("2601.00001")[1].current == confirmed
        with pytest.raises(NotFoundError):
            storage.publications.known("2601.09999")

    def test_a_rejected_link_is_remembered(self, storage: Storage) -> None:
        _cycle(storage, ADA, _write("2601.00001"))
        candidate = _link(state=LinkState.CANDIDATE, level=MatchLevel.BIBLIOGRAPHIC, score=0.7)
        _apply(storage, _due(storage, "2601.00001"), PublicationPlan(links=(candidate,)))
        paper_id, _ = storage.publications.known("2601.00001")
        rejected = replace(candidate, state=LinkState.REJECTED)
        assert (
            storage.publications.decide(paper_id, PublicationPlan(links=(rejected,)), when=NOW)
            == []
        )
        assert storage.publications.review() == []
        assert _due(storage, "2601.00001").known.links == (rejected,)
        assert storage.publications.standing()["rejected"] == 1


class TestPurge:
    def test_purging_an_author_deletes_the_publications_of_papers_only_they_held(
        self, storage: Storage
    ) -> None:
        storage.authors.put([Author("Cy Young", AuthorOrigin.RUNTIME)])
        _cycle(storage, "Cy Young", _write("2601.00001"), _write("2601.00002"))
        _cycle(storage, ADA, _write("2601.00002"))
        notice = Notice(f"{DOI}.retraction", "retraction", "2025", "retraction-watch", DOI)
        for arxiv_id in ("2601.00001", "2601.00002"):
            plan = replace(_published(_link()), notices=(notice,))
            _apply(storage, _due(storage, arxiv_id), plan)
            storage.publications.failed(
                _due(storage, arxiv_id), error="down", when=NOW, retry_at=NOW
            )
        storage.authors.remove("Cy Young")
        purge = storage.purge_author("Cy Young")
        assert (purge.deleted, purge.kept) == (1, 1)
        (kept,) = storage.papers.with_ids(ADA, ["2601.00002"])
        for table in (publication_links_table, publication_notices_table, publication_checks_table):
            assert [r.paper_id for r in _rows(storage, table)] == [kept.id]
