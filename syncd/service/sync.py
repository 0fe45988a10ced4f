"""Sync cycles: fetch → load → link → plan → apply, for every author; then backfill.

Pages are streamed: each page's content hashes are compared with the stored
ones in one query, and only entries that changed or are new are kept until
the end of the cycle (``planner.Observed``).  Then the cycle loads what its
decisions need (``planner.Snapshot``), links seed papers, lets the pure
planner decide the writes, and applies them in one transaction per author.
Any upstream answer that cannot be trusted fails the cycle before anything
is written.  Authors without a custom query share batched OR queries.

While harvesting, an author's cycle is its periodic full sweep, once per
slot of ``[harvest] sweep_interval`` (``syncd.domain.cadence``); between
sweeps, an author whose own feed is due has it read alone, in a feed-only
cycle that counts no absence.

Once the cycles are stored, the earlier versions of papers they flagged
(linked or added at vN > 1, or seen jumping versions) are backfilled for
every author at once (``syncd.service.backfill``); that can fail without touching
what the cycles stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import structlog

from syncd import metrics
from syncd.config import AuthorSettings, SyncSettings
from syncd.domain.attribution import NameIndex, split_batch
from syncd.domain.cadence import feed_due, sweep_due, sweep_slot
from syncd.domain.linking import earlier_version_ids, link_seeds_to_arxiv
from syncd.domain.model import Event, Paper, SyncStats
from syncd.domain.planner import (
    Observed,
    Plan,
    Snapshot,
    check_trust,
    needs_identity_basis,
    plan_cycle,
    seed_writes,
)
from syncd.domain.record import Record, split_arxiv_id, versioned_id
from syncd.domain.vocabulary import PaperStatus, RunStatus
from syncd.errors import FeedError, Interrupted, StoreError, UpstreamError
from syncd.faults import fault_point
from syncd.service.backfill import backfill_flagged
from syncd.service.claims import FeedReading, read_feed
from syncd.service.refusals import fetch_earlier
from syncd.sources.arxiv import ArxivClient
from syncd.sources.seeds import load_seeds_cached
from syncd.storage import Storage

__all__ = [
    "CycleResult",
    "author_batches",
    "batch_query",
    "observe",
    "plan_author",
    "seed_author",
    "sync_all",
]

_log = structlog.get_logger(__name__)

# What fails one cycle without stopping the process: arXiv's answer, a
# shutdown, or the database.  Each takes the same path (``_failed``).
_CYCLE_FAILURES = (UpstreamError, Interrupted, StoreError)

# arXiv documents no URL limit; long OR queries have been seen to fail, so
# a batch stays well under a kilobyte of search_query.
MAX_QUERY_CHARS = 1000
MAX_BATCH_AUTHORS = 25


@dataclass(frozen=True, slots=True)
class CycleResult:
    """How one author's cycle ended; ``run_id`` is None when the database could not start one.

    ``unknown_id``: after a good cycle, the id of the author's own feed that
    arXiv knows no author by, whether it said so this cycle or before.
    """

    run_id: int | None
    author: str
    ok: bool
    events: list[Event] = field(default_factory=list)
    error: str | None = None
    stats: SyncStats = field(default_factory=SyncStats)
    unknown_id: str | None = None


def seed_author(storage: Storage, author: AuthorSettings) -> int:
    """Import the author's seed snapshot; return how many papers were new (0 on a re-run)."""
    # Cached: sync_all seeds at every cycle, and the files rarely change.
    added = storage.import_seeds(author.name, seed_writes(load_seeds_cached(author.seeds)))
    if added:
        _log.info("seed_imported", author=author.name, papers_added=added)
    return added


