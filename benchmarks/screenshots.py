"""Screenshots of the index, an author page and a paper page at scale, desktop and phone.

    python -m benchmarks.screenshots                    # 100,000 authors, 1,000,000 papers
    python -m benchmarks.screenshots --authors 10000 --output /tmp/shots

Serves syncd's web app (``benchmarks.scale.servers``) over the database
``benchmarks.scale_data`` builds for the size (SQLite, kept between runs), and
drives Debian's Chromium with Playwright as the browser tests do
(``tests.integration.browser``).  For each page and width it saves what the
window shows first (``<page>-<width>.png``: a whole page of thousands of rows
is too tall to look at) and records, in ``pages.json`` beside them, the time to
load, the HTML's size, the page's height and whether it fits the width.  A page
that does not load within ``--timeout`` seconds is recorded as such.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from benchmarks import common
from benchmarks.scale import servers
from benchmarks.scale_data import Size, World

DEFAULT_OUTPUT = common.ROOT / "build" / "screenshots" / "scale"


def pages(world: World) -> dict[str, str]:
    """The pages to look at: the index, the busiest author's page, one of their papers."""
    key = world.arxiv_id(next(p for p, h in enumerate(world.holders) if 1 in h))
    return {
        "index": "/",
        "author": f"/authors/{quote(world.names[0], safe='')}",
        "paper": f"/papers/{key}",
    }


def take(size: Size, output: Path, timeout: float) -> list[dict[str, Any]]:
    """Every page at both widths into ``output``; what each measured."""
    from playwright.sync_api import Error, sync_playwright  # noqa: PLC0415

    from benchmarks import scale_data  # noqa: PLC0415
    from tests.integration.browser import CHROMIUM, CHROMIUM_ARGS, DESKTOP, PHONE  # noqa: PLC0415

    url = scale_data.sqlite(size)
    world = World(size)
    output.mkdir(parents=True, exist_ok=True)
    shots: list[dict[str, Any]] = []
    with servers(url) as (syncd_url, _bare), sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for width_name, viewport in {"desktop": DESKTOP, "phone": PHONE}.items():
                context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
                page = context.new_page()
                for name, path in pages(world).items():
                    shot: dict[str, Any] = {"page": name, "path": path, "width": width_name}
                    started = time.perf_counter()
                    try:
                        answer = page.goto(f"{syncd_url}{path}", timeout=timeout * 1000)
                    except Error as exc:
                        shot["error"] = str(exc).splitlines()[0]
                        shots.append(shot)
                        continue
                    shot |= {
                        "seconds": round(time.perf_counter() - started, 2),
                        "status": answer.status if answer else None,
                        "html_bytes": len(answer.body()) if answer else None,
                        "height": page.evaluate("document.documentElement.scrollHeight"),
                        "fits_width": page.evaluate(
                            "document.documentElement.scrollWidth <= window.innerWidth"
                        ),
                        "file": f"{name}-{width_name}.png",
                    }
                    page.screenshot(path=str(output / shot["file"]))
                    shots.append(shot)
                context.close()
        finally:
            browser.close()
    (output / "pages.json").write_text(json.dumps(shots, indent=1) + "\n")
    return shots


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.screenshots", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--authors", type=int, default=100_000, help="ten papers each")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per page")
    args = parser.parse_args(argv)
    shots = take(Size(args.authors, args.authors * 10), args.output, args.timeout)
    for shot in shots:
        print(json.dumps(shot))
    print(f"written: {args.output}")
    return 1 if any("error" in shot for shot in shots) else 0


if __name__ == "__main__":
    sys.exit(main())
