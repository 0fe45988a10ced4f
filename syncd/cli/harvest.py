"""``syncd harvest [--from DATE] [--dry-run]``: one OAI-PMH harvest by hand."""

from __future__ import annotations

import argparse
import sys
from datetime import date
from typing import Any

from syncd.cli.progress import HarvestReporter
from syncd.errors import UpstreamError
from syncd.service.app import App
from syncd.service.harvest import harvest

__all__ = ["add_harvest_parser"]


def add_harvest_parser(commands: Any) -> None:
    """The ``harvest`` command, on the CLI's subcommands."""
    parser = commands.add_parser(
        "harvest", help="run one OAI-PMH harvest of arXiv's changes (resumes one interrupted)"
    )
    parser.add_argument(
        "--from",
        dest="since",
        type=date.fromisoformat,
        metavar="DATE",
        help="harvest from this day (YYYY-MM-DD) instead of the stored one",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="plan every page, store and announce nothing"
    )
    parser.set_defaults(command=_harvest)


def _harvest(args: argparse.Namespace, app: App) -> int:
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
            print(
                f"error: {exc}; the pages applied are stored: run it again to resume",
                file=sys.stderr,
            )
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
    print(
        f"harvest from {since}: ok, {len(result.events)} events"
        f" ({result.records} records, {result.pages} pages, {result.requests} requests)"
    )
    if app.endpoints:
        print(app.drain())
    return 0