def sync_all(
    storage: Storage,
    client: ArxivClient,
    authors: Sequence[AuthorSettings],
    settings: SyncSettings,
    *,
    claim_window: float | None = None,
    sweep_interval: float | None = None,
) -> list[CycleResult]:
    """Seed (if needed) and sync every author; record each cycle in the metrics.

    Authors without a custom query share batched ``au:"A" OR au:"B"``
    requests, so N authors cost about N / batch requests, not N.  With
    ``claim_window``, an author whose cycle another replica started within
    that many seconds is skipped (see ``SyncRuns.start``).  With
    ``sweep_interval`` (harvesting), only the authors whose sweep is due get
    a cycle, claimed once per slot; the others' feeds that are due are read
    alone (see the module's doc).  When a cycle succeeded, flagged papers'
    missing versions are backfilled last.
    """
    # Every followed author, not only these: a name is contested by whoever it could be.
    followed = NameIndex(storage.authors.followed_names())
    results: list[CycleResult] = []
    # Earlier versions the cycles fetched to link seeds: the backfill needs no request for them.
    known: dict[str, Record] = {}
    seeded = []
    for author in authors:
        try:
            seed_author(storage, author)
        except StoreError as exc:
            results.append(_failed(storage, _Cycle(author, None, time.monotonic()), exc))
        else:
            seeded.append(author)
    if sweep_interval is None:
        for batch in author_batches(seeded):
            results += _sync_batch(
                storage,
                client,
                batch,
                settings,
                lambda _: claim_window,
                known=known,
                followed=followed,
            )
    else:
        sweeps = _sort_sweeps(storage, client, seeded, sweep_interval)
        for batch in author_batches(sweeps.due):
            results += _sync_batch(
                storage, client, batch, settings, sweeps.window, known=known, followed=followed
            )
        results += _read_feeds_alone(
            storage, client, sweeps, settings, claim_window, known=known, followed=followed
        )
    if any(r.ok for r in results):
        backfill_flagged(storage, client, known)
    return results


def author_batches(
    authors: Sequence[AuthorSettings],
    max_query_chars: int = MAX_QUERY_CHARS,
    max_authors: int = MAX_BATCH_AUTHORS,
) -> list[list[AuthorSettings]]:
    """Group authors into batches whose OR query stays short; a custom query goes alone."""
    batches: list[list[AuthorSettings]] = []
    current: list[AuthorSettings] = []
    for author in authors:
        if author.query is not None:
            batches.append([author])
            continue
        candidate = [*current, author]
        if current and (
            len(batch_query(candidate)) > max_query_chars or len(candidate) > max_authors
        ):
            batches.append(current)
            candidate = [author]
        current = candidate
    if current:
        batches.append(current)
    return batches


def batch_query(authors: Sequence[AuthorSettings]) -> str:
    """The ``search_query`` of a batch: one author's query, or their ``au:`` terms ORed."""
    return " OR ".join(a.search_query for a in authors)


@dataclass(frozen=True, slots=True)
class _Sweeps:
    """One cycle's verdicts while harvesting: whose sweep is due, whose feed is read alone.

    ``feeds`` pairs each author swept in its current slot whose own feed is
    due with when its latest claiming cycle started.
    """

    interval: float
    due: list[AuthorSettings]
    feeds: list[tuple[AuthorSettings, datetime]]

    def window(self, author: AuthorSettings) -> float:
        """The author's claim window: any cycle started since its slot began claims the slot."""
        now = datetime.now(UTC)
        return (now - sweep_slot(author.name, now, self.interval)).total_seconds()


def _sort_sweeps(
    storage: Storage, client: ArxivClient, authors: Sequence[AuthorSettings], interval: float
) -> _Sweeps:
    """Whose sweep is due; of the others, whose own feed is due (see ``_Sweeps``).

    Only after a sweep that succeeded: while the slot's sweep is running it
    reads the feed itself, and a feed-only cycle must never be the one that
    claims a slot whose sweep failed.
    """
    now = datetime.now(UTC)
    last = storage.runs.last_claims([a.name for a in authors])
    read = storage.baselines.feeds_read([a.name for a in authors if a.feed_id is not None])
    feed_interval = client.settings.author_feed_interval
    due: list[AuthorSettings] = []
    feeds: list[tuple[AuthorSettings, datetime]] = []
    for author in authors:
        run = last.get(author.name)
        if run is None or sweep_due(author.name, run.started_at, now, interval):
            due.append(author)
        elif (
            run.status is RunStatus.OK
            and author.feed_id is not None
            and feed_due(author.name, read.get(author.name), now, feed_interval)
        ):
            feeds.append((author, run.started_at))
    metrics.observe_sweeps(due=len(due), not_due=len(authors) - len(due))
    _log.info("sweeps_sorted", due=len(due), not_due=len(authors) - len(due), feeds=len(feeds))
    return _Sweeps(interval, due, feeds)


