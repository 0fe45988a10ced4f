"""The ``syncd`` command line.

Exit codes: 0 ok, 1 runtime failure (arXiv or the database let us down),
2 usage or configuration error (bad flags, config, seed files, a paper or
event id that does not exist), 141 the reader of stdout went away.

Every command starts a fresh interpreter, so this module imports only what
parsing the command line needs: the configuration, the store and each
command's module (``records``, ``operations``, ``hooks``) are imported once
the command is known, and the web stack and the scheduler only by ``run``.
``syncd --help`` and ``syncd papers`` thus never load FastAPI, uvicorn or
APScheduler (``tests/unit/test_structure.py`` pins it).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, cast

from syncd import __version__
from syncd.cli.output import EXIT_BROKEN_PIPE, EXIT_FAILURE, EXIT_USAGE, fail
from syncd.domain.citations import ExportFormat
from syncd.domain.vocabulary import RECORD_FIELDS, Decision, PaperStatus
from syncd.errors import ConfigError, ConflictError, NotFoundError, SeedError, SyncdError

if TYPE_CHECKING:
    from syncd.service.app import App

__all__ = ["GC_THRESHOLDS", "configure_gc", "main"]

# A cycle allocates hundreds of thousands of short-lived objects (records,
# row dicts), almost none in reference cycles.  At CPython's default
# thresholds (700, 10, 10) a busy cycle over 10,000 papers ran the collector
# 490 times, 5 of them over the whole heap, for 15 to 20 % of its time.
# Reference counting frees those objects anyway; cyclic garbage is still
# collected, in larger batches.
GC_THRESHOLDS = (10_000, 10, 10)

Command = Callable[[argparse.Namespace, "App"], int]


@dataclass(frozen=True)
class CommandRef:
    """A command's function, named by its module in ``syncd.cli`` and imported when run."""

    module: str
    function: str

    def load(self) -> Command:
        module = importlib.import_module(f"syncd.cli.{self.module}")
        return cast(Command, getattr(module, self.function))


RUN = CommandRef("operations", "run")
DB_CHECK = CommandRef("operations", "db_check")


def configure_gc() -> None:
    """Set the collector's thresholds for a process that runs cycles (``GC_THRESHOLDS``)."""
    gc.set_threshold(*GC_THRESHOLDS)


_P = ParamSpec("_P")


def _quiet_on_broken_pipe(run: Callable[_P, int]) -> Callable[_P, int]:
    """``run``, ending with ``EXIT_BROKEN_PIPE`` and no traceback when stdout's reader leaves.

    ``syncd papers --json | head`` closes the pipe after a few lines.  Python
    ignores SIGPIPE (its sockets need it ignored, so restoring the default
    would let a webhook receiver kill the daemon), and the next write raises
    BrokenPipeError instead: caught here, as the Python docs' recipe does.
    """

    @functools.wraps(run)
    def quiet(*args: _P.args, **kwargs: _P.kwargs) -> int:
        try:
            try:
                return run(*args, **kwargs)
            finally:
                # Flushed here, where a closed pipe can still be caught: at the
                # interpreter's exit it would print "Exception ignored ...".
                sys.stdout.flush()
        except BrokenPipeError:
            # What is still buffered goes nowhere at exit rather than failing again.
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_BROKEN_PIPE

    return quiet


