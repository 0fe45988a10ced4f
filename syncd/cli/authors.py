"""``syncd authors``: follow authors at run time, and review their candidates.

A running ``syncd run`` (every replica, on PostgreSQL) picks the changes up at
its next cycle.  Unknown names and ids, and changes to configured authors,
are usage errors (exit 2) that say why.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from syncd.cli.tables import print_json, print_table
from syncd.config.runtime import runtime_author
from syncd.domain.authors import author_json, describe_reason, status_line
from syncd.domain.vocabulary import Decision
from syncd.errors import NotFoundError
from syncd.service.app import App
from syncd.service.authors import (
    add_authors,
    arxiv_ids,
    import_authors,
    next_sync,
    reconcile_config,
    remove_author,
)
from syncd.storage.authors import Put

__all__ = ["add_authors_parser"]


def add_authors_parser(commands: Any) -> None:
    """The ``authors`` command and its actions, on the CLI's subparsers."""
    authors = commands.add_parser("authors", help="follow authors at run time; review candidates")
    actions = authors.add_subparsers(title="authors commands", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="followed authors: identifiers, counts, status")
    listing.add_argument("--json", action="store_true", help="print one JSON array")
    listing.set_defaults(command=_list)
    add = actions.add_parser("add", help="follow an author (picked up at the next cycle)")
    add.add_argument("name", metavar="NAME")
    add.add_argument("--orcid", help="the author's ORCID iD")
    add.add_argument("--arxiv-author-id", help="the author's arXiv author id (warner_s_1)")
    add.add_argument("--query", help='the arXiv search_query (default: au:"NAME")')
    add.add_argument(
        "--seed", action="append", default=[], type=Path, metavar="FILE", help="a seed file"
    )
    add.set_defaults(command=_add)
    remove = actions.add_parser("remove", help="stop following a run-time author")
    remove.add_argument("name", metavar="NAME")
    remove.set_defaults(command=_remove)
    load = actions.add_parser("import", help="follow the authors of a CSV file, all or none")
    load.add_argument(
        "file", type=Path, metavar="FILE.csv", help="header: name,orcid,arxiv_author_id,query"
    )
    load.set_defaults(command=_import)
    review = actions.add_parser("review", help="an author's candidates and why each is held")
    review.add_argument("name", metavar="NAME")
    review.set_defaults(command=_review)
    for decision, verb, what in (
        (Decision.CONFIRMED, "confirm", "make candidates tracked (publishes paper.added)"),
        (Decision.REJECTED, "reject", "never take these papers as the author's"),
    ):
        action = actions.add_parser(verb, help=what)
        action.add_argument("name", metavar="NAME")
        action.add_argument("ids", nargs="+", metavar="ID", help="arXiv ids of candidates")
        action.set_defaults(command=_decide, decision=decision)


def _list(args: argparse.Namespace, app: App) -> int:
    reconcile_config(app.storage, app.settings)
    summaries = app.storage.authors.summaries()
    moment = datetime.now(UTC)
    nexts = {s.name: next_sync(app.settings.schedule, s, moment) for s in summaries}
    if args.json:
        return print_json([author_json(s, nexts[s.name]) for s in summaries])
    rows = [
        (
            s.name,
            str(s.definition.origin) if s.removed_at is None else "removed",
            s.definition.orcid or "-",
            s.definition.arxiv_author_id or "-",
            str(s.tracked),
            str(s.claimed),
            str(s.candidates),
            status_line(s, nexts[s.name]),
        )
        for s in summaries
    ]
    header = ("NAME", "SOURCE", "ORCID", "ARXIV ID", "TRACKED", "CLAIMED", "CANDIDATES", "STATUS")
    print_table(header, rows)
    return 0


def _add(args: argparse.Namespace, app: App) -> int:
    author = runtime_author(
        args.name,
        orcid=args.orcid,
        arxiv_author_id=args.arxiv_author_id,
        query=args.query,
        seeds=args.seed,
    )
    (done,) = add_authors(app.storage, app.settings, [author])
    later = "" if done == Put.UNCHANGED else "; synced at the next cycle"
    print(f"{author.name}: {done}{later}")
    return 0


def _remove(args: argparse.Namespace, app: App) -> int:
    remove_author(app.storage, app.settings, args.name)
    print(f"{args.name}: no longer followed; its papers, history and events stay")
    return 0


def _import(args: argparse.Namespace, app: App) -> int:
    done = import_authors(app.storage, app.settings, args.file)
    counts = {outcome: done.count(outcome) for outcome in Put}
    print(", ".join(f"{count} {outcome}" for outcome, count in counts.items()))
    return 0


def _review(args: argparse.Namespace, app: App) -> int:
    if not app.storage.authors.summaries(args.name):
        raise NotFoundError(f"no author named {args.name!r}")
    candidates = app.storage.authors.candidates(args.name)
    if not candidates:
        print(f"{args.name}: no candidates to review")
        return 0
    rows = [
        (c.arxiv_id, f"v{c.version or '-'}", describe_reason(c.reason), c.title or "")
        for c in candidates
    ]
    print_table(("ARXIV", "V", "REASON", "TITLE"), rows)
    return 0


def _decide(args: argparse.Namespace, app: App) -> int:
    decision: Decision = args.decision
    events = app.storage.authors.decide(args.name, arxiv_ids(args.ids), decision)
    print(f"{args.name}: {len(args.ids)} {decision}; {len(events)} paper.added published")
    return 0
