"""Lists of papers a page at a time, latest change first, searched in the database.

Over a department written through storage (tests/integration/department.py),
on both databases: the pages walk the same order as each paper's latest
change (``Papers.latest_changes``), papers added between two pages neither
repeat nor leave a gap, a search answers what the folded substring search of
every word answers (the same on SQLite's FTS5 and PostgreSQL's pg_trgm), and
the API and the pages carry the cursor in their next links.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote, urlencode

import pytest
import sqlalchemy as sa
from lxml import html as lxml_html

from syncd.domain.model import NewRevision, Paper, PaperWrite, SyncStats
from syncd.domain.record import normalize_name
from syncd.domain.vocabulary import AuthorOrigin, EventType, Origin, PaperStatus
from syncd.storage import PaperListQuery, PaperScope, Storage
from syncd.storage.migrate import schema_drift, upgrade
from syncd.storage.schema import paper_authors_table
from syncd.web.paging import PAGE_SIZE
from tests.conftest import BOTH_DATABASES, database_for
from tests.fakearxiv import make_record
from tests.integration.conftest import Site, Syncd, serving
from tests.integration.department import Change, Department, build, write_change
from tests.integration.rewind import downgrade

GROUP = "Lab of Ингрид & <co>"
# 31 authors, two papers each, every fifth shared: more papers than a page shows.
AUTHORS = 31


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: the order and the search are SQL of each (FTS5, pg_trgm)."""
    return database_for(request)


@dataclass
class Lists:
    storage: Storage
    dept: Department
    syncd: Syncd


@pytest.fixture
def lists(syncd: Syncd) -> Iterator[Lists]:
    syncd.author_table = False
    storage = Storage(syncd.database_url)
    try:
        dept = build(storage, AUTHORS)
        storage.groups.put(GROUP, "", AuthorOrigin.RUNTIME)
        storage.groups.add_members(GROUP, dept.authors[:9])
        yield Lists(storage, dept, syncd)
    finally:
        storage.close()


def _walk(storage: Storage, query: PaperListQuery) -> list[Paper]:
    """Every page of ``query``'s list, one after the other."""
    found: list[Paper] = []
    while True:
        page = storage.paper_lists.page(query)
        found += page.papers
        if page.next is None:
            return found
        query = PaperListQuery(query.scope, query.status, query.search, page.next, query.limit)


def _latest_first(storage: Storage, papers: list[Paper]) -> list[str]:
    """The arXiv ids of ``papers`` by their latest change as the pages show it, newest first."""
    changes = storage.papers.latest_changes([p.id for p in papers])
    ordered = sorted(papers, key=lambda p: (changes[p.id].at, p.id), reverse=True)
    return [p.arxiv_id or p.key for p in ordered]


def test_pages_walk_every_paper_once_latest_change_first(lists: Lists) -> None:
    storage = lists.storage
    walked = _walk(storage, PaperListQuery(limit=7))
    ids = [p.arxiv_id for p in walked]
    assert len(ids) == len(set(ids)) == len(lists.dept.papers)
    assert ids == _latest_first(storage, storage.papers.all())
    # The stored order is the latest change's: a revised paper moves up front.
    assert walked[0].record.version is not None and walked[0].record.version > 1


def test_papers_added_between_pages_neither_repeat_nor_leave_a_gap(lists: Lists) -> None:
    storage, dept = lists.storage, lists.dept
    first = storage.paper_lists.page(PaperListQuery(limit=10))
    assert first.next is not None
    for number in range(3):
        arxiv_id = f"2612.{number:05d}"
        dept.papers[arxiv_id] = [dept.authors[number]]
        write_change(storage, dept, Change(dept.authors[number], arxiv_id, EventType.ADDED, 300))
    rest = _walk(storage, PaperListQuery(after=first.next, limit=10))
    shown = [p.arxiv_id for p in first.papers + rest]
    assert len(shown) == len(set(shown)) == len(dept.papers) - 3
    # The new papers are the newest: the first page holds them now, before the others.
    again = storage.paper_lists.page(PaperListQuery(limit=3)).papers
    assert {p.arxiv_id for p in again} == {"2612.00000", "2612.00001", "2612.00002"}


