"""The index, the status strip, the subscribe page and the API docs in a real browser.

Debian's Chromium under Playwright (tests/integration/browser.py), over the
fake arXiv on loopback.  Screenshots: build/screenshots/index-*.png,
index-failed-*.png, index-harvest-failed-*.png, index-first-run-failed-*.png,
subscribe-*.png, docs-*.png.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.fakearxiv import FakeArxiv, status
from tests.integration.browser import DESKTOP, PHONE, fits_the_width, shot
from tests.integration.conftest import (
    Site,
    Syncd,
    harvest_stopped_on_its_second_page,
    serving,
    sync_ok,
)
from tests.scenario import AUTHOR, NESTPIPE

VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
# What the fake answers while arXiv is "down", and the reason a failed cycle records.
OUTAGE = status(503, body=b"Service Unavailable")


def _name(viewport: Any) -> str:
    return "phone" if viewport is PHONE else "desktop"


def _search(page: Any, text: str) -> list[str]:
    """Type ``text`` into the search box, submit with Enter; the titles found."""
    page.fill("input[name=q]", text)
    page.press("input[name=q]", "Enter")
    page.wait_for_load_state("load")
    return page.locator("ul.papers .title").all_inner_texts()


@VIEWPORTS
def test_the_index_is_newest_change_first(site: Site, page: Any, viewport: Any) -> None:
    """NestPipe's v2 is the latest change: first, with what changed in words; times descend."""
    page.set_viewport_size(viewport)
    page.goto(f"{site.url}/")
    first = page.locator("ul.papers > li").first
    assert first.locator(".title").inner_text().startswith("NestPipe: Scaling")
    assert first.locator(".what").inner_text() == "Version, Title, Authors, Abstract"
    stamps = page.locator("ul.papers .when time").evaluate_all(
        "times => times.map(t => t.getAttribute('datetime'))"
    )
    moments = [datetime.fromisoformat(s) for s in stamps]
    assert len(moments) == page.locator("ul.papers > li").count()
    assert moments == sorted(moments, reverse=True)
    assert fits_the_width(page)
    shot(page, f"index-{_name(viewport)}")


def test_search_finds_by_title_id_and_author(site: Site, page: Any) -> None:
    """The search box (a GET form) finds a paper by title words, by arXiv id, by an author."""
    page.goto(f"{site.url}/")
    everything = page.locator("ul.papers > li").count()
    (by_title,) = _search(page, "nestpipe scaling")
    assert by_title.startswith("NestPipe: Scaling")
    assert "?q=nestpipe+scaling&" in page.url
    (by_id,) = _search(page, NESTPIPE)
    assert by_id.startswith("NestPipe")
    # A co-author of NestPipe only, typed in lower case without accents' care.
    nestpipe = site.syncd.json("history", NESTPIPE)[-1]["record"]
    coauthor = next(a for a in nestpipe["authors"] if a != AUTHOR)
    assert "NestPipe: Scaling" in " ".join(_search(page, coauthor.lower()))
    assert len(_search(page, AUTHOR)) == everything
    assert _search(page, "no such paper anywhere") == []
    assert page.locator(".found").inner_text().startswith("0 papers match")
    # What was searched stays in the box, and only there.
    assert page.input_value("input[name=q]") == "no such paper anywhere"
    assert "no such paper anywhere" not in page.locator("main").inner_text()


def test_author_links_filter_the_index(syncd: Syncd, page: Any) -> None:
    """With two authors followed, each name is a link that narrows the index to their papers."""
    sync_ok(syncd)
    syncd.extra = '[[authors]]\nname = "Nobody Yet"\n'
    with serving(syncd) as site:
        page.goto(f"{site.url}/")
        page.click(".authors a:has-text('Nobody Yet')")
        page.wait_for_url("**/?author=Nobody%20Yet")
        assert page.locator("h1").inner_text() == "Papers of Nobody Yet"
        assert page.locator("ul.papers > li").count() == 0
        assert page.locator(".found").inner_text().startswith("0 papers match")


@VIEWPORTS
def test_the_strip_shows_a_failed_sync_and_its_reason(
    syncd: Syncd, arxiv: FakeArxiv, page: Any, viewport: Any
) -> None:
    """After a good sync and a failed one, every page's strip counts it failing in one line
    above the page's title; the count opens the failing authors, the reason in words."""
    sync_ok(syncd)
    arxiv.inject_always(OUTAGE)
    assert syncd("sync").code == 1
    with serving(syncd) as site:
        page.set_viewport_size(viewport)
        for path in ("/", "/events", f"/papers/{NESTPIPE}", "/subscribe"):
            page.goto(f"{site.url}{path}")
            strip = page.locator(".sync-status")
            assert strip.inner_text().startswith("1 author: 0 synced (last ")
            assert page.locator(".sync-status a.failure").inner_text() == "1 failing"
            assert "not known here" in page.locator(".sync-status .next").inner_text()
            # The page begins within its first screen, whatever the strip says.
            title = page.locator("main h1").bounding_box()
            assert title is not None and title["y"] < viewport["height"] / 2, path
        page.click(".sync-status a.failure")
        page.wait_for_url("**/authors?status=failing")
        listed = page.locator("ul.authors > li")
        assert listed.count() == 1
        assert listed.locator("a.title").inner_text() == AUTHOR
        assert "503" in listed.inner_text()
        page.goto(f"{site.url}/")
        # A good sync happened once: not the "every sync failed" message.
        assert page.locator(".all-failed").count() == 0
        assert fits_the_width(page)
        shot(page, f"index-failed-{_name(viewport)}")