@_quiet_on_broken_pipe
def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``syncd`` command and return its exit code."""
    args = _parser().parse_args(argv)
    configure_gc()
    # Imported once a command is to run: `--help` and usage errors need none of it.
    from syncd.config import load_settings  # noqa: PLC0415
    from syncd.logs import configure_logging  # noqa: PLC0415
    from syncd.service.app import App  # noqa: PLC0415
    from syncd.storage.schema_state import at_head  # noqa: PLC0415

    ref: CommandRef = args.command
    try:
        settings = load_settings(args.config)
        # The daemon logs to stdout like any container service; commands keep
        # stdout for their output.
        stream = sys.stdout if ref == RUN else sys.stderr
        configure_logging(settings.log.level, settings.log.format, stream)
        app = App.open(settings)
    except (ConfigError, SeedError) as exc:
        return fail(EXIT_USAGE, str(exc))
    except SyncdError as exc:
        return fail(EXIT_FAILURE, str(exc))
    try:
        command = ref.load()
        if settings.database.migrate and ref != DB_CHECK and not at_head(app.storage.engine):
            # Alembic, imported only when there is work: loading it and its scripts
            # was a tenth of a `syncd papers` that had nothing to migrate.
            from syncd.storage.migrate import upgrade  # noqa: PLC0415

            upgrade(app.storage.engine)
        return command(args, app)
    except (ConfigError, SeedError, NotFoundError, ConflictError) as exc:
        return fail(EXIT_USAGE, str(exc))
    except SyncdError as exc:
        return fail(EXIT_FAILURE, str(exc))
    finally:
        app.close()


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
    seed.set_defaults(command=CommandRef("operations", "seed"))

    sync = commands.add_parser("sync", help="seed if needed, run one sync cycle, exit")
    sync.add_argument("--author", help="only this configured author")
    sync.add_argument(
        "--no-deliver", action="store_true", help="leave webhook deliveries to `syncd run`"
    )
    sync.set_defaults(command=CommandRef("operations", "sync"))

    backfill = commands.add_parser(
        "backfill", help="fetch the earlier versions tracked papers' histories lack (resumable)"
    )
    backfill.add_argument("--author", help="only this configured author's papers")
    backfill.add_argument(
        "--dry-run", action="store_true", help="only say how many requests it would make"
    )
    backfill.set_defaults(command=CommandRef("operations", "backfill"))

    run = commands.add_parser("run", help="the daemon: scheduled cycles, webhooks, HTTP")
    run.set_defaults(command=RUN)

    database = commands.add_parser("db", help="the database schema")
    db_commands = database.add_subparsers(title="db commands", required=True, metavar="ACTION")
    db_upgrade = db_commands.add_parser("upgrade", help="migrate the schema to this version")
    db_upgrade.set_defaults(command=CommandRef("operations", "db_upgrade"))
    db_check = db_commands.add_parser(
        "check", help="exit 1 unless the schema is at this version and matches the models"
    )
    db_check.set_defaults(command=DB_CHECK)

    _webhooks_parser(commands)

    _records_parser(commands)
    _authors_parser(commands)
    _groups_parser(commands)
    _harvest_parser(commands)
    _export_parser(commands)
    _publications_parser(commands)
    return parser


def _records_parser(commands: Any) -> None:
    """The reading commands (``papers``, ``history``, ``events``, ``report``), on the CLI's
    subcommands."""
    papers = commands.add_parser("papers", help="list tracked papers")
    papers.add_argument("--author", help="only this author's papers")
    papers.add_argument("--group", help="only the papers of this group's members, each once")
    papers.add_argument("--json", action="store_true", help="print one JSON array")
    papers.set_defaults(command=CommandRef("records", "papers"))

    history = commands.add_parser("history", help="a paper's revisions, in version order")
    history.add_argument("paper", metavar="PAPER", help="an arXiv id or a seed paper's key")
    history.add_argument(
        "--field",
        choices=[f.name for f in RECORD_FIELDS],
        metavar="FIELD",
        help="how one record field evolved: each value and the versions that carried it",
    )
    history.add_argument("--json", action="store_true", help="print one JSON array")
    history.set_defaults(command=CommandRef("records", "history"))

    events = commands.add_parser("events", help="published change events, oldest first")
    events.add_argument(
        "--since", metavar="ID|SEQ", help="only events after this event (its id or seq)"
    )
    events.add_argument("--group", help="only the events of this group's members")
    events.add_argument("--json", action="store_true", help="print one JSON array")
    events.set_defaults(command=CommandRef("records", "events"))

    _report_parser(commands)


def _report_parser(commands: Any) -> None:
    """The ``report`` command, on the CLI's subcommands."""
    report = commands.add_parser(
        "report", help="a group's new papers, new versions and withdrawals per person"
    )
    report.add_argument("--group", required=True, help="the group to report on")
    report.add_argument(
        "--since", metavar="DATE", help="from this day (YYYY-MM-DD; default: 30 days to --until)"
    )
    report.add_argument("--until", metavar="DATE", help="to this day, included (default: today)")
    output = report.add_mutually_exclusive_group()
    output.add_argument("--csv", action="store_true", help="print CSV (a header, then rows)")
    output.add_argument("--json", action="store_true", help="print one JSON object")
    report.set_defaults(command=CommandRef("reports", "report"))


