"""Every list but the papers' pages through keyset cursors (``?after=``), on both databases.

Walked by their own "Next page" links and ``Link`` headers while rows are
inserted between requests: none repeats, none is skipped, and a row added
past the cursor still comes.  At a few thousand authors each page stays a
page: bounded in bytes (never in time: that is benchmarks/).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import quote

import pytest
import sqlalchemy as sa
from lxml import html as lxml_html

from syncd.domain.authors import Author
from syncd.domain.vocabulary import AuthorOrigin
from syncd.storage import Storage
from syncd.storage.schema import events_table, papers_table
from syncd.web.paging import PAGE_SIZE
from tests.conftest import BOTH_DATABASES, database_for
from tests.fakearxiv import FakeArxiv
from tests.integration.conftest import Site, Syncd, revise_nestpipe, serving, sync_ok
from tests.scenario import NESTPIPE

# Even numbers first; odd ones are inserted between pages, before and after the cursor.
FIRST = [f"Person {n:04d}" for n in range(0, 240, 2)]
GROUP = "Big lab"
# The most bytes a page may take (docs/PERFORMANCE.md): a page, whatever the record's size.
MAX_PAGE_BYTES = 200_000


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: the order of names and the keyset comparison are each one's."""
    return database_for(request)


@pytest.fixture
def storage(syncd: Syncd) -> Iterator[Storage]:
    syncd.author_table = False
    opened = Storage(syncd.database_url)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def site(syncd: Syncd, storage: Storage) -> Iterator[Site]:
    with serving(syncd) as running:
        yield running


def follow(storage: Storage, names: list[str]) -> None:
    storage.authors.put([Author(name, AuthorOrigin.RUNTIME) for name in names])


def html_walk(
    site: Site, path: str, rows: str, between: Callable[[str], None] | None = None
) -> list[str]:
    """The rows (an XPath) of every page from ``path`` on, by its "Next page" links;
    ``between`` is called with the last row of each page before the next is asked for."""
    seen: list[str] = []
    link: str | None = path
    while link is not None:
        answer = site.get(link)
        assert answer.status_code == 200, answer.text[:300]
        page = lxml_html.fromstring(answer.text)
        found = [" ".join(str(text).split()) for text in page.xpath(rows)]
        assert len(found) <= PAGE_SIZE
        seen += found
        (link,) = page.xpath("//p[@class='pager']/a[@rel='next']/@href") or [None]
        if link is not None and between is not None:
            between(found[-1])
    return seen


def api_walk(
    site: Site, path: str, limit: int, between: Callable[[str], None] | None = None
) -> list[str]:
    """The names of every page from ``path`` on, by their ``Link`` headers."""
    seen: list[str] = []
    link: str | None = f"{path}?limit={limit}"
    while link is not None:
        answer = site.get(link)
        assert answer.status_code == 200, answer.text[:300]
        found = [item["name"] for item in answer.json()]
        assert len(found) <= limit
        seen += found
        header = answer.headers.get("link")
        link = header[1 : header.index(">")] if header else None
        if link is not None and between is not None:
            between(found[-1])
    return seen


def inserting(storage: Storage, add: Callable[[list[str]], None]) -> tuple[Any, list[str]]:
    """A ``between`` that adds an odd-numbered name just before the cursor and one well
    after it; and the names it added past the cursor, which a walk must still meet."""
    past: list[str] = []

    def between(cursor: str) -> None:
        number = int(cursor.rsplit(maxsplit=1)[-1])
        before, after = f"Person {number - 1:04d}", f"Person {number + 61:04d}"
        add([before, after])
        past.append(after)

    return between, past


def check_walk(seen: list[str], first: list[str], past: list[str]) -> None:
    """In order, each once, the first rows and those added past the cursor all there."""
    assert len(seen) == len(set(seen)), "a row repeats"
    assert seen == sorted(seen)
    assert set(first) | set(past) <= set(seen), "a row was skipped"


class TestAuthors:
    def test_the_page_and_the_api_walk_every_author_once(
        self, storage: Storage, site: Site
    ) -> None:
        follow(storage, FIRST)
        rows = "//ul[contains(@class, 'authors')]//a[@class='title']//text()"
        between, past = inserting(storage, lambda names: follow(storage, names))
        check_walk(html_walk(site, "/authors", rows, between), FIRST, past)
        between, past = inserting(storage, lambda names: follow(storage, names))
        first = storage.authors.names()
        check_walk(api_walk(site, "/api/v1/authors", 25, between), first, past)

    def test_a_group_narrows_the_list_and_pages_its_members(
        self, storage: Storage, site: Site
    ) -> None:
        follow(storage, FIRST)
        storage.groups.put(GROUP, "", AuthorOrigin.RUNTIME)
        storage.groups.add_members(GROUP, FIRST[::2])

        def join(names: list[str]) -> None:
            follow(storage, names)
            storage.groups.add_members(GROUP, names)

        between, past = inserting(storage, join)
        members = "//ul[@class='members']/li/a//text()"
        path = "/groups/" + quote(GROUP, safe="")
        check_walk(html_walk(site, path, members, between), FIRST[::2], past)
        listed = html_walk(
            site, "/authors?group=" + quote(GROUP), "//ul[contains(@class, 'authors')]//a//text()"
        )
        assert [n for n in listed if n.startswith("Person")] == storage.groups.members_page(
            GROUP, None, 1000
        )