def test_a_group_author_and_status_narrow_the_pages(lists: Lists) -> None:
    storage, dept = lists.storage, lists.dept
    members = set(dept.authors[:9])
    group = _walk(storage, PaperListQuery(PaperScope(group=GROUP), limit=4))
    assert {p.arxiv_id for p in group} == {a for a, o in dept.papers.items() if set(o) & members}
    assert [p.arxiv_id for p in group] == _latest_first(storage, group)
    author = dept.authors[4]
    mine = _walk(storage, PaperListQuery(PaperScope(author=author, group=GROUP), limit=1))
    assert {p.arxiv_id for p in mine} == {a for a, o in dept.papers.items() if author in o}
    assert all(p.author == author for p in mine)
    tracked = PaperListQuery(PaperScope(group=GROUP), PaperStatus.TRACKED, limit=5)
    assert len(_walk(storage, tracked)) == len(group)
    removed = PaperListQuery(PaperScope(group=GROUP), PaperStatus.REMOVED)
    assert _walk(storage, removed) == []
    counts = storage.paper_lists.counts(PaperScope(group=GROUP))
    assert counts[PaperStatus.TRACKED] == len(group)
    assert sum(counts.values()) == len(group)


def _reference(storage: Storage, search: str) -> set[str]:
    """What syncd's search answered before it was done in the database: every folded word
    a substring of a paper's title, arXiv id, key or authors."""
    words = normalize_name(search).split()
    found = set()
    for paper in storage.papers.all():
        record = paper.record
        text = [record.title or "", paper.arxiv_id or "", paper.key, paper.author]
        text += [*paper.authors, *record.authors]
        if all(word in normalize_name(" ".join(text)) for word in words):
            found.add(paper.key)
    return found


SEARCHES = [
    "graph NEURAL",  # title words, any case
    "zoe muller",  # an author without accents
    "ИНГРИД",  # another script, folded
    "navier stokes",  # an en dash is punctuation
    "case 1",  # a word shorter than a trigram
    "of a",  # only short words
    "2603 0001",  # parts of arXiv ids
    "coauthor garcia-marquez",
    '"quoted" words',
    "100% under_score",
    "o_",  # a LIKE wildcard is a character like any other
    "nothing like this anywhere",
]


@pytest.mark.parametrize("search", SEARCHES)
def test_a_search_finds_what_every_word_finds(lists: Lists, search: str) -> None:
    storage = lists.storage
    found = _walk(storage, PaperListQuery(search=search, limit=20))
    assert {p.key for p in found} == _reference(storage, search)
    assert [p.arxiv_id for p in found] == _latest_first(storage, found)


def test_an_arxiv_id_finds_its_paper(lists: Lists) -> None:
    storage = lists.storage
    for written in ("2603.00003", "arXiv:2603.00003v2", "https://arxiv.org/abs/2603.00003"):
        found = storage.paper_lists.page(PaperListQuery(search=written)).papers
        assert [p.arxiv_id for p in found] == ["2603.00003"], written
    assert storage.paper_lists.page(PaperListQuery(search="2603.99999")).papers == []