def _read_feeds_alone(
    storage: Storage,
    client: ArxivClient,
    sweeps: _Sweeps,
    settings: SyncSettings,
    claim_window: float | None,
    *,
    known: dict[str, Record],
    followed: NameIndex,
) -> list[CycleResult]:
    """A feed-only cycle for each author of ``sweeps.feeds``, claimed as cycles are."""
    results: list[CycleResult] = []
    for author, last_claim in sweeps.feeds:
        if sweep_due(author.name, last_claim, datetime.now(UTC), sweeps.interval):
            continue  # its next slot began since: the next cycle sweeps it, feed included
        started = time.monotonic()
        try:
            run_id = storage.runs.start(author.name, unless_started_within=claim_window)
        except StoreError as exc:
            results.append(_failed(storage, _Cycle(author, None, started, complete=False), exc))
            continue
        if run_id is None:
            _log.info("cycle_skipped", author=author.name, reason="another replica claimed it")
            continue
        cycle = _Cycle(author, run_id, started, complete=False)
        results.append(_finish(storage, client, cycle, settings, followed))
        known.update(cycle.fetched)
    return results


@dataclass
class _Cycle:
    """One author's cycle in progress: its run, its clock and what arXiv said so far."""

    author: AuthorSettings
    run_id: int | None
    started: float
    # A name query ran, so what it did not return is absent; a feed-only cycle's is not.
    complete: bool = True
    observed: Observed = field(default_factory=Observed)
    # The ids the author's own arXiv feed lists, when it was read this cycle.
    claims: list[str] | None = None
    # The feed's id, when arXiv answered this cycle that it knows no author by it.
    unknown_feed: str | None = None
    requests: int = 0
    # Earlier versions fetched to link seeds, by versioned id.
    fetched: dict[str, Record] = field(default_factory=dict)

    @property
    def stats(self) -> SyncStats:
        return SyncStats(requests=self.requests, entries=len(self.observed.seen))


def _sync_batch(
    storage: Storage,
    client: ArxivClient,
    batch: Sequence[AuthorSettings],
    settings: SyncSettings,
    claim_window: Callable[[AuthorSettings], float | None],
    *,
    known: dict[str, Record],
    followed: NameIndex,
) -> list[CycleResult]:
    cycles: list[_Cycle] = []
    failed: list[CycleResult] = []
    for author in batch:
        started = time.monotonic()
        try:
            run_id = storage.runs.start(author.name, unless_started_within=claim_window(author))
        except StoreError as exc:
            failed.append(_failed(storage, _Cycle(author, None, started), exc))
            continue
        if run_id is None:
            _log.info("cycle_skipped", author=author.name, reason="another replica claimed it")
            continue
        cycles.append(_Cycle(author, run_id, started))
    if not cycles:
        return failed
    requests_before = client.requests
    # The client's per-request lines carry the cycle (or the batch's cycles).
    context = (
        {"cycle": cycles[0].run_id, "author": cycles[0].author.name}
        if len(cycles) == 1
        else {"cycles": [c.run_id for c in cycles]}
    )
    try:
        with structlog.contextvars.bound_contextvars(**context):
            _gather(storage, client, cycles)
    except _CYCLE_FAILURES as exc:
        for cycle in cycles:
            cycle.requests = client.requests - requests_before
        return [*failed, *(_failed(storage, c, exc) for c in cycles)]
    # The batch's requests are shared; each author's run reports them all.
    for cycle in cycles:
        cycle.requests = client.requests - requests_before
    finished = [_finish(storage, client, c, settings, followed) for c in cycles]
    for cycle in cycles:
        known.update(cycle.fetched)
    return [*failed, *finished]


def _gather(storage: Storage, client: ArxivClient, cycles: Sequence[_Cycle]) -> None:
    """Stream the batch's pages, handing each entry to the authors it may be by."""
    query = batch_query([c.author for c in cycles])
    for page in client.search(query):
        fault_point("sync.page_fetched")
        if len(cycles) == 1:
            _take(storage, cycles[0], page.records)
            continue
        shares, orphans = split_batch(page.records, [c.author.name for c in cycles])
        if orphans:
            # A lost entry reads as an absent paper: fail rather than guess.
            raise FeedError(
                "batched query returned entries no author's name matches: "
                + ", ".join(str(r.arxiv_id) for r in orphans[:5])
            )
        for cycle in cycles:
            _take(storage, cycle, shares.get(cycle.author.name, ()))


def _take(storage: Storage, cycle: _Cycle, records: Sequence[Record]) -> None:
    observe(storage, cycle.author, cycle.observed, records)


def observe(
    storage: Storage, author: AuthorSettings, observed: Observed, records: Sequence[Record]
) -> None:
    """Note one page's entries for one author, comparing content hashes in one query."""
    excluded = author.exclude_ids
    fresh = [r for r in records if r.arxiv_id is not None and r.arxiv_id not in excluded]
    states = storage.papers.states(author.name, [r.arxiv_id or "" for r in fresh])
    observed.take(fresh, states)


