"""``syncd publications``: look papers up now, and review the links a score left in doubt.

``check`` looks up the papers due (or the ones named, due or not) and
delivers what it announced, as ``syncd sync`` does; a source that failed
makes it exit 1 after the others are written.  ``review`` lists candidate
links (scored from ``review_score`` up to ``accept_score``); ``confirm``
announces one, ``reject`` makes sure it never comes back.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from syncd.cli.output import EXIT_FAILURE, EXIT_OK, print_json, print_table
from syncd.cli.table import Column
from syncd.domain.counting import counted
from syncd.domain.publications import review_json
from syncd.domain.vocabulary import Decision
from syncd.errors import ConfigError
from syncd.service.app import App
from syncd.service.authors import arxiv_ids
from syncd.service.publications import (
    check_publications,
    decide_publication,
    publication_sources,
)

__all__ = ["check", "decide", "review"]


def check(args: argparse.Namespace, app: App) -> int:
    settings = app.settings
    if not settings.publications.enabled:
        raise ConfigError("publications lookups are off: set [publications] enabled = true")
    app.register_endpoints()
    with publication_sources(settings, app.storage) as sources:
        named = arxiv_ids(args.ids) if args.ids else None
        run = check_publications(app.storage, sources, settings, arxiv_ids=named)
    print(
        f"publications: {counted(run.checked, 'paper')} looked up,"
        f" {counted(len(run.events), 'event')}, {run.failed} failed"
    )
    for error in run.errors:
        print(f"FAILED: {error}", file=sys.stderr)
    if app.endpoints and not args.no_deliver:
        print(app.drain())
    return EXIT_OK if run.ok else EXIT_FAILURE


def review(args: argparse.Namespace, app: App) -> int:
    items = app.storage.publications.review()
    if args.json:
        return print_json([review_json(item) for item in items])
    if not items:
        print("no publication links to review")
        return EXIT_OK
    rows = [
        (
            item.arxiv_id or item.paper_key,
            item.link.doi or "-",
            f"{item.link.evidence.score:.2f}",
            item.link.venue or "-",
            item.link.title or "",
        )
        for item in items
    ]
    columns = (
        Column("ARXIV"),
        Column("DOI"),
        Column("SCORE"),
        Column("VENUE", shrink_to=12, drop_rank=1),
        Column("TITLE", shrink_to=10),
    )
    print_table(columns, rows)
    return EXIT_OK


def decide(args: argparse.Namespace, app: App) -> int:
    decision: Decision = args.decision
    app.register_endpoints()
    events = decide_publication(app.storage, args.paper, args.doi, decision, datetime.now(UTC))
    print(f"{args.paper}: {args.doi} {decision}; {counted(len(events), 'event')} published")
    if events and app.endpoints and not args.no_deliver:
        print(app.drain())
    return EXIT_OK
