"""Reads over a set of authors (a group's members), on SQLite and PostgreSQL.

Their papers, each once however many of them share it; their events in a
window of time; and the report counted from those events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from syncd.domain.reports import Period
from syncd.domain.vocabulary import EventType, PaperStatus
from syncd.service.reports import report_of
from syncd.storage import EventQuery, Storage
from tests.conftest import BOTH_DATABASES, database_for
from tests.integration.department import Department, build, day


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    return database_for(request)


@pytest.fixture
def department(database_url: str) -> Iterator[tuple[Storage, Department]]:
    """Twelve authors, two papers each, every fifth shared with the next author."""
    storage = Storage(database_url)
    try:
        yield storage, build(storage, 12)
    finally:
        storage.close()


def test_papers_of_a_set_of_authors_each_once(department: tuple[Storage, Department]) -> None:
    storage, dept = department
    members = dept.authors[3:7]
    found = storage.paper_sets.of_authors(members)
    ids = [p.arxiv_id for p in found]
    expected = sorted(a for a, owners in dept.papers.items() if set(owners) & set(members))
    assert ids == expected  # by key, each once
    # 2603.00010 is Lukasz's (index 4) and Chloé's (index 5): one row of the two stands.
    shared = [p for p in found if p.arxiv_id == "2603.00010"]
    assert len(shared) == 1 and shared[0].author in members
    assert storage.paper_sets.of_authors([]) == []
    assert storage.paper_sets.of_authors(members, [PaperStatus.CANDIDATE]) == []


def test_a_shared_paper_is_once_for_members_on_both_sides(
    department: tuple[Storage, Department],
) -> None:
    storage, dept = department
    owners = dept.papers["2603.00010"]
    found = storage.paper_sets.of_authors(owners)
    assert [p.arxiv_id for p in found].count("2603.00010") == 1
    assert len(found) == len({a for a, o in dept.papers.items() if set(o) & set(owners)})


def test_events_of_a_set_of_authors_in_a_window(department: tuple[Storage, Department]) -> None:
    storage, dept = department
    members = frozenset(dept.authors[:4])
    window = EventQuery(authors=members, published_from=day(5), published_before=day(25))
    found = storage.events.page(window)
    # One event per change of a paper, however many of its authors wrote it down.
    theirs = _changes(dept, lambda owners: bool(set(owners) & members))
    expected = {c for c in theirs if 5 <= c[3] < 25}
    # Both bounds cut: a paper added on day 1 and a version on day 26 are left out.
    assert len(found) == len(expected) < len(theirs)
    assert all(set(dept.papers[e.arxiv_id or ""]) & members for e in found)
    assert all(day(5) <= e.created_at < day(25) for e in found)
    assert [e.seq for e in found] == sorted(e.seq for e in found)
    # The newest of them, as a feed reads them: stamp and page agree.
    newest = storage.events.page(EventQuery(authors=members, newest_first=True, limit=3))
    stamp = storage.events.stamp(EventQuery(authors=members, limit=3))
    assert stamp.seqs == tuple(e.seq for e in newest)


def test_the_report_from_stored_events(department: tuple[Storage, Department]) -> None:
    """Counted from what storage hands back, the report matches the story written."""
    storage, dept = department
    members = dept.authors[4:6]  # they share 2603.00010
    period = Period(day(0).date(), day(200).date())
    report = report_of(storage, "pair", members, period)
    for row in report.rows:
        # A shared paper's changes are each of its authors'.
        mine = _changes(dept, lambda owners, person=row.person: person in owners)
        assert row.new_papers == sum(c[1] == EventType.ADDED for c in mine)
        assert row.withdrawals == sum(c[4] for c in mine)
        assert row.new_versions == sum(c[1] == EventType.REVISED and not c[4] for c in mine)
    shared = {a for a, o in dept.papers.items() if set(o) & set(members)}
    assert report.total.new_papers == len(shared)
    assert report.total.new_papers < sum(r.new_papers for r in report.rows)


def _changes(
    dept: Department, whose: Callable[[list[str]], bool]
) -> set[tuple[str, str, int, int, bool]]:
    """The story's changes of the papers ``whose`` owners pass, each once (the story
    writes a shared paper's change once per owner)."""
    return {
        (c.arxiv_id, c.type, c.version, c.day, c.withdrawn)
        for c in dept.story
        if whose(dept.papers[c.arxiv_id])
    }