def _authors_parser(commands: Any) -> None:
    """The ``authors`` command and its actions, on the CLI's subparsers."""
    authors = commands.add_parser("authors", help="follow authors at run time; review candidates")
    actions = authors.add_subparsers(title="authors commands", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="followed authors: identifiers, counts, status")
    listing.add_argument("--json", action="store_true", help="print one JSON array")
    listing.set_defaults(command=CommandRef("authors", "list_authors"))
    add = actions.add_parser("add", help="follow an author (picked up at the next cycle)")
    add.add_argument("name", metavar="NAME")
    add.add_argument("--orcid", help="the author's ORCID iD, bare or as https://orcid.org/<iD>")
    add.add_argument("--arxiv-author-id", help="the author's arXiv author id (warner_s_1)")
    add.add_argument("--query", help='the arXiv search_query (default: au:"NAME")')
    add.add_argument(
        "--seed", action="append", default=[], type=Path, metavar="FILE", help="a seed file"
    )
    add.set_defaults(command=CommandRef("authors", "add"))
    remove = actions.add_parser("remove", help="stop following a run-time author")
    remove.add_argument("name", metavar="NAME")
    remove.set_defaults(command=CommandRef("authors", "remove"))
    purge = actions.add_parser(
        "purge", help="delete an author no longer followed; papers others hold stay"
    )
    purge.add_argument("name", metavar="NAME")
    purge.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    purge.set_defaults(command=CommandRef("authors", "purge"))
    load = actions.add_parser("import", help="follow the authors of a CSV file, all or none")
    load.add_argument(
        "file", type=Path, metavar="FILE.csv", help="header: name,orcid,arxiv_author_id,query"
    )
    load.set_defaults(command=CommandRef("authors", "import_file"))
    review = actions.add_parser("review", help="an author's candidates and why each is held")
    review.add_argument("name", metavar="NAME")
    review.set_defaults(command=CommandRef("authors", "review"))
    for decision, verb, what in (
        (Decision.CONFIRMED, "confirm", "make candidates tracked (publishes paper.added)"),
        (Decision.REJECTED, "reject", "never take these papers as the author's"),
    ):
        action = actions.add_parser(verb, help=what)
        action.add_argument("name", metavar="NAME")
        action.add_argument("ids", nargs="+", metavar="ID", help="arXiv ids of candidates")
        action.set_defaults(command=CommandRef("authors", "decide"), decision=decision)


def _publications_parser(commands: Any) -> None:
    """The ``publications`` command and its actions, on the CLI's subparsers."""
    publications = commands.add_parser(
        "publications", help="where papers were published: look up now, review doubtful links"
    )
    actions = publications.add_subparsers(
        title="publications commands", required=True, metavar="ACTION"
    )
    check = actions.add_parser("check", help="look papers up now: the due ones, or these")
    check.add_argument("ids", nargs="*", metavar="ID", help="arXiv ids (default: those due)")
    check.add_argument(
        "--no-deliver", action="store_true", help="leave webhook deliveries to `syncd run`"
    )
    check.set_defaults(command=CommandRef("publications", "check"))
    review = actions.add_parser("review", help="links scored too low to announce, to decide")
    review.add_argument("--json", action="store_true", help="print one JSON array")
    review.set_defaults(command=CommandRef("publications", "review"))
    for decision, verb, what in (
        (Decision.CONFIRMED, "confirm", "announce a candidate link (paper.published)"),
        (Decision.REJECTED, "reject", "never take this publication as the paper's"),
    ):
        action = actions.add_parser(verb, help=what)
        action.add_argument("paper", metavar="ID", help="the paper's arXiv id")
        action.add_argument("doi", metavar="DOI", help="the publication's DOI (or journal-ref)")
        action.add_argument(
            "--no-deliver", action="store_true", help="leave webhook deliveries to `syncd run`"
        )
        action.set_defaults(command=CommandRef("publications", "decide"), decision=decision)