def _finish(
    storage: Storage,
    client: ArxivClient,
    cycle: _Cycle,
    settings: SyncSettings,
    followed: NameIndex,
) -> CycleResult:
    """Complete one author's cycle: decide, store atomically, log; or fail storing nothing."""
    author = cycle.author
    with structlog.contextvars.bound_contextvars(cycle=cycle.run_id, author=author.name):
        try:
            requests_before = client.requests
            # include_ids are the sweep's: a feed-only cycle fetches none.
            wanted = author.include_ids if cycle.complete else ()
            missing = [i for i in wanted if i not in cycle.observed.seen]
            if missing:
                _take(storage, cycle, client.fetch_ids(missing))
            state = storage.baselines.state(author.name)
            _take_claims(storage, cycle, read_feed(client, author, state))
            plan = plan_author(
                storage,
                client,
                author,
                cycle.observed,
                fetched=cycle.fetched,
                settings=settings,
                complete=cycle.complete,
                claims=cycle.claims or (),
                baseline=cycle.complete and state.baseline_at is None,
                followed=followed,
            )
            cycle.requests += client.requests - requests_before
            assert cycle.run_id is not None  # only cycles with a run get here
            baseline = None
            if plan.baseline is not None:
                baseline = plan.baseline.changes(
                    author.name, author.orcid, author.arxiv_author_id, cycle.unknown_feed
                )
            events = storage.apply_cycle(
                cycle.run_id,
                author.name,
                plan.writes,
                cycle.stats,
                claims=cycle.claims,
                unknown_feed=cycle.unknown_feed,
                baseline=baseline,
            )
        except _CYCLE_FAILURES as exc:
            return _failed(storage, cycle, exc)
        _report(cycle, plan, events)
        # Read this cycle, the feed's answer is the state; else what it answered last.
        read = cycle.claims is not None or cycle.unknown_feed is not None
        unknown = cycle.unknown_feed if read else state.feed_unknown_id
        return CycleResult(
            cycle.run_id,
            author.name,
            ok=True,
            events=events,
            stats=cycle.stats,
            unknown_id=unknown,
        )


def _take_claims(storage: Storage, cycle: _Cycle, reading: FeedReading) -> None:
    """What the author's own feed said, into the cycle (``syncd.service.claims``)."""
    cycle.unknown_feed = reading.unknown_id
    if reading.claims is None:
        return
    # An entry the name query also returned is taken as the query had it.
    _take(storage, cycle, [r for r in reading.claims if r.arxiv_id not in cycle.observed.seen])
    cycle.claims = [r.arxiv_id or "" for r in reading.claims]


def plan_author(
    storage: Storage,
    client: ArxivClient,
    author: AuthorSettings,
    observed: Observed,
    *,
    fetched: dict[str, Record],
    settings: SyncSettings,
    complete: bool,
    claims: Sequence[str] = (),
    baseline: bool = False,
    followed: NameIndex | None = None,
) -> Plan:
    """Load what an author's decisions need, link seed papers, and plan the writes.

    ``complete``: ``observed`` is everything arXiv holds of the author (a
    cycle's name query), so a tracked paper missing from it counts as
    absent; a harvest sees only what changed and counts no absence.
    Earlier versions fetched to link seeds go into ``fetched``.  ``claims`` are
    the author's own feed's papers, and ``baseline`` says this is the author's
    first complete sync (it announces nothing but ``author.added``);
    ``followed`` indexes every followed author's name (``Snapshot.followed``).
    """
    name = author.name
    changed = storage.papers.with_ids(name, observed.changed)
    check_trust(observed, storage.papers.tracked_count(name) if complete else 0, changed)
    unlinked = storage.papers.with_status(name, PaperStatus.UNLINKED) if observed.new else []
    links = _link_seeds(storage, client, unlinked, observed, fetched)
    names: set[str] = set()
    categories: set[str] = set()
    if needs_identity_basis(observed, set(links.values()), changed):
        names, categories = storage.papers.identity_basis(name)
    snapshot = Snapshot(
        author=name,
        include_ids=author.include_ids,
        removal_after=settings.removal_after,
        unlinked=unlinked,
        changed=changed,
        absent=storage.papers.tracked_missing_from(name, observed.seen) if complete else (),
        identity_names=names,
        identity_categories=categories,
        claimed=claims,
        baseline=baseline,
        # Nothing tells the author from namesakes: their co-author groups will.
        basis_margin=None if author.seeds or claims else settings.basis_margin,
        followed=followed,
        # What an author.review_needed says waits in all, should new entries be held.
        candidates=storage.papers.candidate_count(name) if observed.new else 0,
    )
    return plan_cycle(snapshot, observed, links)


