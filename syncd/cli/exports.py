"""``syncd export``: papers as BibTeX, CSL-JSON or RIS, on stdout or into a file."""

from __future__ import annotations

import argparse
import sys

from syncd.cli.output import EXIT_FAILURE, EXIT_OK, fail
from syncd.domain.citations import ExportFilter, ExportFormat
from syncd.domain.vocabulary import PaperStatus
from syncd.errors import ConfigError, NotFoundError
from syncd.render.exports import export
from syncd.service.app import App
from syncd.service.authors import named_author

__all__ = ["export_papers"]


def export_papers(args: argparse.Namespace, app: App) -> int:
    statuses = [PaperStatus(status) for status in args.status or ()]
    wanted = ExportFilter.asked(statuses, args.since, args.until, args.published)
    problem = wanted.problem()
    if problem is not None:
        raise ConfigError(problem)
    authors: list[str] | None = None
    if args.author is not None:
        name = named_author(app.storage, args.author) or args.author
        if name not in app.followed_names() and not app.storage.authors.known(name):
            raise NotFoundError(f"no author named {args.author!r} is or was followed")
        authors = [name]
    elif args.group is not None:
        if app.storage.groups.get(args.group) is None:
            raise NotFoundError(f"no group named {args.group!r}")
        authors = sorted(app.storage.groups.members_of([args.group]))
    body = export(app.storage.paper_sets.for_export(authors, wanted), ExportFormat(args.format))
    if args.output is None:
        # Bytes as written: RIS's CRLF and every character unchanged.
        sys.stdout.buffer.write(body.encode())
        return EXIT_OK
    try:
        args.output.write_text(body, encoding="utf-8", newline="")
    except OSError as exc:
        return fail(EXIT_FAILURE, f"cannot write {args.output}: {exc.strerror or exc}")
    return EXIT_OK