class TestGroups:
    def test_the_page_and_the_api_walk_every_group_once(self, storage: Storage, site: Site) -> None:
        for name in FIRST:
            storage.groups.put(name, "", AuthorOrigin.RUNTIME)

        def make(names: list[str]) -> None:
            for name in names:
                storage.groups.put(name, "", AuthorOrigin.RUNTIME)

        rows = "//ul[contains(@class, 'groups')]/li/a[@class='title']//text()"
        between, past = inserting(storage, make)
        check_walk(html_walk(site, "/groups", rows, between), FIRST, past)
        between, past = inserting(storage, make)
        first = [g.name for g in storage.groups.page(None, 1000)]
        check_walk(api_walk(site, "/api/v1/groups", 30, between), first, past)


class TestEvents:
    def test_a_papers_events_are_a_page_with_the_rest_on_events(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """Sixty more events about NestPipe: its page shows the latest PAGE_SIZE and links
        /events?paper=, whose pages hold each once, newest first, while more come."""
        sync_ok(syncd)
        revise_nestpipe(arxiv)
        sync_ok(syncd)
        before = copy_events(syncd.database_url, 60)
        with serving(syncd) as site:
            page = lxml_html.fromstring(site.get(f"/papers/{NESTPIPE}").text)
            assert len(page.xpath("//ol[@class='announced']/li")) == PAGE_SIZE
            (more,) = page.xpath("//p[@class='pager']/a/@href")
            assert more == "/events?paper=nestpipe-large-scale-recommendation-training-on"
            seen: list[str] = []
            link: str | None = more
            while link is not None:
                listed = lxml_html.fromstring(site.get(link).text)
                seen += listed.xpath("//ol[@class='events']/li/header/time/@datetime")
                copy_events(syncd.database_url, 3)  # newer: they belong on no older page
                (link,) = listed.xpath("//p[@class='pager']/a/@href") or [None]
        assert seen == sorted(set(seen), reverse=True)
        assert len(seen) == before + 60


def copy_events(url: str, count: int) -> int:
    """``count`` more events about NestPipe, copies of its latest a second apart each;
    how many there were before."""
    e = events_table
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            paper_id = conn.scalar(
                sa.select(papers_table.c.id).where(papers_table.c.arxiv_id == NESTPIPE)
            )
            mine = sa.select(e).where(e.c.paper_id == paper_id)
            before = len(conn.execute(mine).all())
            row = conn.execute(mine.order_by(e.c.seq.desc()).limit(1)).one()
            values = {k: v for k, v in row._mapping.items() if k not in ("seq", "id")}
            conn.execute(
                e.insert(),
                [
                    values
                    | {
                        "id": f"copy-{before}-{n}",
                        "created_at": row.created_at + timedelta(seconds=n + 1),
                    }
                    for n in range(count)
                ],
            )
    finally:
        engine.dispose()
    return before


def test_pages_stay_small_at_thousands_of_authors(storage: Storage, site: Site) -> None:
    """3,000 authors, all in one group, and 60 groups: every page a page, in bytes."""
    people = [f"Scholar {n:05d} {'x' * 40}" for n in range(3000)]
    follow(storage, people)
    storage.groups.put(GROUP, "", AuthorOrigin.RUNTIME)
    storage.groups.add_members(GROUP, people)
    for n in range(60):
        storage.groups.put(f"Group {n:02d}", "", AuthorOrigin.RUNTIME)
    group_page = "/groups/" + quote(GROUP, safe="")
    for path in (
        "/authors",
        "/authors?status=never",
        f"/authors?group={quote(GROUP)}",
        "/groups",
        group_page,
        "/subscribe",
        "/events",
        f"/events?group={quote(GROUP)}",
    ):
        answer = site.get(path)
        assert answer.status_code == 200, path
        assert len(answer.content) < MAX_PAGE_BYTES, path
        strip = lxml_html.fromstring(answer.text).xpath("//aside[@class='sync-status']")[0]
        assert len(lxml_html.tostring(strip)) < 2_000, path
    page = lxml_html.fromstring(site.get(group_page).text)
    assert len(page.xpath("//ul[@class='members']/li")) == PAGE_SIZE
    assert page.xpath("//h2[@id='members']/text()") == ["3,000 members"]
    assert len(site.get("/api/v1/authors").json()) == 100  # DEFAULT_LIMIT
