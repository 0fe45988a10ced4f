"""The ``syncd`` command line.

Exit codes: 0 ok, 1 runtime failure (arXiv or the database let us down),
2 usage or configuration error (bad flags, config, seed files, a paper or
event id that does not exist), 141 the reader of stdout went away.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import json
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, ParamSpec

from syncd import __version__
from syncd.cli.harvest import add_harvest_parser
from syncd.cli.progress import BackfillReporter, describe_plan
from syncd.config import load_settings
from syncd.delivery.apprise_sender import AppriseSender
from syncd.delivery.messages import sample_body
from syncd.delivery.payload import test_body
from syncd.delivery.routing import Endpoint
from syncd.delivery.sender import WebhookSender
from syncd.domain.model import EndpointSummary
from syncd.domain.record import Record
from syncd.domain.textcontrols import for_terminal, json_for_terminal
from syncd.domain.views import endpoint_json, event_json, field_evolution, paper_json, revision_json
from syncd.domain.vocabulary import RECORD_FIELDS, DeliveryFormat
from syncd.errors import ConfigError, NotFoundError, SeedError, SyncdError, UpstreamError
from syncd.logs import configure_logging
from syncd.render.notification import sample_notification
from syncd.service.app import App
from syncd.service.backfill import plan_backfill, run_backfill
from syncd.service.daemon import run_daemon
from syncd.service.sync import seed_author, sync_all
from syncd.storage.migrate import current_revision, head_revision, schema_drift, upgrade

__all__ = ["configure_gc", "main"]

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
# 128 + SIGPIPE: what a shell reports for `yes | head` or `git log | head`,
# whose writers die of the signal when their reader goes away.  Scripts under
# `set -o pipefail` thus see syncd end as coreutils and git do (0 would claim
# every line was written; 1 would claim a failure).
EXIT_BROKEN_PIPE = 141

# A cycle allocates hundreds of thousands of short-lived objects (records,
# row dicts), almost none in reference cycles.  At CPython's default
# thresholds (700, 10, 10) a busy cycle over 10,000 papers ran the collector
# 490 times, 5 of them over the whole heap, for 15 to 20 % of its time.
# Reference counting frees those objects anyway; cyclic garbage is still
# collected, in larger batches.
GC_THRESHOLDS = (10_000, 10, 10)

Command = Callable[[argparse.Namespace, App], int]

_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"

# Titles in `syncd papers` are cut to this many characters, and further to fit a terminal.
TITLE_CHARS = 60
MIN_TITLE_CHARS = 12


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
    try:
        settings = load_settings(args.config)
        # The daemon logs to stdout like any container service; commands keep
        # stdout for their output.
        stream = sys.stdout if args.command is _run else sys.stderr
        configure_logging(settings.log.level, settings.log.format, stream)
        app = App.open(settings)
    except (ConfigError, SeedError) as exc:
        return _fail(EXIT_USAGE, str(exc))
    except SyncdError as exc:
        return _fail(EXIT_FAILURE, str(exc))
    command: Command = args.command
    try:
        if settings.database.migrate and command is not _db_check:
            upgrade(app.storage.engine)
        return command(args, app)
    except (ConfigError, SeedError, NotFoundError) as exc:
        return _fail(EXIT_USAGE, str(exc))
    except SyncdError as exc:
        return _fail(EXIT_FAILURE, str(exc))
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
    seed.set_defaults(command=_seed)

    sync = commands.add_parser("sync", help="seed if needed, run one sync cycle, exit")
    sync.add_argument("--author", help="only this configured author")
    sync.add_argument(
        "--no-deliver", action="store_true", help="leave webhook deliveries to `syncd run`"
    )
    sync.set_defaults(command=_sync)

    backfill = commands.add_parser(
        "backfill", help="fetch the earlier versions tracked papers' histories lack (resumable)"
    )
    backfill.add_argument("--author", help="only this configured author's papers")
    backfill.add_argument(
        "--dry-run", action="store_true", help="only say how many requests it would make"
    )
    backfill.set_defaults(command=_backfill)

    add_harvest_parser(commands)

    run = commands.add_parser("run", help="the daemon: scheduled cycles, webhooks, HTTP")
    run.set_defaults(command=_run)

    database = commands.add_parser("db", help="the database schema")
    db_commands = database.add_subparsers(title="db commands", required=True, metavar="ACTION")
    db_upgrade = db_commands.add_parser("upgrade", help="migrate the schema to this version")
    db_upgrade.set_defaults(command=_db_upgrade)
    db_check = db_commands.add_parser(
        "check", help="exit 1 unless the schema is at this version and matches the models"
    )
    db_check.set_defaults(command=_db_check)

    hooks = commands.add_parser("webhooks", help="inspect and drive webhook delivery")
    hook_commands = hooks.add_subparsers(title="webhooks commands", required=True, metavar="ACTION")
    hook_list = hook_commands.add_parser("list", help="endpoints and their delivery counts")
    hook_list.add_argument("--json", action="store_true", help="print one JSON array")
    hook_list.set_defaults(command=_webhooks_list)
    hook_test = hook_commands.add_parser("test", help="send a signed webhook.test event")
    hook_test.add_argument("target", metavar="URL|NAME", help="a configured endpoint or a URL")
    hook_test.set_defaults(command=_webhooks_test)
    redeliver = hook_commands.add_parser("redeliver", help="queue deliveries again")
    which = redeliver.add_mutually_exclusive_group(required=True)
    which.add_argument("event_id", nargs="?", metavar="EVENT_ID", help="every delivery of it")
    which.add_argument("--dead", action="store_true", help="every dead-lettered delivery")
    redeliver.set_defaults(command=_webhooks_redeliver)

    papers = commands.add_parser("papers", help="list tracked papers")
    papers.add_argument("--author", help="only this author's papers")
    papers.add_argument("--json", action="store_true", help="print one JSON array")
    papers.set_defaults(command=_papers)

    history = commands.add_parser("history", help="a paper's revisions, in version order")
    history.add_argument("paper", metavar="PAPER", help="an arXiv id or a seed paper's key")
    history.add_argument(
        "--field",
        choices=[f.name for f in RECORD_FIELDS],
        metavar="FIELD",
        help="how one record field evolved: each value and the versions that carried it",
    )
    history.add_argument("--json", action="store_true", help="print one JSON array")
    history.set_defaults(command=_history)

    events = commands.add_parser("events", help="published change events, oldest first")
    events.add_argument("--since", metavar="ID", help="only events after this event id")
    events.add_argument("--json", action="store_true", help="print one JSON array")
    events.set_defaults(command=_events)
    return parser


def _seed(args: argparse.Namespace, app: App) -> int:
    for author in app.settings.authors:
        added = seed_author(app.storage, author)
        print(f"{author.name}: {added} seed papers imported")
    return EXIT_OK


def _sync(args: argparse.Namespace, app: App) -> int:
    settings = app.settings
    authors = [a for a in settings.authors if args.author in (None, a.name)]
    if not authors:
        raise ConfigError(f"no configured author named {args.author!r}")
    app.register_endpoints()
    with app.arxiv_client() as client:
        results = sync_all(app.storage, client, authors, settings.sync)
    for result in results:
        if result.ok:
            print(
                f"{result.author}: ok, {len(result.events)} events "
                f"({result.stats.entries} entries, {result.stats.requests} requests)"
            )
        else:
            print(f"{result.author}: FAILED: {result.error}", file=sys.stderr)
    if app.endpoints and not args.no_deliver:
        print(app.drain())
    return EXIT_OK if all(r.ok for r in results) else EXIT_FAILURE


def _backfill(args: argparse.Namespace, app: App) -> int:
    names = {a.name for a in app.settings.authors}
    if args.author is not None and args.author not in names:
        raise ConfigError(f"no configured author named {args.author!r}")
    gaps = [g for g in app.storage.versions.gaps(args.author) if g.missing]
    plan = plan_backfill(gaps, refusals=app.storage.versions.refusals())
    interval = app.settings.arxiv.request_interval
    print(describe_plan(plan, interval))
    if args.dry_run or not plan.gaps:
        return EXIT_OK
    reporter = BackfillReporter(sys.stderr, interval)
    with app.arxiv_client() as client:
        try:
            done = run_backfill(app.storage, client, plan, progress=reporter)
        except UpstreamError as exc:
            reporter.close()
            return _fail(EXIT_FAILURE, f"{exc}; what arrived is stored: run it again to resume")
    reporter.close()
    refused = f"; {done.versions_refused} versions refused" if done.versions_refused else ""
    print(
        f"backfilled {done.versions_stored} versions of {done.papers_done} papers"
        f" in {done.requests_done} requests{refused}"
    )
    return EXIT_OK


def _run(args: argparse.Namespace, app: App) -> int:
    app.register_endpoints()
    return run_daemon(app)


def _db_upgrade(args: argparse.Namespace, app: App) -> int:
    engine = app.storage.engine
    upgrade(engine)  # main() may have done it already; a second run is a no-op
    print(f"database at revision {current_revision(engine)}")
    return EXIT_OK


def _db_check(args: argparse.Namespace, app: App) -> int:
    engine = app.storage.engine
    current, head = current_revision(engine), head_revision()
    if current != head:
        return _fail(EXIT_FAILURE, f"database at revision {current}, this syncd needs {head}")
    drift = schema_drift(engine)
    if drift:
        return _fail(EXIT_FAILURE, f"schema differs from the models: {drift}")
    print(f"database at revision {current}, schema matches")
    return EXIT_OK


def _webhooks_list(args: argparse.Namespace, app: App) -> int:
    summaries = app.endpoint_summaries()
    if args.json:
        return _print_json([endpoint_json(e, app.endpoint_origin(e.name)) for e in summaries])
    rows = [
        (
            e.name,
            app.endpoint_origin(e.name),
            _endpoint_state(e),
            str(e.pending),
            str(e.delivered),
            str(e.dead),
        )
        for e in summaries
    ]
    _print_table(("NAME", "URL", "STATE", "PENDING", "DELIVERED", "DEAD"), rows)
    return EXIT_OK


def _webhooks_test(args: argparse.Namespace, app: App) -> int:
    endpoint = next(
        (e for e in app.endpoints.values() if args.target in (e.name, e.spec.url)), None
    )
    if endpoint is None:
        raise NotFoundError(f"no configured webhook named or at {args.target!r}")
    format = endpoint.spec.format
    if format == DeliveryFormat.APPRISE:
        return _notify_test(endpoint, app)
    msg_id, body = test_body(datetime.now(UTC))
    if format != DeliveryFormat.STANDARD:
        body = sample_body(format, public_url=app.settings.http.public_url)
    allowed = app.settings.delivery.allow_destinations
    with WebhookSender(timeout=endpoint.timeout, allow_destinations=allowed) as sender:
        result = sender.send(endpoint.spec.url, endpoint.secrets, msg_id, body, format=format)
    if result.outcome == "delivered" and format != DeliveryFormat.STANDARD:
        # A chat service's answer is short ("ok", or nothing): what users check.
        print(f"{endpoint.name}: delivered a sample {format} message (HTTP {result.status})")
        if result.answer:
            print(for_terminal(result.answer))  # a remote's words: no escape acts here
        return EXIT_OK
    if result.outcome == "delivered":
        print(f"{endpoint.name}: delivered {msg_id} (HTTP {result.status})")
        return EXIT_OK
    print(f"{endpoint.name}: {result.outcome}: {result.error or result.status}", file=sys.stderr)
    return EXIT_FAILURE


def _notify_test(endpoint: Endpoint, app: App) -> int:
    """``webhooks test`` for a [[notify]] target: Apprise says sent or not, and no more."""
    notifier = AppriseSender.allowing(app.settings.delivery.allow_destinations)
    msg_id, _ = test_body(datetime.now(UTC))
    title, body = sample_notification(public_url=app.settings.http.public_url)
    result = notifier.send(endpoint.spec.url, endpoint.timeout, msg_id, title, body)
    if result.outcome == "delivered":
        print(f"{endpoint.name}: delivered a sample notification")
        return EXIT_OK
    print(f"{endpoint.name}: {result.outcome}: {result.error}", file=sys.stderr)
    return EXIT_FAILURE


def _webhooks_redeliver(args: argparse.Namespace, app: App) -> int:
    queued = app.storage.outbox.redeliver(args.event_id, dead=args.dead)
    print(f"{queued} deliveries queued")
    return EXIT_OK


def _papers(args: argparse.Namespace, app: App) -> int:
    papers = app.storage.papers.all(args.author)
    if args.json:
        return _print_json([paper_json(p) for p in papers])
    rows = [
        (
            p.key,
            p.arxiv_id or "-",
            str(p.record.version or "-"),
            p.status,
            _authors_cell(p.record.authors, p.record.authors_complete),
            p.record.title or "",
        )
        for p in papers
    ]
    header = ("KEY", "ARXIV", "V", "STATUS", "AUTHORS", "TITLE")
    _print_table(header, _fit_last_column(header, rows, TITLE_CHARS))
    return EXIT_OK


def _history(args: argparse.Namespace, app: App) -> int:
    paper = app.storage.papers.find(args.paper)
    if paper is None:
        raise NotFoundError(f"no paper with key or arXiv id {args.paper!r}")
    revisions = app.storage.papers.history(paper.id)
    if args.field is not None:
        evolution = field_evolution(revisions, args.field)
        if args.json:
            return _print_json([{"value": v, "versions": list(labels)} for v, labels in evolution])
        print(for_terminal(f"{paper.key}  {paper.arxiv_id or '(unlinked)'}  {args.field}"))
        values = [(", ".join(labels), _value_cell(value)) for value, labels in evolution]
        _print_table(("VERSIONS", args.field.upper()), values)
        return EXIT_OK
    if args.json:
        return _print_json([revision_json(r) for r in revisions])
    print(for_terminal(f"{paper.key}  {paper.arxiv_id or '(unlinked)'}  {paper.status}"))
    rows = [
        (
            str(r.seq),
            r.observed_at.strftime(_TIME_FORMAT),
            r.version_date.strftime(_TIME_FORMAT) if r.version_date else "-",
            r.source,
            str(r.version or "-"),
            ",".join(r.kinds) or "-",
            _withdrawn_cell(r.record),
            (r.record.title or "")[:50],
        )
        for r in revisions
    ]
    header = ("SEQ", "OBSERVED (UTC)", "VERSION DATE (UTC)", "SOURCE", "V", "KINDS", "WITHDRAWN")
    _print_table((*header, "TITLE"), rows)
    return EXIT_OK


def _events(args: argparse.Namespace, app: App) -> int:
    events = app.storage.events.since(args.since)
    if args.json:
        return _print_json([event_json(e) for e in events])
    rows = [
        (
            e.id,
            e.created_at.strftime(_TIME_FORMAT),
            e.type,
            e.arxiv_id or e.paper_key,
            ",".join(e.kinds) or "-",
        )
        for e in events
    ]
    _print_table(("ID", "CREATED (UTC)", "TYPE", "PAPER", "KINDS"), rows)
    return EXIT_OK


def _endpoint_state(summary: EndpointSummary) -> str:
    if summary.disabled_at:
        return "disabled"
    return "active" if summary.active else "retired"


def _fit_last_column(
    header: Sequence[str], rows: Sequence[Sequence[str]], limit: int
) -> list[tuple[str, ...]]:
    """``rows`` with the last column (a title) cut to ``limit``, and to the terminal's width.

    Only that column shrinks: the others hold identifiers a user copies.
    """
    width = limit
    if sys.stdout.isatty() and rows:
        others = [max(len(c) for c in col) for col in zip(header, *rows, strict=False)][:-1]
        room = shutil.get_terminal_size().columns - sum(others) - 2 * len(others)
        width = max(MIN_TITLE_CHARS, min(limit, room))
    return [(*row[:-1], _shorten(row[-1], width)) for row in rows]


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


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


def _print_json(items: list[dict[str, Any]]) -> int:
    sys.stdout.write(json_for_terminal(json.dumps(items, ensure_ascii=False, indent=2)))
    sys.stdout.write("\n")
    return EXIT_OK


def _print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """``rows`` under ``header`` in aligned columns; a control in a cell shows as U+FFFD."""
    cells = [[for_terminal(str(c)) for c in row] for row in (header, *rows)]
    widths = [max(len(c) for c in col) for col in zip(*cells, strict=True)]
    for row in cells:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _fail(code: int, message: str) -> int:
    print(f"syncd: error: {message}", file=sys.stderr)
    return code
