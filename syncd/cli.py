"""The ``syncd`` command line.

Exit codes: 0 ok, 1 runtime failure (arXiv or the database let us down),
2 usage or configuration error (bad flags, config, seed files, a paper or
event id that does not exist).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from syncd import __version__
from syncd.arxiv import ArxivClient
from syncd.config import Settings, load_settings
from syncd.errors import ConfigError, NotFoundError, SeedError, SyncdError
from syncd.logs import configure_logging
from syncd.store import Store
from syncd.sync import seed_author, sync_author
from syncd.views import event_json, paper_json, revision_json

__all__ = ["main"]

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2

Command = Callable[[argparse.Namespace, Settings, Store], int]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``syncd`` command and return its exit code."""
    args = _parser().parse_args(argv)
    try:
        settings = load_settings(args.config)
        configure_logging(settings.log.level, settings.log.format)
        store = Store(settings.database.url)
    except (ConfigError, SeedError) as exc:
        return _fail(EXIT_USAGE, str(exc))
    except SyncdError as exc:
        return _fail(EXIT_FAILURE, str(exc))
    command: Command = args.command
    try:
        return command(args, settings, store)
    except (ConfigError, SeedError, NotFoundError) as exc:
        return _fail(EXIT_USAGE, str(exc))
    except SyncdError as exc:
        return _fail(EXIT_FAILURE, str(exc))
    finally:
        store.close()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="syncd", description="Keep a living, auditable record of an author's arXiv papers."
    )
    parser.add_argument("--version", action="version", version=f"syncd {__version__}")
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="config file (env SYNCD_CONFIG; default config/syncd.toml)",
    )
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")

    seed = commands.add_parser("seed", help="import the seed snapshot (idempotent, no events)")
    seed.set_defaults(command=_seed)

    sync = commands.add_parser("sync", help="seed if needed, run one sync cycle, exit")
    sync.add_argument("--author", help="only this configured author")
    sync.set_defaults(command=_sync)

    papers = commands.add_parser("papers", help="list tracked papers")
    papers.add_argument("--author", help="only this author's papers")
    papers.add_argument("--json", action="store_true", help="print one JSON array")
    papers.set_defaults(command=_papers)

    history = commands.add_parser("history", help="a paper's revisions, oldest first")
    history.add_argument("paper", metavar="PAPER", help="an arXiv id or a seed paper's key")
    history.add_argument("--json", action="store_true", help="print one JSON array")
    history.set_defaults(command=_history)

    events = commands.add_parser("events", help="published change events, oldest first")
    events.add_argument("--since", metavar="ID", help="only events after this event id")
    events.add_argument("--json", action="store_true", help="print one JSON array")
    events.set_defaults(command=_events)
    return parser


def _seed(args: argparse.Namespace, settings: Settings, store: Store) -> int:
    for author in settings.authors:
        added = seed_author(store, author)
        print(f"{author.name}: {added} seed papers imported")
    return EXIT_OK


def _sync(args: argparse.Namespace, settings: Settings, store: Store) -> int:
    authors = [a for a in settings.authors if args.author in (None, a.name)]
    if not authors:
        raise ConfigError(f"no configured author named {args.author!r}")
    failed = 0
    with ArxivClient(settings.arxiv) as client:
        for author in authors:
            seed_author(store, author)
            result = sync_author(store, client, author, settings.sync)
            if result.ok:
                print(
                    f"{author.name}: ok, {len(result.events)} events "
                    f"({result.stats.entries} entries, {result.stats.requests} requests)"
                )
            else:
                failed += 1
                print(f"{author.name}: FAILED: {result.error}", file=sys.stderr)
    return EXIT_FAILURE if failed else EXIT_OK


def _papers(args: argparse.Namespace, settings: Settings, store: Store) -> int:
    papers = store.papers(args.author)
    if args.json:
        return _print_json([paper_json(p) for p in papers])
    rows = [
        (
            p.key[:40],
            p.arxiv_id or "-",
            str(p.record.version or "-"),
            p.status,
            _authors_cell(p.record.authors, p.record.authors_complete),
            (p.record.title or "")[:60],
        )
        for p in papers
    ]
    _print_table(("KEY", "ARXIV", "V", "STATUS", "AUTHORS", "TITLE"), rows)
    return EXIT_OK


def _history(args: argparse.Namespace, settings: Settings, store: Store) -> int:
    paper = store.find_paper(args.paper)
    if paper is None:
        raise NotFoundError(f"no paper with key or arXiv id {args.paper!r}")
    revisions = store.history(paper.id)
    if args.json:
        return _print_json([revision_json(r) for r in revisions])
    print(f"{paper.key}  {paper.arxiv_id or '(unlinked)'}  {paper.status}")
    rows = [
        (
            str(r.seq),
            r.observed_at.strftime("%Y-%m-%d %H:%M:%S"),
            r.source,
            str(r.version or "-"),
            ",".join(r.kinds) or "-",
            (r.record.title or "")[:50],
        )
        for r in revisions
    ]
    _print_table(("SEQ", "OBSERVED (UTC)", "SOURCE", "V", "KINDS", "TITLE"), rows)
    return EXIT_OK


def _events(args: argparse.Namespace, settings: Settings, store: Store) -> int:
    events = store.events(since=args.since)
    if args.json:
        return _print_json([event_json(e) for e in events])
    rows = [
        (
            e.id,
            e.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            e.type,
            e.arxiv_id or e.paper_key,
            ",".join(e.kinds) or "-",
        )
        for e in events
    ]
    _print_table(("ID", "CREATED (UTC)", "TYPE", "PAPER", "KINDS"), rows)
    return EXIT_OK


def _authors_cell(authors: Sequence[str], complete: bool) -> str:
    if not authors:
        return "-"
    shown = ", ".join(authors[:2])
    more = len(authors) > 2 or not complete
    return f"{shown} et al." if more else shown


def _print_json(items: list[dict[str, Any]]) -> int:
    json.dump(items, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return EXIT_OK


def _print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=False)]
    for row in (header, *rows):
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _fail(code: int, message: str) -> int:
    print(f"syncd: error: {message}", file=sys.stderr)
    return code
