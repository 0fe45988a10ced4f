"""``syncd harvest [--from DATE] [--dry-run]``: one OAI-PMH harvest by hand."""

from __future__ import annotations

import argparse
import sys

from syncd.cli.progress import HarvestReporter
from syncd.errors import UpstreamError
from syncd.service.app import App
from syncd.service.harvest import harvest

__all__ = ["run_harvest"]


def run_harvest(args: argparse.Namespace, app: App) -> int:
    if not args.dry_run:
        app.register_endpoints()
    reporter = HarvestReporter(sys.stderr)
    with app.arxiv_client() as client:
        try:
            result = harvest(
                app.storage,
                client,
                app.settings,
                since=args.since,
                dry_run=args.dry_run,
                on_page=reporter,
            )
        except UpstreamError as exc:
            reporter.close()
            after = (
                "nothing was stored"
                if args.dry_run
                else "the pages applied are stored: run it again to resume"
            )
            print(f"error: {exc}; {after}", file=sys.stderr)
            return 1
    reporter.close()
    if not result.claimed:
        print("another replica is harvesting; nothing done")
        return 0
    since = result.from_date.isoformat() if result.from_date else "the start"
    if args.dry_run:
        print(
            f"dry run from {since}: {result.pages} pages, {result.records} records,"
            f" {result.planned_events} events would be published; nothing stored"
        )
        return 0
    skipped = f", {result.skipped} unreadable and nobody's, skipped" if result.skipped else ""
    print(
        f"harvest from {since}: ok, {len(result.events)} events"
        f" ({result.records} records{skipped}, {result.pages} pages, {result.requests} requests)"
    )
    if app.endpoints:
        print(app.drain())
    return 0
