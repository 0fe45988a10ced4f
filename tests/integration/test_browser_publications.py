"""Where papers were published, in a real browser: the published version, a retraction,
a candidate, and an author's list, on a desktop and a phone.

Screenshots land in build/screenshots/publication-*.png, to be looked at.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakearxiv import FakeArxiv
from tests.integration.browser import DESKTOP, PHONE, fits_the_width, shot
from tests.integration.conftest import Site, Syncd, revise_nestpipe, serving, sync_ok
from tests.publications import FEDCG_RETRACTION, NESTPIPE_LINK, record_publications
from tests.scenario import AUTHOR, FEDCG, FLOWTRAIN, NESTPIPE

VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])


@pytest.fixture
def site(syncd: Syncd, arxiv: FakeArxiv) -> Iterator[Site]:
    """NestPipe at v2, published and corrected; the federated learning paper retracted;
    FlowTrain a candidate."""
    sync_ok(syncd)
    revise_nestpipe(arxiv)
    sync_ok(syncd)
    record_publications(syncd.database_url, NESTPIPE, FEDCG, FLOWTRAIN)
    with serving(syncd) as running:
        yield running


def _name(viewport: Any) -> str:
    return "phone" if viewport == PHONE else "desktop"


@VIEWPORTS
def test_a_published_and_corrected_paper(site: Site, page: Any, viewport: Any) -> None:
    page.set_viewport_size(viewport)
    page.goto(f"{site.url}/papers/{NESTPIPE}")
    section = page.locator("section.published-version")
    assert section.locator("dd.venue").inner_text() == "Nature Machine Intelligence"
    doi = section.locator("dd.doi a")
    assert doi.get_attribute("href") == f"https://doi.org/{NESTPIPE_LINK.doi}"
    assert "Correction of 2026-11-02" in section.locator("ul.notices").inner_text()
    assert page.locator(".banner.retracted").count() == 0
    assert fits_the_width(page)
    section.scroll_into_view_if_needed()
    shot(page, f"publication-published-{_name(viewport)}", whole=viewport == DESKTOP)


@VIEWPORTS
def test_a_retracted_paper_says_so_first(site: Site, page: Any, viewport: Any) -> None:
    page.set_viewport_size(viewport)
    page.goto(f"{site.url}/papers/{FEDCG}")
    banner = page.locator(".banner.retracted")
    assert banner.is_visible()
    box = banner.bounding_box()
    heading = page.locator("h1").bounding_box()
    assert box is not None and heading is not None and box["y"] < heading["y"]
    assert box["y"] < viewport["height"] / 2  # seen without scrolling
    assert FEDCG_RETRACTION.doi in banner.inner_text()
    assert fits_the_width(page)
    shot(page, f"publication-retracted-{_name(viewport)}", whole=False)


def test_a_candidate_awaits_review(site: Site, page: Any) -> None:
    page.goto(f"{site.url}/papers/{FLOWTRAIN}")
    section = page.locator("section.published-version")
    assert "not confirmed" in section.locator("ul.candidates").inner_text()
    assert section.locator("dl").count() == 0
    section.scroll_into_view_if_needed()
    shot(page, "publication-candidate-desktop", whole=False)


@VIEWPORTS
def test_the_author_page_lists_where_each_was_published(
    site: Site, page: Any, viewport: Any
) -> None:
    page.set_viewport_size(viewport)
    page.goto(f"{site.url}/authors/{AUTHOR}")
    published = page.locator("ul.papers .meta.published")
    assert published.count() == 2
    assert any("Nature Machine Intelligence" in text for text in published.all_inner_texts())
    links = page.locator("ul.papers .meta.published a")
    assert {links.nth(i).get_attribute("href") for i in range(links.count())} >= {
        f"https://doi.org/{NESTPIPE_LINK.doi}"
    }
    assert fits_the_width(page)
    shot(page, f"publication-author-{_name(viewport)}")
    page.goto(f"{site.url}/")
    assert page.locator("ul.papers .meta.published").count() == 2
    shot(page, f"publication-index-{_name(viewport)}", whole=False)


def test_the_events_page_tells_them(site: Site, page: Any) -> None:
    page.goto(f"{site.url}/events")
    events = page.locator("ol.events > li")
    assert "published version retracted" in events.nth(0).inner_text()
    assert events.nth(0).locator("a[href^='https://doi.org/']").count() == 2
    assert fits_the_width(page)
    shot(page, "publication-events-desktop", whole=False)
