"""The authors' pages in a real browser: they fit a phone, run nothing, and read well.

Screenshots land in build/screenshots/authors-*.png and author-*.png.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakearxiv import FakeArxiv
from tests.integration.ada import ADA, ADA_PAPERS, HOSTILE_NAME, follow_ada, page_of
from tests.integration.browser import DESKTOP, PHONE, fits_the_width, shot
from tests.integration.conftest import Syncd, serving


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_authors_pages(syncd: Syncd, arxiv: FakeArxiv, page: Any, viewport: Any) -> None:
    """/authors and an author's page: every author linked, identifiers, candidates and reasons."""
    follow_ada(syncd, arxiv)
    name = "phone" if viewport == PHONE else "desktop"
    with serving(syncd) as site:
        page.set_viewport_size(viewport)
        page.goto(f"{site.url}/authors")
        assert page.locator("ul.authors > li").count() == 3
        assert HOSTILE_NAME in page.locator("ul.authors").inner_text()
        assert fits_the_width(page)
        shot(page, f"authors-{name}")
        page.click(f"ul.authors >> text={ADA}")
        page.wait_for_url(f"**{page_of(ADA)}")
        assert page.locator("h1").inner_text() == ADA
        assert page.locator("a[href^='https://orcid.org/']").count() == 1
        assert page.locator("a[href^='https://arxiv.org/a/']").count() == 1
        assert page.locator("text=candidate").count() >= len(ADA_PAPERS)
        assert "last success" in page.locator("p.status-line").inner_text()
        assert fits_the_width(page)
        shot(page, f"author-{name}")
        assert page.evaluate("window.pwned === undefined")
