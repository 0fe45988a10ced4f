"""The groups' pages at a department's size, in a real browser: 300 authors, five groups.

Debian's Chromium under Playwright (tests/integration/browser.py).  The
department is written through storage (tests/integration/department.py): 300
authors with accents and other scripts, 600 papers (some shared, some with
very long titles), versions and withdrawals over six months, two members
whose last sync failed.  Screenshots: build/screenshots/groups-*.png,
group-*.png, group-report-*.png, index-group-top-*.png; the *-top-* ones are
what a window shows, the others the whole page.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from syncd.domain.model import SyncStats
from syncd.domain.vocabulary import AuthorOrigin
from syncd.storage import Storage
from syncd.web.paging import PAGE_SIZE
from tests.integration.browser import DESKTOP, PHONE, fits_the_width, shot
from tests.integration.conftest import Site, Syncd, serving
from tests.integration.department import Department, build

DEPARTMENT = "Department of Computer Science"
THEORY = "Theory & Foundations"
FAILING_REASON = "arXiv answered 503 Service Unavailable three times"
WHOLE = "since=2026-03-01&until=2026-09-30"


@pytest.fixture
def department(syncd: Syncd) -> Iterator[tuple[Site, Department]]:
    """300 authors in five groups: the whole department, three labs and a reading group."""
    syncd.author_table = False
    storage = Storage(syncd.database_url)
    try:
        dept = build(storage, 300)
        people = dept.authors
        groups = {
            DEPARTMENT: ("Everyone the department follows on arXiv.", people),
            THEORY: ("Algorithms, complexity, logic and the theory of learning.", people[:40]),
            "Systems": ("Operating systems, networks and databases.", people[40:95]),
            "Machine Learning Lab": ("", people[90:200]),
            "Reading group (ML \u00d7 physics)": ("Meets on Thursdays.", people[::37]),
        }
        for name, (description, members) in groups.items():
            storage.groups.put(name, description, AuthorOrigin.RUNTIME)
            storage.groups.add_members(name, members)
        for failing in people[3:5]:
            run_id = storage.runs.start(failing)
            assert run_id is not None
            storage.runs.fail(run_id, FAILING_REASON, SyncStats())
    finally:
        storage.close()
    with serving(syncd) as site:
        yield site, dept


def test_the_groups_pages_at_300_authors(department: tuple[Site, Department], page: Any) -> None:
    """/groups, the department's page and a lab's, and a report: they fit a desktop and a
    phone, and read as a person would want them to."""
    site, dept = department
    theory = "/groups/" + quote(THEORY, safe="")
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        page.goto(f"{site.url}/groups")
        assert page.locator("ul.groups > li").count() == 5
        summary = page.locator(".sync-status").inner_text()
        assert summary.startswith("300 authors: 298 synced (last ")
        assert page.locator(".sync-status a.failure").inner_text() == "2 failing"
        assert "300 members" in page.locator("ul.groups").inner_text()
        assert fits_the_width(page)
        shot(page, f"groups-{name}")

        page.click(f"ul.groups >> text={THEORY}")
        page.wait_for_url(f"**{theory}")
        assert page.locator("h1").inner_text() == THEORY
        assert page.locator("ul.members > li").count() == 40
        assert page.locator("ul.members li.failing").count() == 2
        # 40 members: the strip counts them, the two that fail among them.
        assert page.locator(".sync-status").inner_text().startswith("40 authors: 38 synced")
        assert page.locator(".sync-status a.failure").inner_text() == "2 failing"
        assert fits_the_width(page)
        shot(page, f"group-{name}")
        shot(page, f"group-top-{name}", whole=False)
        page.evaluate("document.getElementById('papers').scrollIntoView()")
        shot(page, f"group-papers-{name}", whole=False)

        page.goto(f"{site.url}/groups/{quote(DEPARTMENT, safe='')}")
        # 300 members: a page of them, and a link to the next.
        assert page.locator("ul.members > li").count() == PAGE_SIZE
        assert dept.authors[299] not in page.locator("ul.members").inner_text()
        assert page.locator("a[rel=next]", has_text="More members").count() == 1
        assert page.locator("ul.papers > li").count() == PAGE_SIZE
        assert fits_the_width(page)
        shot(page, f"group-department-{name}")
        shot(page, f"group-department-top-{name}", whole=False)
        _next_page_shows_others(page)

        page.goto(f"{site.url}{theory}/report?{WHOLE}")
        assert page.locator("table.report tbody tr").count() == 40
        assert fits_the_width(page)
        shot(page, f"group-report-{name}")
        shot(page, f"group-report-top-{name}", whole=False)

        page.goto(f"{site.url}/?group={quote(THEORY)}")
        assert page.locator("h1").inner_text() == f"Papers in {THEORY}"
        # The author filter is a field to type a name in: no list of the group's 40, and
        # no wall of links to them.
        assert page.locator("select[name=author]").count() == 0
        assert page.locator("p.authors").count() == 0
        assert page.locator(".found").inner_text().startswith("80 papers match")
        assert page.locator("ul.papers > li").count() == PAGE_SIZE
        assert fits_the_width(page)
        shot(page, f"index-group-top-{name}", whole=False)
        page.fill("input[name=author]", dept.authors[0])
        page.click("form.filter button[type=submit]")
        page.wait_for_url("**author=*")
        assert page.locator("h1").inner_text() == f"Papers of {dept.authors[0]} in {THEORY}"


def test_a_report_for_the_days_chosen(department: tuple[Site, Department], page: Any) -> None:
    """The report's form: two days chosen and Show give that period; its CSV link follows."""
    site, dept = department
    theory = "/groups/" + quote(THEORY, safe="")
    page.goto(f"{site.url}{theory}/report")
    page.fill("input[name=since]", "2026-03-01")
    page.fill("input[name=until]", "2026-03-05")
    page.click("form.filter button[type=submit]")
    page.wait_for_url("**/report?since=2026-03-01&until=2026-03-05")
    # Days 0 to 3 of the story (2 to 5 March): the lab's papers added then, each once.
    added = {c.arxiv_id for c in dept.story if c.author in dept.authors[:40] and c.day < 4}
    assert page.locator("table.report tfoot td").first.inner_text() == str(len(added))
    link = page.locator("a.download").get_attribute("href")
    assert link.endswith("/report.csv?since=2026-03-01&until=2026-03-05")
    assert "(group total)" in site.get(link).text


def _next_page_shows_others(page: Any) -> None:
    """The page's "Next page" leads to papers it did not show."""
    first = _paper_links(page)
    page.locator("a[rel=next]", has_text="Next page").click()
    page.wait_for_url("**after=*")
    second = _paper_links(page)
    assert second and not set(second) & set(first)


def _paper_links(page: Any) -> list[str]:
    """The addresses of the papers a page lists."""
    titles = page.locator("ul.papers > li a.title")
    return list(titles.evaluate_all("links => links.map(link => link.getAttribute('href'))"))