def test_a_search_finds_a_paper_by_its_new_record_and_holder(lists: Lists) -> None:
    """The search text follows the record: a revision's title, a new holder's name."""
    storage, dept = lists.storage, lists.dept
    arxiv_id = "2603.00002"
    story = storage.papers.find(arxiv_id)
    assert story is not None
    newcomer = dept.authors[-1]
    record = make_record(arxiv_id, 2, title="Zymurgy at scale", authors=("Ada Coauthor",))
    write = PaperWrite(
        key=arxiv_id,
        arxiv_id=arxiv_id,
        status=PaperStatus.TRACKED,
        origin=Origin.ARXIV,
        revisions=(NewRevision(record, "api"),),
        read_hash=story.record_hash,
    )
    run_id = storage.runs.start(newcomer)
    assert run_id is not None
    storage.apply_cycle(run_id, newcomer, [write], SyncStats())
    for search in ("zymurgy", newcomer):
        found = storage.paper_lists.page(PaperListQuery(search=search)).papers
        assert arxiv_id in {p.arxiv_id for p in found}, search
        assert {p.key for p in found} == _reference(storage, search)
    formerly = storage.paper_lists.page(PaperListQuery(search=story.record.title or "", limit=99))
    assert arxiv_id not in {p.arxiv_id for p in formerly.papers}


