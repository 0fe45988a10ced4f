"""Sync cycles: fetch → load → link → plan → apply, for every author; then backfill.

Pages are streamed: each page's content hashes are compared with the stored
ones in one query, and only entries that changed or are new are kept until
the end of the cycle (``planner.Observed``).  Then the cycle loads what its
decisions need (``planner.Snapshot``), links seed papers, lets the pure
planner decide the writes, and applies them in one transaction per author.
Any upstream answer that cannot be trusted fails the cycle before anything
is written.  Authors without a custom query share batched OR queries, and
each author's query and own feed are read up to ``[arxiv]
max_results_per_author`` (``syncd.service.queries``, ``syncd.service.claims``):
a cycle whose query was cut there counts no absence.

While harvesting (``sweep_all``), an author's cycle is its periodic full
sweep, once per slot of ``[harvest] sweep_interval``; between sweeps, an
author whose own feed is due has it read alone, in a feed-only cycle that
counts no absence.  Whose sweep and whose feed are due is decided at one
reading of the clock per round (``syncd.domain.cadence.choose_sweeps``).

A harvest page that stores an author's papers during their cycle makes the
cycle compare what it kept with what is stored now, and plan again
(``syncd.service.turns``).

Once the cycles are stored, the earlier versions of papers they flagged
(linked or added at vN > 1, or seen jumping versions) are backfilled for
every author at once (``syncd.service.backfill``); that can fail without touching
what the cycles stored.

When arXiv throttles us for longer than a request waits (``Throttled``), the
batch it cut short stores nothing, like any untrusted answer, and the authors
not reached are left, least recently synced, to come first next cycle.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import structlog

from syncd import metrics
from syncd.config import SyncSettings
from syncd.domain.attribution import NameIndex
from syncd.domain.authors import Author
from syncd.domain.baselines import quiet_before
from syncd.domain.cadence import SweepStanding, choose_sweeps, sweep_due, sweep_slot
from syncd.domain.model import AuthorSyncState, Event, SyncRun, SyncStats, Truncation
from syncd.domain.planner import (
    Observed,
    Plan,
)
from syncd.domain.record import Record
from syncd.domain.vocabulary import ResultSource, RunStatus
from syncd.errors import (
    ConflictError,
    Interrupted,
    StoreError,
    Throttled,
    UpstreamError,
)
from syncd.faults import fault_point
from syncd.service.backfill import backfill_flagged
from syncd.service.baselines import Baselined, baselined_only
from syncd.service.batches import author_batches, last_claims, oldest_first
from syncd.service.claims import FeedReading, read_feed
from syncd.service.planning import log_events, observe, plan_author, seed_author
from syncd.service.queries import QueryReader, read_queries
from syncd.service.turns import until_fresh
from syncd.sources.arxiv import ArxivClient
from syncd.storage import Storage

__all__ = ["CycleResult", "sweep_all", "sync_all"]

_log = structlog.get_logger(__name__)

# What fails one cycle without stopping the process: arXiv's answer, a
# shutdown, the database, or the author's removal while it ran.  Each takes
# the same path (``_failed``).
_CYCLE_FAILURES = (UpstreamError, Interrupted, StoreError, ConflictError)


@dataclass(frozen=True, slots=True)
class CycleResult:
    """How one author's cycle ended; ``run_id`` is None when the database could not start one,
    or when arXiv throttling us left it for later: then ``next_try_at`` says until when.

    ``unknown_id``: after a good cycle, the id of the author's own feed that
    arXiv knows no author by, whether it said so this cycle or before.
    """

    run_id: int | None
    author: str
    ok: bool
    events: list[Event] = field(default_factory=list)
    error: str | None = None
    stats: SyncStats = field(default_factory=SyncStats)
    next_try_at: datetime | None = None
    unknown_id: str | None = None

    @property
    def throttled(self) -> bool:
        """arXiv throttling us stopped the cycle, or left it out."""
        return self.next_try_at is not None


def sync_all(
    storage: Storage,
    client: ArxivClient,
    authors: Sequence[Author],
    settings: SyncSettings,
    *,
    claim_window: float | None = None,
) -> list[CycleResult]:
    """Seed (if needed) and sync every author, least recently synced first; record each
    cycle in the metrics.

    Authors without a custom query share batched requests (``syncd.service.batches``).
    With ``claim_window``, an author whose cycle another replica started within that
    many seconds is skipped (see ``SyncRuns.start``).  When a cycle succeeded, flagged
    papers' missing versions are backfilled last, unless arXiv throttled us.
    """
    round_, seeded, claims = _begin(storage, client, authors, settings)
    batches = author_batches(oldest_first(seeded, claims))
    _sync_batches(round_, batches, lambda _author, _started: claim_window)
    return _end(round_)


def sweep_all(
    storage: Storage,
    client: ArxivClient,
    authors: Sequence[Author],
    settings: SyncSettings,
    *,
    sweep_interval: float,
    claim_window: float | None = None,
) -> list[CycleResult]:
    """``sync_all`` while harvesting: only the authors whose sweep is due get a cycle,
    claimed once per slot of ``sweep_interval``; the others' own feeds that are due are
    read alone, each cycle claimed within ``claim_window`` (see the module's doc).  An
    author without a baseline waits for the harvest's (``syncd.service.baselines``)."""
    round_, seeded, claims = _begin(storage, client, authors, settings)
    sweeps = _choose_sweeps(round_, baselined_only(storage, seeded), sweep_interval, claims)
    _sync_batches(round_, author_batches(sweeps.due), sweeps.window)
    if not round_.throttled:
        _read_feeds_alone(round_, sweeps, claim_window)
    return _end(round_)


@dataclass(frozen=True, slots=True)
class _Clock:
    """A round's one reading of the wall clock, carried on by the monotonic one that times
    its cycles (a later claim is placed in its sweep slot without another reading)."""

    now: datetime
    monotonic: float

    @classmethod
    def read(cls) -> _Clock:
        return cls(datetime.now(UTC), time.monotonic())

    def at(self, monotonic: float) -> datetime:
        """The wall-clock time of a later ``time.monotonic()`` reading."""
        return self.now + timedelta(seconds=monotonic - self.monotonic)


@dataclass
class _Round:
    """What the cycles of one ``sync_all`` or ``sweep_all`` share, and their results."""

    storage: Storage
    client: ArxivClient
    settings: SyncSettings
    clock: _Clock
    # Every followed author, not only these: a name is contested by whoever it could be.
    followed: NameIndex
    # Earlier versions the cycles fetched to link seeds: the backfill needs no request for them.
    known: dict[str, Record] = field(default_factory=dict)
    results: list[CycleResult] = field(default_factory=list)

    @property
    def throttled(self) -> bool:
        return any(r.throttled for r in self.results)


# An author's claim window when its cycle starts (a ``time.monotonic()`` reading).
_ClaimWindow = Callable[[Author, float], float | None]


def _begin(
    storage: Storage,
    client: ArxivClient,
    authors: Sequence[Author],
    settings: SyncSettings,
) -> tuple[_Round, list[Author], dict[str, SyncRun]]:
    """Start a round: read the clock, seed the authors; those seeded and their last claims."""
    clock = _Clock.read()
    round_ = _Round(storage, client, settings, clock, NameIndex(storage.authors.followed_names()))
    seeded = []
    for author in authors:
        try:
            seed_author(storage, author)
        except StoreError as exc:
            round_.results.append(_failed(storage, _Cycle(author, None, time.monotonic()), exc))
        else:
            seeded.append(author)
    return round_, seeded, last_claims(storage, seeded)


def _end(round_: _Round) -> list[CycleResult]:
    """Backfill what the cycles flagged, when one succeeded and arXiv throttled none."""
    results = round_.results
    if any(r.ok for r in results) and not round_.throttled:
        backfill_flagged(round_.storage, round_.client, round_.known)
    return results


def _sync_batches(
    round_: _Round, batches: Sequence[Sequence[Author]], claim_window: _ClaimWindow
) -> None:
    """Each batch's cycles, until arXiv's cooldown outlasts a request's wait."""
    client = round_.client
    for number, batch in enumerate(batches):
        try:
            client.check_throttle(client.settings.api_url)
        except Throttled as exc:
            round_.results += _left_for_later([a for b in batches[number:] for a in b], exc)
            return
        round_.results += _sync_batch(round_, batch, claim_window)


def _left_for_later(authors: Sequence[Author], exc: Throttled) -> list[CycleResult]:
    """The results of authors whose cycles did not start because arXiv throttles us."""
    _log.warning("cycles_deferred", authors=len(authors), reason=str(exc))
    error, when = f"not synced yet: {exc}", exc.next_try_at
    return [CycleResult(None, a.name, ok=False, error=error, next_try_at=when) for a in authors]


@dataclass(frozen=True, slots=True)
class _Sweeps:
    """One round's verdicts while harvesting: whose sweep is due, whose feed is read alone.

    ``feeds`` pairs each author swept in its current slot whose own feed is
    due with when its latest claiming cycle started.
    """

    interval: float
    clock: _Clock
    due: list[Author]
    feeds: list[tuple[Author, datetime]]

    def window(self, author: Author, started: float) -> float:
        """The author's claim window: any cycle started since its slot began claims the slot."""
        at = self.clock.at(started)
        return (at - sweep_slot(author.name, at, self.interval)).total_seconds()


def _choose_sweeps(
    round_: _Round, baselined: Baselined, interval: float, last: Mapping[str, SyncRun]
) -> _Sweeps:
    """Whose sweep is due (least recently synced first; ``last`` holds each author's
    latest claiming cycle, and a harvest's baseline claims its slot); of the others, whose
    own feed is due (``choose_sweeps``)."""
    authors = baselined.authors
    ordered = oldest_first(authors, last)
    read = round_.storage.author_feeds.last_read([a.name for a in ordered if a.feed_id is not None])
    standings = []
    for author in ordered:
        run = last.get(author.name)
        claim = run.started_at if run is not None else baselined.by_harvest.get(author.name)
        standings.append(
            SweepStanding(
                author.name,
                last_claim=claim,
                swept=claim is not None and (run is None or run.status is RunStatus.OK),
                has_feed=author.feed_id is not None,
                feed_read=read.get(author.name),
            )
        )
    feed_interval = round_.client.settings.author_feed_interval
    choice = choose_sweeps(standings, round_.clock.now, interval, feed_interval)
    by_name = {a.name: a for a in ordered}
    due = [by_name[name] for name in choice.due]
    claims = {s.name: s.last_claim for s in standings}
    feeds = [(by_name[n], claim) for n in choice.feeds if (claim := claims[n]) is not None]
    metrics.observe_sweeps(due=len(due), not_due=len(authors) - len(due))
    _log.info("sweeps_sorted", due=len(due), not_due=len(authors) - len(due), feeds=len(feeds))
    return _Sweeps(interval, round_.clock, due, feeds)


def _read_feeds_alone(round_: _Round, sweeps: _Sweeps, claim_window: float | None) -> None:
    """A feed-only cycle for each author of ``sweeps.feeds``, claimed as cycles are."""
    storage, client = round_.storage, round_.client
    for author, last_claim in sweeps.feeds:
        started = time.monotonic()
        if sweep_due(author.name, last_claim, sweeps.clock.at(started), sweeps.interval):
            continue  # its next slot began since: the next cycle sweeps it, feed included
        try:
            client.check_throttle(client.settings.author_feed_url)
        except Throttled as exc:  # the feeds still due are due next cycle
            _log.warning("feeds_deferred", reason=str(exc))
            break
        try:
            run_id = storage.runs.start(author.name, unless_started_within=claim_window)
        except StoreError as exc:
            cycle = _Cycle(author, None, started, complete=False)
            round_.results.append(_failed(storage, cycle, exc))
            continue
        if run_id is None:
            _log.info("cycle_skipped", author=author.name, reason="another replica claimed it")
            continue
        cycle = _Cycle(author, run_id, started, complete=False)
        round_.results.append(_finish(round_, cycle))
        round_.known.update(cycle.fetched)


@dataclass
class _Cycle:
    """One author's cycle in progress: its run, its clock and what arXiv said so far."""

    author: Author
    run_id: int | None
    started: float
    # A name query ran, so what it did not return is absent; a feed-only cycle's is not.
    complete: bool = True
    observed: Observed = field(default_factory=Observed)
    # The ids the author's own arXiv feed lists, when it was read this cycle.
    claims: list[str] | None = None
    # The feed's id, when arXiv answered this cycle that it knows no author by it.
    unknown_feed: str | None = None
    # What was read this cycle (name query, own feed), each cut at the cap or whole (None).
    reads: dict[ResultSource, Truncation | None] = field(default_factory=dict)
    requests: int = 0
    # Earlier versions fetched to link seeds, by versioned id.
    fetched: dict[str, Record] = field(default_factory=dict)
    # The author's write sequence before anything of theirs was read (``Papers.write_seqs``).
    read_seq: int | None = None

    @property
    def stats(self) -> SyncStats:
        return SyncStats(requests=self.requests, entries=len(self.observed.seen))


def _sync_batch(
    round_: _Round, batch: Sequence[Author], claim_window: _ClaimWindow
) -> list[CycleResult]:
    storage, client = round_.storage, round_.client
    cycles: list[_Cycle] = []
    failed: list[CycleResult] = []
    for author in batch:
        started = time.monotonic()
        try:
            run_id = storage.runs.start(
                author.name, unless_started_within=claim_window(author, started)
            )
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
        seqs = storage.papers.write_seqs([c.author.name for c in cycles])
        for cycle in cycles:
            cycle.read_seq = seqs[cycle.author.name]
        with structlog.contextvars.bound_contextvars(**context):
            _gather(storage, client, cycles)
    except _CYCLE_FAILURES as exc:
        for cycle in cycles:
            cycle.requests = client.requests - requests_before
        return [*failed, *(_failed(storage, c, exc) for c in cycles)]
    # The batch's requests are shared; each author's run reports them all.
    for cycle in cycles:
        cycle.requests = client.requests - requests_before
    finished = [_finish(round_, c) for c in cycles]
    for cycle in cycles:
        round_.known.update(cycle.fetched)
    return [*failed, *finished]


def _gather(storage: Storage, client: ArxivClient, cycles: Sequence[_Cycle]) -> None:
    """Stream the batch's pages, each author's entries up to the cap into their cycle
    (``syncd.service.queries``)."""
    readers = [QueryReader(c.author, c.observed) for c in cycles]
    for cycle, cut in zip(cycles, read_queries(storage, client, readers), strict=True):
        cycle.reads[ResultSource.QUERY] = cut


def _take(storage: Storage, cycle: _Cycle, records: Sequence[Record]) -> None:
    observe(storage, cycle.author, cycle.observed, records)


def _finish(round_: _Round, cycle: _Cycle) -> CycleResult:
    """Complete one author's cycle: decide, store atomically, log; or fail storing nothing."""
    storage, client, author = round_.storage, round_.client, cycle.author
    with structlog.contextvars.bound_contextvars(cycle=cycle.run_id, author=author.name):
        try:
            requests_before = client.requests
            if cycle.read_seq is None:  # a feed-only cycle: nothing of theirs read yet
                cycle.read_seq = storage.papers.write_seqs([author.name])[author.name]
            # include_ids are the sweep's: a feed-only cycle fetches none.
            wanted = author.include_ids if cycle.complete else ()
            missing = [i for i in wanted if i not in cycle.observed.seen]
            if missing:
                _take(storage, cycle, client.fetch_ids(missing))
            state = storage.baselines.state(author.name)
            _take_claims(storage, cycle, read_feed(client, author, state, round_.clock.now))
            plan, events = _plan_and_apply(round_, cycle, state)
            cycle.requests += client.requests - requests_before
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
    cycle.reads[ResultSource.FEED] = reading.truncated
    # An entry the name query also returned is taken as the query had it.
    _take(storage, cycle, [r for r in reading.claims if r.arxiv_id not in cycle.observed.seen])
    cycle.claims = [r.arxiv_id or "" for r in reading.claims]


def _plan_and_apply(
    round_: _Round, cycle: _Cycle, state: AuthorSyncState
) -> tuple[Plan, list[Event]]:
    """Plan the cycle's writes and store them (again, if a harvest stored them first)."""
    storage, author, run_id = round_.storage, cycle.author, cycle.run_id
    assert run_id is not None  # only cycles with a run get here

    def attempt() -> tuple[Plan, list[Event]]:
        plan = plan_author(
            storage,
            round_.client,
            author,
            cycle.observed,
            fetched=cycle.fetched,
            settings=round_.settings,
            # A query cut at the cap did not read the older papers: none is absent.
            complete=cycle.complete and cycle.reads.get(ResultSource.QUERY) is None,
            claims=cycle.claims or (),
            baseline=cycle.complete and state.baseline_at is None,
            followed=round_.followed,
        )
        summary = plan.baseline
        baseline = None
        entries = {**cycle.observed.changed, **cycle.observed.new}
        writes = quiet_before(plan.writes, entries, state.baseline_from)
        if summary is not None:
            baseline = summary.changes(
                author.name, author.orcid, author.arxiv_author_id, cycle.unknown_feed
            )
        fault_point("sync.cycle_planned")
        events = storage.apply_cycle(
            run_id,
            author.name,
            writes,
            cycle.stats,
            claims=cycle.claims,
            unknown_feed=cycle.unknown_feed,
            baseline=baseline,
            read_seq=cycle.read_seq,
            reads=cycle.reads,
        )
        return plan, events

    return until_fresh(attempt, lambda: _observe_again(storage, cycle), event="cycle_replanned")


def _observe_again(storage: Storage, cycle: _Cycle) -> None:
    """Compare what the cycle kept with what is stored now, from a fresh write sequence."""
    name = cycle.author.name
    cycle.read_seq = storage.papers.write_seqs([name])[name]
    kept = [*cycle.observed.changed.values(), *cycle.observed.new.values()]
    observed = Observed(seen=set(cycle.observed.seen))
    observe(storage, cycle.author, observed, kept)
    cycle.observed = observed


def _report(cycle: _Cycle, plan: Plan, events: Sequence[Event]) -> None:
    """Metrics and log lines for a stored cycle: its notes, one line per event, a summary."""
    metrics.observe_cycle(True, time.monotonic() - cycle.started, time.time())
    metrics.observe_revisions(sum(len(w.revisions) for w in plan.writes))
    for note in plan.notes:
        _log.info(note.event, **note.fields)
    log_events(events)
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
    when = exc.next_try_at if isinstance(exc, Throttled) else None
    return CycleResult(
        cycle.run_id, cycle.author.name, ok=False, error=str(exc), stats=stats, next_try_at=when
    )
