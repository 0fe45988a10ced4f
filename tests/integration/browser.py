"""A real browser for the page tests: Debian's Chromium, driven by Playwright.

Playwright's own browser download cannot work here (no internet), so it
drives /usr/bin/chromium.  Without it the tests skip with the reason; under
SYNCD_TEST_REQUIRE_BROWSER=1 (CI) they fail.  Screenshots go to
build/screenshots/ (ignored by git).  The fixtures ``browser`` and ``page``
are registered in tests/integration/conftest.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.conftest import browser_unavailable

CHROMIUM = Path(os.environ.get("SYNCD_TEST_CHROMIUM", "/usr/bin/chromium"))
# Chromium as a test needs it: no sandbox (root in a container), nothing fetched
# from Google's services at start-up, no GPU.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1000, "height": 900}


def launch_browser() -> Iterator[Any]:
    """Debian's Chromium under Playwright, one per module."""
    if not CHROMIUM.exists():
        browser_unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import Error, sync_playwright  # noqa: PLC0415 - only when present

    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=60_000
            )
        except Error as exc:
            browser_unavailable(str(exc).splitlines()[0])
        try:
            yield launched
        finally:
            launched.close()


def open_page(browser: Any) -> Iterator[Any]:
    """A fresh page that fails the test on any script error or dialog."""
    context = browser.new_context(viewport=DESKTOP)
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    opened.on("dialog", lambda dialog: problems.append(f"dialog: {dialog.message}"))
    try:
        yield opened
    finally:
        context.close()
    assert not problems


def shot(page: Any, name: str, *, whole: bool = True) -> Path:
    """Save the whole page (or, ``whole`` false, what the window shows) as
    build/screenshots/<name>.png, to be looked at: a long page's whole is too tall to read."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=whole)
    return path


def fits_the_width(page: Any) -> bool:
    """Nothing sticks out sideways: the page scrolls only down."""
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))
