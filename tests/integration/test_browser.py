"""The pages in a real browser (tests/integration/browser.py): Debian's Chromium under Playwright.

docs/paper-page.png is the screenshot test_browser_history saves as history-flexmarl-desktop.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakearxiv import FakeArxiv
from tests.integration.browser import DESKTOP, PHONE, fits_the_width, shot
from tests.integration.conftest import HOSTILE_ID, Site, Syncd, hostile_paper, serving, sync_ok
from tests.scenario import NESTPIPE


def test_the_papers_page_filters_by_status(site: Site, page: Any) -> None:
    """/ shows every paper and its counts; choosing a status and Show narrows the list."""
    page.goto(f"{site.url}/")
    papers = site.syncd.json("papers")
    assert page.locator("ul.papers > li").count() == len(papers)
    page.select_option("select[name=status]", "unlinked")
    page.click("button[type=submit]")
    page.wait_for_url("**/?*status=unlinked*")
    unlinked = [p for p in papers if p["status"] == "unlinked"]
    assert page.locator("ul.papers > li").count() == len(unlinked)
    assert page.locator("ul.papers .status").all_inner_texts() == ["unlinked"] * len(unlinked)
    page.set_viewport_size(PHONE)
    page.goto(f"{site.url}/")
    assert fits_the_width(page)
    shot(page, "papers-phone")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_paper_page_shows_a_title_change(site: Site, page: Any, viewport: Any) -> None:
    """NestPipe after v2: words struck and inserted, its version, the newest change first and
    where it came from."""
    page.set_viewport_size(viewport)
    page.goto(f"{site.url}/papers/{NESTPIPE}")
    assert page.locator("h1").inner_text().startswith("NestPipe: Scaling Recommendation")
    assert page.locator(".meta .version").inner_text() == "v2"
    assert page.locator(".timeline .source").all_inner_texts() == [
        "v2 against v1",
        "v1 against seed",
    ]
    assert page.locator(".timeline .from").first.inner_text() == "arXiv v2, seen by a sync"
    title = page.locator("dd.change-title").first
    assert title.locator("del").all_inner_texts() == ["Large-Scale", "on", "via"]
    assert title.locator("ins").all_inner_texts() == ["Scaling", "to", "with"]
    struck = title.locator("del").first.evaluate("e => getComputedStyle(e).textDecorationLine")
    assert struck == "line-through"
    assert fits_the_width(page)
    shot(page, f"paper-{'phone' if viewport is PHONE else 'desktop'}")


def test_the_events_page_shows_the_changes(site: Site, page: Any) -> None:
    """/events: newest first, each with a readable headline and its diff."""
    page.goto(f"{site.url}/events")
    first = page.locator("ol.events > li").first
    assert first.locator(".headline").inner_text() == (
        f"NestPipe: … ({NESTPIPE}) v2: version, title, authors, abstract"
    )
    assert first.locator("dd.change-title ins").all_inner_texts() == ["Scaling", "to", "with"]
    shot(page, "events")
    first.locator(".headline").click()
    page.wait_for_url("**/papers/nestpipe-*")
    assert page.locator("h1").inner_text().startswith("NestPipe")


def test_a_hostile_abstract_runs_nothing(syncd: Syncd, arxiv: FakeArxiv, page: Any) -> None:
    """A title and abstract holding <script> and <img onerror> show as text and run nothing."""
    sync_ok(syncd)
    arxiv.publish(hostile_paper())
    sync_ok(syncd)
    with serving(syncd) as site:
        for path in ("/", f"/papers/{HOSTILE_ID}", "/events"):
            page.goto(f"{site.url}{path}")
            page.wait_for_load_state("load")
            assert page.evaluate("typeof window.pwned") == "undefined"
            assert page.locator("main script, main img").count() == 0
        assert "<script>window.pwned = 'abstract'</script>" in page.locator("main").inner_text()
        shot(page, "hostile")
