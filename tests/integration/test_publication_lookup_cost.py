"""What publication lookups ask Crossref when papers are looked up again (issue 33's cost
rules): a paper published through a certain link is watched for notices only, an unlinked
one is searched again, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from syncd.config import ArxivSettings, DatabaseSettings, PublicationsSettings, Settings
from syncd.domain.authors import Author
from syncd.domain.model import NewRevision, PaperWrite, SyncStats
from syncd.domain.vocabulary import AuthorOrigin, EventType, Origin, PaperStatus
from syncd.service.publications import check_publications, publication_sources
from syncd.storage import Storage
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import make_record
from tests.fakecrossref import FakeCrossref

ADA = "Ada Lovelace"
WEEK = 7 * 86400.0
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
LINKED, UNPUBLISHED = "2403.00001", "2403.00002"


@pytest.fixture
def crossref() -> Iterator[FakeCrossref]:
    with FakeCrossref() as fake:
        fake.publish(
            "10.1038/s41567-024-01234-5",
            title="On the analytical engine",
            authors=(ADA,),
            year=2024,
            preprint=LINKED,
            link="arxiv",
        )
        yield fake


@ON_BOTH_DATABASES
def test_a_paper_with_a_certain_link_is_then_watched_for_notices_only(
    database_url: str, crossref: FakeCrossref
) -> None:
    settings = Settings(
        database=DatabaseSettings(url=database_url, migrate=False),
        arxiv=ArxivSettings(contact="lab@example.org"),
        publications=PublicationsSettings(
            enabled=True, crossref_url=crossref.url, crossref_interval=0, interval=WEEK
        ),
    )
    storage = Storage(database_url)
    try:
        storage.authors.reconcile([Author(ADA, AuthorOrigin.CONFIG)])
        writes = [
            PaperWrite(
                key=arxiv_id,
                arxiv_id=arxiv_id,
                status=PaperStatus.TRACKED,
                origin=Origin.ARXIV,
                revisions=(NewRevision(make_record(arxiv_id, authors=(ADA,)), "api"),),
                event_type=EventType.ADDED,
            )
            for arxiv_id in (LINKED, UNPUBLISHED)
        ]
        run_id = storage.runs.start(ADA)
        assert run_id is not None
        storage.apply_cycle(run_id, ADA, writes, SyncStats())

        def lookups(at: datetime) -> dict[str, int]:
            crossref.requests.clear()
            with publication_sources(settings, storage, sleep=lambda _s: None) as sources:
                run = check_publications(storage, sources, settings, now=lambda: at)
            assert run.ok and run.checked == 2
            kinds = [r.kind for r in crossref.requests]
            return {kind: kinds.count(kind) for kind in sorted(set(kinds))}

        first = lookups(T0)
        assert first == {"link": 1, "notices": 1, "search": 1}
        # Two intervals on, both are due: the published paper is no longer asked for links
        # (the link request names the unpublished one alone), the unpublished one is
        # searched again.
        again = lookups(T0 + timedelta(seconds=2 * WEEK))
        assert again == {"link": 1, "notices": 1, "search": 1}
        link = next(r for r in crossref.requests if r.kind == "link")
        asked = link.param("filter") or ""
        assert UNPUBLISHED in asked
        assert LINKED not in asked
    finally:
        storage.close()