def _groups_parser(commands: Any) -> None:
    """The ``groups`` command and its actions, on the CLI's subparsers."""
    groups = commands.add_parser("groups", help="groups of followed authors, to route by")
    actions = groups.add_subparsers(title="groups commands", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="every group, its source and members")
    listing.add_argument("--json", action="store_true", help="print one JSON array")
    listing.set_defaults(command=CommandRef("groups", "list_groups"))
    add = actions.add_parser("add", help="make a group (or describe it again), with members")
    add.add_argument("name", metavar="NAME")
    add.add_argument("members", nargs="*", metavar="MEMBER", help="followed authors' names")
    add.add_argument("--description", default="", help="what the group is")
    add.set_defaults(command=CommandRef("groups", "add"))
    remove = actions.add_parser("remove", help="remove a run-time group; its authors stay")
    remove.add_argument("name", metavar="NAME")
    remove.set_defaults(command=CommandRef("groups", "remove"))
    members = actions.add_parser("members", help="list a group's members, or change them")
    members.add_argument("name", metavar="NAME")
    for flag, what in (("--add", "put these authors in"), ("--remove", "take these out")):
        members.add_argument(flag, nargs="+", default=[], metavar="AUTHOR", help=what)
    members.set_defaults(command=CommandRef("groups", "members"))


def _day(text: str) -> date:
    """A day, ``YYYY-MM-DD`` only: OAI-PMH harvests by day, never from a time."""
    try:
        return date.fromisoformat(text) if len(text) == len("2026-07-01") else _no_day(text)
    except ValueError:
        return _no_day(text)


def _no_day(text: str) -> date:
    raise argparse.ArgumentTypeError(f"not a day (YYYY-MM-DD): {text[:40]!r}")


def _harvest_parser(commands: Any) -> None:
    """The ``harvest`` command, on the CLI's subcommands."""
    parser = commands.add_parser(
        "harvest", help="run one OAI-PMH harvest of arXiv's changes (resumes one interrupted)"
    )
    parser.add_argument(
        "--from",
        dest="since",
        type=_day,
        metavar="DATE",
        help="harvest from this day (YYYY-MM-DD) instead of the stored one",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="plan every page, store and announce nothing"
    )
    parser.set_defaults(command=CommandRef("harvest", "run_harvest"))


def _export_parser(commands: Any) -> None:
    """The ``export`` command, on the CLI's subcommands."""
    parser = commands.add_parser(
        "export", help="papers as BibTeX, CSL-JSON or RIS, read from the record now"
    )
    parser.add_argument("--format", required=True, choices=[f.value for f in ExportFormat])
    whose = parser.add_mutually_exclusive_group()
    whose.add_argument("--author", help="only this author's papers (default: everyone's)")
    whose.add_argument("--group", help="only the papers of this group's members")
    parser.add_argument(
        "--since", type=_day, metavar="DATE", help="first version on or after this day"
    )
    parser.add_argument(
        "--until", type=_day, metavar="DATE", help="first version on or before this day"
    )
    parser.add_argument(
        "--status",
        action="append",
        choices=[s.value for s in PaperStatus],
        help="papers of this status (repeatable; default: tracked)",
    )
    published = parser.add_mutually_exclusive_group()
    published.add_argument(
        "--published",
        action="store_const",
        const=True,
        help="only papers with a DOI or a journal reference",
    )
    published.add_argument(
        "--unpublished", dest="published", action="store_const", const=False, help="only others"
    )
    parser.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="write here instead of stdout"
    )
    parser.set_defaults(command=CommandRef("exports", "export_papers"))


def _webhooks_parser(commands: Any) -> None:
    """The ``webhooks`` command and its actions, on the CLI's subparsers."""
    hooks = commands.add_parser("webhooks", help="inspect and drive webhook delivery")
    hook_commands = hooks.add_subparsers(title="webhooks commands", required=True, metavar="ACTION")
    hook_list = hook_commands.add_parser("list", help="endpoints and their delivery counts")
    hook_list.add_argument("--json", action="store_true", help="print one JSON array")
    hook_list.set_defaults(command=CommandRef("hooks", "webhooks_list"))
    hook_test = hook_commands.add_parser("test", help="send a signed webhook.test event")
    hook_test.add_argument("target", metavar="URL|NAME", help="a configured endpoint or a URL")
    hook_test.set_defaults(command=CommandRef("hooks", "webhooks_test"))
    redeliver = hook_commands.add_parser("redeliver", help="queue deliveries again")
    which = redeliver.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "event_id", nargs="?", metavar="EVENT_ID|SEQ", help="every delivery of this event"
    )
    which.add_argument("--dead", action="store_true", help="every dead-lettered delivery")
    redeliver.set_defaults(command=CommandRef("hooks", "webhooks_redeliver"))
