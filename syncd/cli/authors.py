"""``syncd authors``: follow authors at run time, and review their candidates.

A running ``syncd run`` (every replica, on PostgreSQL) picks the changes up at
its next cycle.  Unknown names and ids, and changes to configured authors,
are usage errors (exit 2) that say why.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from syncd.cli.output import EXIT_FAILURE, print_json, print_table
from syncd.cli.table import Column
from syncd.config.runtime import runtime_author
from syncd.domain.authors import author_json, describe_reason, status_line
from syncd.domain.counting import counted
from syncd.domain.vocabulary import Decision, Put
from syncd.errors import ConfigError, NotFoundError
from syncd.service.app import App
from syncd.service.authors import (
    add_authors,
    arxiv_ids,
    import_authors,
    next_syncs,
    reconcile_config,
    remove_author,
)

__all__ = ["add", "decide", "import_file", "list_authors", "purge", "remove", "review"]


def list_authors(args: argparse.Namespace, app: App) -> int:
    reconcile_config(app.storage, app.settings)
    summaries = app.storage.authors.summaries()
    nexts = next_syncs(app.storage, app.settings, summaries, datetime.now(UTC))
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
    columns = (
        Column("NAME", shrink_to=12),
        Column("SOURCE", drop_rank=2),
        Column("ORCID", drop_rank=1),
        Column("ARXIV ID", drop_rank=1),
        Column("TRACKED"),
        Column("CLAIMED", drop_rank=3),
        Column("CANDIDATES"),
        Column("STATUS", shrink_to=20),
    )
    print_table(columns, rows)
    return 0


def add(args: argparse.Namespace, app: App) -> int:
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


def remove(args: argparse.Namespace, app: App) -> int:
    name = app.storage.authors.stored_name(args.name)
    remove_author(app.storage, app.settings, name)
    print(f"{name}: no longer followed; its papers, history and events stay")
    return 0


def purge(args: argparse.Namespace, app: App) -> int:
    name = app.storage.authors.stored_name(args.name)
    preview = app.storage.purge_preview(name)
    what = (
        f"{name}: {counted(preview.deleted, 'paper')} only theirs would be deleted with their"
        f" history and events; {counted(preview.kept, 'paper')} other authors hold would stay"
    )
    if not args.yes:
        if not sys.stdin.isatty():
            raise ConfigError(f"{what}; nothing asked on a pipe: confirm with --yes")
        print(what)
        if input(f"Purge {name} for good? [y/N] ").strip().lower() not in ("y", "yes"):
            print("nothing purged")
            return EXIT_FAILURE
    done = app.storage.purge_author(name)
    print(f"{name}: purged; {counted(done.deleted, 'paper')} deleted, {done.kept} kept")
    return 0


def import_file(args: argparse.Namespace, app: App) -> int:
    done = import_authors(app.storage, app.settings, args.file)
    counts = {outcome: done.count(outcome) for outcome in Put}
    print(", ".join(f"{count} {outcome}" for outcome, count in counts.items()))
    return 0


def review(args: argparse.Namespace, app: App) -> int:
    name = app.storage.authors.stored_name(args.name)
    if not app.storage.authors.summaries(name):
        raise NotFoundError(f"no author named {args.name!r}")
    candidates = app.storage.papers.candidates(name)
    if not candidates:
        print(f"{name}: no candidates to review")
        return 0
    rows = [
        (c.arxiv_id, f"v{c.version or '-'}", describe_reason(c.reason), c.title or "")
        for c in candidates
    ]
    columns = (
        Column("ARXIV"),
        Column("V"),
        Column("REASON", shrink_to=20),
        Column("TITLE", shrink_to=10),
    )
    print_table(columns, rows)
    return 0


def decide(args: argparse.Namespace, app: App) -> int:
    decision: Decision = args.decision
    name = app.storage.authors.stored_name(args.name)
    events = app.storage.authors.decide(name, arxiv_ids(args.ids), decision)
    print(f"{name}: {len(args.ids)} {decision}; {len(events)} paper.added published")
    return 0