@VIEWPORTS
def test_the_strip_shows_the_harvester_and_why_it_stopped(
    syncd: Syncd, page: Any, viewport: Any
) -> None:
    """``[harvest] enabled``: the strip says in a word that the harvest fails, on every
    page; /authors has its line (its last complete harvest, its failure in words, the page
    it kept)."""
    harvest_stopped_on_its_second_page(syncd)
    with serving(syncd) as site:
        page.set_viewport_size(viewport)
        for path in ("/", "/events", f"/papers/{NESTPIPE}", "/authors"):
            page.goto(f"{site.url}{path}")
            word = page.locator(".sync-status .harvest").inner_text()
            assert word.startswith("harvest failing since ")
        page.click(".sync-status a.details")
        page.wait_for_url("**/authors#sync")
        line = page.locator(".sync-details li.harvest.failing")
        assert line.locator(".who").inner_text() == "arXiv harvest"
        assert "last harvested" in line.inner_text()
        assert "(cut short?)" in line.locator(".failure bdi.reason").inner_text()
        failure = line.locator(".failure").inner_text()
        assert "(1 page applied, the next harvest resumes):" in failure
        page.goto(f"{site.url}/")
        assert fits_the_width(page)
        shot(page, f"index-harvest-failed-{_name(viewport)}")


@VIEWPORTS
def test_a_first_run_that_failed_says_so(
    syncd: Syncd, arxiv: FakeArxiv, page: Any, viewport: Any
) -> None:
    """No good sync ever: the index says every sync failed, when and why, above the seeds."""
    arxiv.inject_always(OUTAGE)
    assert syncd("sync").code == 1
    with serving(syncd) as site:
        page.set_viewport_size(viewport)
        page.goto(f"{site.url}/")
        message = page.locator(".all-failed")
        text = message.inner_text()
        assert text.startswith("No papers from arXiv yet: every sync so far failed (last: ")
        assert "503" in message.locator("bdi.reason").inner_text()
        seeds = page.locator("ul.papers > li").count()
        assert f"The {seeds} papers below come from the seed documents" in text
        assert page.locator(".sync-status a.failure").inner_text() == "1 failing"
        assert fits_the_width(page)
        shot(page, f"index-first-run-failed-{_name(viewport)}")


@VIEWPORTS
def test_feeds_are_discovered_and_explained(site: Site, page: Any, viewport: Any) -> None:
    """Every page names its feed in <head>; "Subscribe" opens a page, not XML, that lists them."""
    page.set_viewport_size(viewport)
    for path in ("/", "/events", f"/papers/{NESTPIPE}"):
        page.goto(f"{site.url}{path}")
        feeds = page.locator("head link[rel=alternate][type='application/atom+xml']")
        assert "/feeds/events.atom" in feeds.evaluate_all("ls => ls.map(l => l.href)")[0]
    page.goto(f"{site.url}/")
    page.click("header.site a:has-text('Subscribe')")
    page.wait_for_url("**/subscribe")
    assert page.locator("h1").inner_text() == "Subscribe to the changes"
    assert "feed reader" in page.locator("main").inner_text()
    feeds = page.locator("dl.feeds a.feed").all_inner_texts()
    assert feeds == [f"{site.url}/feeds/events.atom"]
    # An author's feed by name: the form opens it (never a list of every author).
    page.fill("dl.feeds input[name=author]", AUTHOR)
    page.click("dl.feeds button")
    page.wait_for_url("**/feeds/events.atom?author=Zhida+Jiang")
    page.go_back()
    assert fits_the_width(page)
    shot(page, f"subscribe-{_name(viewport)}")


@VIEWPORTS
def test_the_api_docs_render_without_internet(site: Site, page: Any, viewport: Any) -> None:
    """/api/v1/docs shows its operations with every request off loopback aborted."""
    blocked: list[str] = []

    def only_loopback(route: Any) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", only_loopback)
    page.set_viewport_size(viewport)
    page.goto(f"{site.url}/api/v1/docs")
    operations = page.locator(".opblock-summary-path")
    operations.first.wait_for(state="visible", timeout=20_000)
    paths = operations.all_inner_texts()
    assert "/api/v1/papers" in [p.replace("\u200b", "") for p in paths]
    assert len(paths) >= 5
    assert page.locator(".info .title").inner_text().startswith("syncd")
    assert blocked == []
    assert fits_the_width(page)
    shot(page, f"docs-{_name(viewport)}")
