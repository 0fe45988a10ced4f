"""The commands that change the record: ``seed``, ``sync``, ``backfill``, ``run``, ``db``."""

from __future__ import annotations

import argparse
import sys

from syncd.cli.output import EXIT_FAILURE, EXIT_OK, fail
from syncd.cli.progress import BackfillReporter, describe_plan
from syncd.domain.counting import counted
from syncd.domain.identifiers import unknown_id_advice
from syncd.errors import ConfigError, UpstreamError
from syncd.service.app import App
from syncd.service.authors import followed_authors, named_author, reconcile_config
from syncd.service.backfill import plan_backfill, run_backfill
from syncd.service.planning import seed_author
from syncd.service.sync import sync_all
from syncd.storage.migrate import current_revision, head_revision, schema_drift, upgrade

__all__ = ["backfill", "db_check", "db_upgrade", "run", "seed", "sync"]


def seed(args: argparse.Namespace, app: App) -> int:
    for author in app.settings.configured_authors:
        added = seed_author(app.storage, author)
        print(f"{author.name}: {counted(added, 'seed paper')} imported")
    return EXIT_OK


def sync(args: argparse.Namespace, app: App) -> int:
    settings = app.settings
    reconcile_config(app.storage, settings)
    followed = followed_authors(app.storage, settings)
    wanted = named_author(app.storage, args.author)
    authors = [a for a in followed if wanted in (None, a.name)]
    if args.author is None and not authors:
        print(
            "no author is followed yet: add one with `syncd authors add NAME`"
            " or an [[authors]] table",
            file=sys.stderr,
        )
        return EXIT_OK
    if not authors:
        raise ConfigError(f"no followed author named {args.author!r}")
    app.register_endpoints()
    with app.arxiv_client() as client:
        results = sync_all(app.storage, client, authors, settings.sync)
    for result in results:
        if result.ok:
            print(
                f"{result.author}: ok, {counted(len(result.events), 'event')}"
                f" ({counted(result.stats.entries, 'entry', 'entries')},"
                f" {counted(result.stats.requests, 'request')})"
            )
            if result.unknown_id is not None:
                # The author's data, not a failure: synced by name, exit 0, said each time.
                advice = unknown_id_advice(result.unknown_id)
                print(f"{result.author}: warning: {advice}", file=sys.stderr)
        else:
            print(f"{result.author}: FAILED: {result.error}", file=sys.stderr)
    if app.endpoints and not args.no_deliver:
        with app.dispatcher() as dispatcher:
            attempted = dispatcher.drain(settings.delivery.sync_wait)
        pending, dead = app.storage.outbox.counts()
        print(f"webhooks: {counted(attempted, 'attempt')}, {pending} pending, {dead} dead-lettered")
    return EXIT_OK if all(r.ok for r in results) else EXIT_FAILURE


def backfill(args: argparse.Namespace, app: App) -> int:
    author = named_author(app.storage, args.author)
    if author is not None and not app.storage.authors.known(author):
        raise ConfigError(f"no author named {args.author!r}")
    gaps = [g for g in app.storage.versions.gaps(author) if g.missing]
    refusals = app.storage.versions.refusals()
    plan = plan_backfill(gaps, refusals=refusals)
    interval = app.settings.arxiv.request_interval
    # Every version set aside, not only those of the papers in the plan: one refused while
    # linking a paper that is not tracked (a candidate, say) waits as well.
    aside = list(refusals.values())
    if author is not None:
        theirs = {p.arxiv_id for p in app.storage.papers.all(author)}
        aside = [r for r in aside if r.arxiv_id in theirs]
    print(describe_plan(plan, interval, aside, shown=None if args.dry_run else 10))
    if args.dry_run or not plan.gaps:
        return EXIT_OK
    reporter = BackfillReporter(sys.stderr, interval)
    with app.arxiv_client() as client:
        try:
            done = run_backfill(app.storage, client, plan, progress=reporter)
        except UpstreamError as exc:
            reporter.close()
            return fail(EXIT_FAILURE, f"{exc}; what arrived is stored: run it again to resume")
    reporter.close()
    refused = (
        f"; {counted(done.versions_refused, 'version')} refused" if done.versions_refused else ""
    )
    print(
        f"backfilled {counted(done.versions_stored, 'version')}"
        f" of {counted(done.papers_done, 'paper')}"
        f" in {counted(done.requests_done, 'request')}{refused}"
    )
    return EXIT_OK


def run(args: argparse.Namespace, app: App) -> int:
    # The daemon brings the web stack and the scheduler: imported by the one command
    # that serves, so every other command starts without them.
    from syncd.cli.daemon import run_daemon  # noqa: PLC0415

    app.register_endpoints()
    return run_daemon(app)


def db_upgrade(args: argparse.Namespace, app: App) -> int:
    engine = app.storage.engine
    upgrade(engine)  # main() may have done it already; a second run is a no-op
    print(f"database at revision {current_revision(engine)}")
    return EXIT_OK


def db_check(args: argparse.Namespace, app: App) -> int:
    engine = app.storage.engine
    current, head = current_revision(engine), head_revision()
    if current != head:
        return fail(EXIT_FAILURE, f"database at revision {current}, this syncd needs {head}")
    drift = schema_drift(engine)
    if drift:
        return fail(EXIT_FAILURE, f"schema differs from the models: {drift}")
    print(f"database at revision {current}, schema matches")
    return EXIT_OK