def _link_seeds(
    storage: Storage,
    client: ArxivClient,
    unlinked: Sequence[Paper],
    observed: Observed,
    fetched: dict[str, Record],
) -> dict[int, str]:
    """Match unlinked seed papers to new entries (paper id → arXiv id).

    Current versions first; only when seeds remain unmatched and some new
    entry has earlier versions are those fetched, in one batched request,
    and kept in ``fetched`` for the backfill.  An entry whose earlier
    version arXiv refused is deferred to a later cycle until that version
    is set aside (``syncd.domain.refusals``); the rest of the cycle goes on.
    """
    if not unlinked or not observed.new:
        return {}
    histories = storage.papers.histories([p.id for p in unlinked])
    seeds = {paper_id: [r.record for r in revisions] for paper_id, revisions in histories.items()}
    versions: dict[str, list[Record]] = {i: [r] for i, r in observed.new.items()}
    assignment = link_seeds_to_arxiv(seeds, versions)
    pending = [r for i, r in observed.new.items() if i not in assignment.pairs.values()]
    wanted = earlier_version_ids(pending)
    if len(assignment.pairs) < len(unlinked) and wanted:
        records, awaited = fetch_earlier(storage.versions, client.fetch_ids, wanted)
        for record in records:
            if record.arxiv_id in versions:
                versions[record.arxiv_id].append(record)
                fetched[versioned_id(record.arxiv_id, record.version or 0)] = record
        _defer(observed, versions, awaited)
        assignment = link_seeds_to_arxiv(seeds, versions)
    for key, close in assignment.ambiguous.items():
        _log.warning("link_ambiguous", paper_id=key, candidates=list(close))
    return dict(assignment.pairs)


def _defer(observed: Observed, versions: dict[str, list[Record]], awaited: Collection[str]) -> None:
    """Leave the entries whose earlier versions are ``awaited`` for a later cycle to decide."""
    entries = {split_arxiv_id(ident)[0] for ident in awaited}
    for arxiv_id in sorted(entries & set(versions)):
        versions.pop(arxiv_id)
        observed.defer(arxiv_id)
        waiting = sorted(i for i in awaited if split_arxiv_id(i)[0] == arxiv_id)
        _log.info("entry_deferred", arxiv_id=arxiv_id, awaiting=waiting)


def _report(cycle: _Cycle, plan: Plan, events: Sequence[Event]) -> None:
    """Metrics and log lines for a stored cycle: its notes, one line per event, a summary."""
    metrics.observe_cycle(True, time.monotonic() - cycle.started, time.time())
    metrics.observe_events((e.type, e.kinds) for e in events)
    metrics.observe_revisions(sum(len(w.revisions) for w in plan.writes))
    for note in plan.notes:
        _log.info(note.event, **note.fields)
    for event in events:
        _log.info(
            "paper_changed",
            event_type=event.type,
            event_id=event.id,
            paper=event.paper_key,
            arxiv_id=event.arxiv_id,
            kinds=list(event.kinds),
        )
    if plan.baseline is not None:
        summary = plan.baseline
        fields = {"papers": summary.tracked, "claimed": summary.claimed}
        _log.info("author_baseline", **fields, candidates=len(summary.candidates))
        if summary.needs_review:
            _log.warning("author_needs_review", candidates=len(summary.candidates))
    stats = cycle.stats
    _log.info("cycle_finished", entries=stats.entries, requests=stats.requests, events=len(events))


def _failed(storage: Storage, cycle: _Cycle, exc: Exception) -> CycleResult:
    """The one way a cycle fails: one ``cycle_failed`` line, the failed counter, its run failed.

    The run is closed now, or once the database answers again if it is what failed.
    """
    stats = cycle.stats
    if cycle.run_id is not None:
        storage.runs.fail(cycle.run_id, str(exc), stats)
    metrics.observe_cycle(False, time.monotonic() - cycle.started, time.time())
    with structlog.contextvars.bound_contextvars(cycle=cycle.run_id, author=cycle.author.name):
        _log.error("cycle_failed", error=str(exc), error_type=type(exc).__name__)
    return CycleResult(cycle.run_id, cycle.author.name, ok=False, error=str(exc), stats=stats)
