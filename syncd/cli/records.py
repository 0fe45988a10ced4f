"""The reading commands: ``papers``, ``history`` and ``events``, as tables or JSON."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from syncd.cli.output import EXIT_OK, TIME_FORMAT, print_json, print_table
from syncd.cli.table import Column
from syncd.domain.history import history_steps
from syncd.domain.model import Event
from syncd.domain.record import Record
from syncd.domain.textcontrols import for_terminal
from syncd.domain.views import event_json, field_evolution, paper_json, revision_json
from syncd.domain.vocabulary import AUTHOR_EVENTS, PUBLICATION_EVENTS
from syncd.errors import NotFoundError
from syncd.render.describe import event_headline
from syncd.render.publications import publication_headline
from syncd.service.app import App
from syncd.service.authors import named_author
from syncd.service.groups import named_group

__all__ = ["events", "history", "papers"]

# A title is cut down to 10 cells, "…" included, at the narrowest; secondary
# columns go before it is cut below 20.
_TITLE = Column("TITLE", shrink_to=10, wants=20)


def papers(args: argparse.Namespace, app: App) -> int:
    author = named_author(app.storage, args.author)
    if args.group is not None:
        members = named_group(app.storage, args.group).members
        found = app.storage.paper_sets.of_authors([m for m in members if author in (None, m)])
    else:
        found = app.storage.papers.all(author)
    if args.json:
        details = app.storage.paper_sets.details(found)
        return print_json([paper_json(p, details[p.id]) for p in found])
    # Whose paper it is only says something when more than one author is followed (in the
    # file or at run time), or was: a removed author's papers stay.
    by_author = len({*app.followed_names(), *(p.author for p in found)}) > 1
    columns = [
        Column("KEY", drop_rank=2),
        Column("ARXIV"),
        Column("V"),
        Column("STATUS"),
        *([Column("AUTHOR")] if by_author else []),
        Column("AUTHORS", shrink_to=12, drop_rank=1),
        _TITLE,
    ]
    rows = [
        (
            p.key,
            p.arxiv_id or "-",
            str(p.record.version or "-"),
            p.status,
            *([", ".join(p.authors) or p.author] if by_author else []),
            _authors_cell(p.record.authors, p.record.authors_complete),
            p.record.title or "",
        )
        for p in found
    ]
    print_table(columns, rows)
    return EXIT_OK


def history(args: argparse.Namespace, app: App) -> int:
    paper = app.storage.papers.find(args.paper)
    if paper is None:
        raise NotFoundError(f"no paper with key or arXiv id {args.paper!r}")
    revisions = app.storage.papers.history(paper.id)
    if args.field is not None:
        evolution = field_evolution(revisions, args.field)
        if args.json:
            return print_json([{"value": v, "versions": list(labels)} for v, labels in evolution])
        print(for_terminal(f"{paper.key}  {paper.arxiv_id or '(unlinked)'}  {args.field}"))
        values = [(", ".join(labels), _value_cell(value)) for value, labels in evolution]
        print_table((Column("VERSIONS"), Column(args.field.upper(), shrink_to=10)), values)
        return EXIT_OK
    # Each revision's kinds against the one before it in version order.
    revisions = [step.revision for step in history_steps(revisions)]
    if args.json:
        return print_json([revision_json(r) for r in revisions])
    print(for_terminal(f"{paper.key}  {paper.arxiv_id or '(unlinked)'}  {paper.status}"))
    columns = (
        Column("SEQ"),
        Column("OBSERVED (UTC)", drop_rank=1),
        Column("VERSION DATE (UTC)", drop_rank=2),
        Column("SOURCE", shrink_to=10),  # a seed's file name is long, and no id
        Column("V"),
        Column("KINDS", shrink_to=6, drop_rank=4),
        Column("WITHDRAWN", drop_rank=3),
        _TITLE,
    )
    rows = [
        (
            str(r.seq),
            r.observed_at.strftime(TIME_FORMAT),
            r.version_date.strftime(TIME_FORMAT) if r.version_date else "-",
            r.source,
            str(r.version or "-"),
            ",".join(r.kinds) or "-",
            _withdrawn_cell(r.record),
            r.record.title or "",
        )
        for r in revisions
    ]
    print_table(columns, rows)
    return EXIT_OK


def events(args: argparse.Namespace, app: App) -> int:
    members = named_group(app.storage, args.group).members if args.group is not None else None
    found = app.storage.events.since(args.since, members)
    if args.json:
        return print_json([event_json(e) for e in found])
    # SEQ names an event as well as its 36-character ID does (--since and redeliver take
    # either), so at 80 columns the ID goes and what happened stays.
    columns = (
        Column("SEQ"),
        Column("ID", drop_rank=2),
        Column("CREATED (UTC)", drop_rank=1),
        Column("TYPE", drop_rank=4),
        Column("PAPER"),
        Column("KINDS", shrink_to=14, drop_rank=3),
        _TITLE,
    )
    rows = [
        (
            str(e.seq),
            e.id,
            e.created_at.strftime(TIME_FORMAT),
            e.type,
            *_event_subject(e),
        )
        for e in found
    ]
    print_table(columns, rows)
    return EXIT_OK


def _event_subject(event: Event) -> tuple[str, str, str]:
    """What an event is about, as its PAPER, KINDS and TITLE cells: an author's event is
    about no paper (it is filed under one) and reads as its line; a publication event
    says where first (``published in Nature Machine Intelligence: <title>``), as a
    narrow terminal cuts the end."""
    if event.type in AUTHOR_EVENTS:
        headline = event_headline(event.type, None, None, None, (), changes=event.changes)
        return "-", "-", headline
    title = (event.record.title or "") if event.record is not None else "-"
    if event.type in PUBLICATION_EVENTS:
        title = f"{publication_headline(event.type, event.changes)}: {title}"
    return event.arxiv_id or event.paper_key, ",".join(event.kinds) or "-", title


def _value_cell(value: Any) -> str:
    """A record field's value in a table: lists joined, flags as yes/no, nothing as "-"."""
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "-" if value is None else str(value)


def _withdrawn_cell(record: Record) -> str:
    """Who withdrew the version ("author", "admin"), "yes" when unknown, "-" when not withdrawn."""
    if not record.withdrawn:
        return "-"
    return record.withdrawn_by or "yes"


def _authors_cell(authors: Sequence[str], complete: bool) -> str:
    if not authors:
        return "-"
    shown = ", ".join(authors[:2])
    more = len(authors) > 2 or not complete
    return f"{shown} et al." if more else shown