def test_the_api_pages_with_link_and_searches(lists: Lists) -> None:
    with serving(lists.syncd) as site:
        keys, path, pages = [], "/api/v1/papers?limit=9", 0
        while path:
            answer = site.get(path)
            assert answer.status_code == 200
            keys += [p["key"] for p in answer.json()]
            path = _next(answer.headers.get("link"))
            pages += 1
        assert len(keys) == len(set(keys)) == len(lists.dept.papers)
        assert pages == -(-len(keys) // 9)
        assert keys == _latest_first(lists.storage, lists.storage.papers.all())
        searched = site.get("/api/v1/papers", params={"q": "graph neural", "limit": 1000})
        assert {p["key"] for p in searched.json()} == _reference(lists.storage, "graph neural")
        assert "link" not in searched.headers
        group = site.get(f"/api/v1/groups/{quote(GROUP, safe='')}/papers", params={"limit": 3})
        assert len(group.json()["papers"]) == 3
        following = site.get(_next(group.headers["link"]) or "")
        assert following.json()["name"] == GROUP
        assert not {p["key"] for p in following.json()["papers"]} & {
            p["key"] for p in group.json()["papers"]
        }


@pytest.mark.parametrize(
    "cursor",
    [
        "not-a-cursor",
        base64.urlsafe_b64encode(b'["2026-01-01",1]').decode(),
        base64.urlsafe_b64encode(b"[1]").decode(),
        base64.urlsafe_b64encode(b"[99999999999999999999999,1]").decode(),
        base64.urlsafe_b64encode(b"[true,1]").decode(),
    ],
)
def test_a_malformed_cursor_is_a_400(lists: Lists, cursor: str) -> None:
    with serving(lists.syncd) as site:
        for path in ("/api/v1/papers", f"/api/v1/groups/{quote(GROUP, safe='')}/papers", "/"):
            answer = site.get(path, params={"after": cursor})
            assert answer.status_code == 400, path
            assert "bad parameter" in answer.text and "not a cursor this list gave" in answer.text


def test_the_index_shows_a_page_and_links_the_next(lists: Lists) -> None:
    with serving(lists.syncd) as site:
        first = _page(site, "/")
        assert len(first.shown) == PAGE_SIZE
        assert first.found.startswith(f"{len(lists.dept.papers)} papers, latest change first")
        assert first.next is not None
        second = _page(site, first.next)
        assert not set(second.shown) & set(first.shown)
        assert len(first.shown) + len(second.shown) == len(lists.dept.papers)
        assert second.next is None
        author = lists.dept.authors[0]
        narrowed = _page(site, "/?" + urlencode({"author": author, "q": "case"}))
        assert narrowed.shown and narrowed.next is None
        # The author is a field to type in, not a list of every name.
        assert narrowed.tree.xpath("//input[@name='author']/@value") == [author]
        assert narrowed.tree.xpath("//select[@name='author']") == []
        group = _page(site, "/groups/" + quote(GROUP, safe=""))
        assert group.shown and group.next is None


@dataclass
class _Shown:
    tree: lxml_html.HtmlElement
    shown: list[str]
    found: str
    next: str | None


def _page(site: Site, path: str) -> _Shown:
    answer = site.get(path)
    assert answer.status_code == 200, answer.text
    assert len(answer.content) < 200_000
    tree = lxml_html.fromstring(answer.text)
    links = tree.xpath("//a[@rel='next']/@href")
    return _Shown(
        tree,
        tree.xpath("//ul[@class='papers']/li/a[@class='title']/@href"),
        tree.findtext(".//p[@class='found']") or "",
        links[0] if links else None,
    )


def _next(link: str | None) -> str | None:
    """The path of a ``Link`` header's next page."""
    if link is None:
        return None
    found = re.fullmatch(r'<([^>]+)>; rel="next"', link)
    assert found is not None, link
    return found.group(1)


def test_a_change_moves_its_paper_up_front(lists: Lists) -> None:
    """A cycle's event about the list's last paper makes it the first, dated by the event."""
    storage = lists.storage
    last = _walk(storage, PaperListQuery(limit=50))[-1]
    author = last.author
    record = make_record(last.arxiv_id or "", 9, title="Revised at last", authors=(author,))
    write = PaperWrite(
        key=last.key,
        arxiv_id=last.arxiv_id,
        status=PaperStatus.TRACKED,
        origin=Origin.ARXIV,
        revisions=(NewRevision(record, "api"),),
        paper_id=last.id,
        read_hash=last.record_hash,
        event_type=EventType.REVISED,
        event_kinds=("version",),
    )
    run_id = storage.runs.start(author)
    assert run_id is not None
    (event,) = storage.apply_cycle(run_id, author, [write], SyncStats())
    first = storage.paper_lists.page(PaperListQuery(limit=1))
    assert [p.id for p in first.papers] == [last.id]
    assert first.next is not None and first.next[0] == event.created_at


def test_changed_at_is_when_the_last_event_was(lists: Lists) -> None:
    """The stored order's key is the latest change ``latest_changes`` tells."""
    storage = lists.storage
    first = storage.paper_lists.page(PaperListQuery(limit=1))
    assert first.next is not None
    (paper,) = first.papers
    at: datetime = first.next[0]
    assert storage.papers.latest_changes([paper.id])[paper.id].at == at


def test_the_migration_dates_and_indexes_the_papers_it_finds(lists: Lists) -> None:
    """0025 over a record of papers dates each by its latest change and makes each one
    searchable; back to 0024 and up again, the lists and the schema are as before."""
    storage = lists.storage
    order = [p.id for p in _walk(storage, PaperListQuery(limit=50))]
    searched = [p.id for p in _walk(storage, PaperListQuery(search="graph neural"))]
    downgrade(storage.engine, "0024")
    upgrade(storage.engine)
    assert schema_drift(storage.engine) == []
    assert [p.id for p in _walk(storage, PaperListQuery(limit=50))] == order
    assert [p.id for p in _walk(storage, PaperListQuery(search="graph neural"))] == searched
    assert searched


def test_an_author_page_shows_a_page_of_candidates_and_links_them_all(syncd: Syncd) -> None:
    """An author holding more candidates than a page: the first page of them, and a link to
    all of them on the index (an author's candidates are not read whole)."""
    syncd.author_table = False
    storage = Storage(syncd.database_url)
    try:
        (name,) = build(storage, 1, papers_each=PAGE_SIZE + 7).authors
        with storage.db.transaction() as conn:
            conn.execute(sa.update(paper_authors_table).values(status=PaperStatus.CANDIDATE))
    finally:
        storage.close()
    with serving(syncd) as site:
        answer = site.get(f"/authors/{quote(name)}")
        page = lxml_html.fromstring(answer.text)
        shown = page.xpath("//h2[@id='candidates']/following-sibling::ul[1]/li")
        assert len(shown) == PAGE_SIZE
        (link,) = page.xpath("//a[starts-with(., 'All ') and contains(., 'candidates')]")
        assert link.text_content() == f"All {PAGE_SIZE + 7} candidates"
        listed = site.get(link.get("href"))
        assert f"candidate <b>{PAGE_SIZE + 7}</b>" in listed.text
