"""Sync cycles: fetch → link → diff → store, for every author.

Pages are streamed: each page's content hashes are compared with the stored
ones in one query, and only entries that changed or are new are kept until
the end of the cycle.  Then linking, identity and diff (pure functions) decide
the writes, which the store applies in one transaction per author.  Any
upstream answer that cannot be trusted fails the cycle before anything is
written.  Authors without a custom query share batched OR queries.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import structlog

from syncd import metrics
from syncd.arxiv import ArxivClient
from syncd.config import AuthorSettings, SyncSettings
from syncd.diff import diff_records
from syncd.errors import FeedError, Interrupted, UpstreamError
from syncd.faults import fault_point
from syncd.linking import earlier_version_ids, identify, link_seed_papers, name_matches
from syncd.record import Record, content_hash
from syncd.seeds import SeedPaper, load_seeds_cached
from syncd.store import Event, NewRevision, Paper, PaperState, PaperWrite, Store, SyncStats

__all__ = [
    "CycleResult",
    "author_batches",
    "batch_query",
    "seed_author",
    "seed_writes",
    "sync_all",
    "sync_author",
]

_log = structlog.get_logger(__name__)

ARXIV_SOURCE = "arxiv"
# arXiv documents no URL limit; long OR queries have been seen to fail, so
# a batch stays well under a kilobyte of search_query.
MAX_QUERY_CHARS = 1000
MAX_BATCH_AUTHORS = 25


@dataclass(frozen=True, slots=True)
class CycleResult:
    """How one author's cycle ended."""

    run_id: int
    author: str
    ok: bool
    events: list[Event] = field(default_factory=list)
    error: str | None = None
    stats: SyncStats = field(default_factory=SyncStats)


def seed_writes(papers: Sequence[SeedPaper]) -> list[PaperWrite]:
    """The store writes for a seed snapshot: one unlinked paper per seed paper, no events."""
    writes = []
    for paper in papers:
        revisions = []
        previous: Record | None = None
        for revision in paper.revisions:
            change = diff_records(previous, revision.record) if previous else None
            revisions.append(
                NewRevision(
                    record=revision.record,
                    source=revision.source,
                    kinds=change.kinds if change else (),
                    changes=change.changes if change else {},
                )
            )
            previous = revision.record
        writes.append(
            PaperWrite(
                key=paper.key,
                arxiv_id=None,
                status="unlinked",
                origin="seed",
                revisions=tuple(revisions),
            )
        )
    return writes


def seed_author(store: Store, author: AuthorSettings) -> int:
    """Import the author's seed snapshot; return how many papers were new (0 on a re-run)."""
    # Cached: sync_all seeds at every cycle, and the files rarely change.
    added = store.import_seeds(author.name, seed_writes(load_seeds_cached(author.seeds)))
    if added:
        _log.info("seed_imported", author=author.name, papers_added=added)
    return added


def sync_all(
    store: Store,
    client: ArxivClient,
    authors: Sequence[AuthorSettings],
    settings: SyncSettings,
    *,
    claim_window: float | None = None,
) -> list[CycleResult]:
    """Seed (if needed) and sync every author; record each cycle in the metrics.

    Authors without a custom query share batched ``au:"A" OR au:"B"``
    requests, so N authors cost about N / batch requests, not N.  With
    ``claim_window``, an author whose cycle another replica started within
    that many seconds is skipped (see ``Store.start_sync_run``).
    """
    for author in authors:
        seed_author(store, author)
    results: list[CycleResult] = []
    for batch in author_batches(authors):
        results += _sync_batch(store, client, batch, settings, claim_window)
    return results


def sync_author(
    store: Store,
    client: ArxivClient,
    author: AuthorSettings,
    settings: SyncSettings,
    *,
    claim_window: float | None = None,
) -> CycleResult | None:
    """One cycle of one author; None when another replica claimed it."""
    results = _sync_batch(store, client, [author], settings, claim_window)
    return results[0] if results else None


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


@dataclass
class _Gathered:
    """What one author's cycle has learned from arXiv so far, before anything is stored.

    Only entries that need a decision are kept: those of unknown papers, and
    those whose content hash differs from the stored one (or whose status
    wants a look).  A quiet cycle keeps nothing but the ids it saw.
    """

    author: AuthorSettings
    run_id: int
    started: float
    seen: set[str] = field(default_factory=set)
    changed: dict[str, Record] = field(default_factory=dict)
    new: dict[str, Record] = field(default_factory=dict)
    requests: int = 0

    @property
    def stats(self) -> SyncStats:
        return SyncStats(requests=self.requests, entries=len(self.seen))


def _sync_batch(
    store: Store,
    client: ArxivClient,
    batch: Sequence[AuthorSettings],
    settings: SyncSettings,
    claim_window: float | None,
) -> list[CycleResult]:
    claimed: list[_Gathered] = []
    for author in batch:
        run_id = store.start_sync_run(author.name, unless_started_within=claim_window)
        if run_id is None:
            _log.info("cycle_skipped", author=author.name, reason="another replica claimed it")
            continue
        claimed.append(_Gathered(author, run_id, time.monotonic()))
    if not claimed:
        return []
    requests_before = client.requests
    # The client's per-request lines carry the cycle (or the batch's cycles).
    context = (
        {"cycle": claimed[0].run_id, "author": claimed[0].author.name}
        if len(claimed) == 1
        else {"cycles": [g.run_id for g in claimed]}
    )
    try:
        with structlog.contextvars.bound_contextvars(**context):
            _gather(store, client, claimed)
    except (UpstreamError, Interrupted) as exc:
        for gathered in claimed:
            gathered.requests = client.requests - requests_before
        return [_failed(store, g, exc) for g in claimed]
    # The batch's requests are shared; each author's run reports them all.
    for gathered in claimed:
        gathered.requests = client.requests - requests_before
    return [_finish(store, client, g, settings) for g in claimed]


def _gather(store: Store, client: ArxivClient, claimed: Sequence[_Gathered]) -> None:
    """Stream the batch's pages, handing each entry to the authors it belongs to."""
    query = batch_query([g.author for g in claimed])
    for page in client.search(query):
        fault_point("sync.page_fetched")
        for gathered in claimed:
            mine = page.records
            if len(claimed) > 1:
                mine = tuple(r for r in mine if _belongs(r, gathered.author))
            _take(store, gathered, mine)
        if len(claimed) > 1:
            _check_attribution(page.records, [g.author for g in claimed])


def _belongs(record: Record, author: AuthorSettings) -> bool:
    return any(name_matches(n, author.name) for n in record.authors)


def _check_attribution(records: Sequence[Record], authors: Sequence[AuthorSettings]) -> None:
    # An entry arXiv matched that no author claims would be silently lost,
    # and a lost entry reads as an absent paper: fail rather than guess.
    orphans = [r.arxiv_id for r in records if not any(_belongs(r, a) for a in authors)]
    if orphans:
        raise FeedError(
            "batched query returned entries no author's name matches: "
            + ", ".join(map(str, orphans[:5]))
        )


def _take(store: Store, gathered: _Gathered, records: Sequence[Record]) -> None:
    """Note one page's entries for one author, comparing content hashes in one query."""
    author = gathered.author
    fresh = {
        r.arxiv_id: r
        for r in records
        if r.arxiv_id is not None and r.arxiv_id not in author.exclude_ids
    }
    states = store.paper_states(author.name, fresh)
    for arxiv_id, record in fresh.items():
        gathered.seen.add(arxiv_id)
        state = states.get(arxiv_id)
        if state is None:
            gathered.new[arxiv_id] = record
        elif (
            state.record_hash != content_hash(record)
            or state.status != "tracked"
            or state.absent_syncs
        ):
            gathered.changed[arxiv_id] = record


def _finish(
    store: Store, client: ArxivClient, gathered: _Gathered, settings: SyncSettings
) -> CycleResult:
    """Complete one author's cycle: decide, store atomically, log; or fail storing nothing."""
    author = gathered.author
    with structlog.contextvars.bound_contextvars(cycle=gathered.run_id, author=author.name):
        try:
            requests_before = client.requests
            missing = [i for i in author.include_ids if i not in gathered.seen]
            if missing:
                _take(store, gathered, client.fetch_ids(missing))
            _refuse_sudden_emptiness(store, gathered)
            writes = _plan(store, client, gathered, settings)
            gathered.requests += client.requests - requests_before
        except (UpstreamError, Interrupted) as exc:
            return _failed(store, gathered, exc)
        events = store.apply_cycle(gathered.run_id, author.name, writes, gathered.stats)
        metrics.observe_cycle(True, time.monotonic() - gathered.started, time.time())
        metrics.observe_events((e.type, e.kinds) for e in events)
        metrics.observe_revisions(sum(len(w.revisions) for w in writes))
        for event in events:
            _log.info(
                "paper_changed",
                event_type=event.type,
                event_id=event.id,
                paper=event.paper_key,
                arxiv_id=event.arxiv_id,
                kinds=list(event.kinds),
            )
        stats = gathered.stats
        _log.info(
            "cycle_finished", entries=stats.entries, requests=stats.requests, events=len(events)
        )
        return CycleResult(gathered.run_id, author.name, ok=True, events=events, stats=stats)


def _failed(store: Store, gathered: _Gathered, exc: Exception) -> CycleResult:
    stats = gathered.stats
    store.fail_sync_run(gathered.run_id, str(exc), stats)
    metrics.observe_cycle(False, time.monotonic() - gathered.started, time.time())
    with structlog.contextvars.bound_contextvars(
        cycle=gathered.run_id, author=gathered.author.name
    ):
        _log.error("cycle_failed", error=str(exc), error_type=type(exc).__name__)
    return CycleResult(gathered.run_id, gathered.author.name, ok=False, error=str(exc), stats=stats)


def _refuse_sudden_emptiness(store: Store, gathered: _Gathered) -> None:
    # arXiv has answered a valid but empty feed by mistake; that must never
    # read as every tracked paper being gone.
    if gathered.seen:
        return
    tracked = store.tracked_count(gathered.author.name)
    if tracked:
        raise FeedError(
            f"arXiv answered no papers for an author who had {tracked}; "
            "treating the answer as a glitch, not as removals"
        )


def _plan(
    store: Store, client: ArxivClient, gathered: _Gathered, settings: SyncSettings
) -> list[PaperWrite]:
    """Every write of a complete, trusted cycle of one author."""
    author = gathered.author
    unlinked = store.papers_with_status(author.name, "unlinked") if gathered.new else []
    links = _link_seeds(store, client, unlinked, gathered.new)
    by_id = {p.id: p for p in unlinked}
    writes = [
        _linked(by_id[paper_id], gathered.new[arxiv_id]) for paper_id, arxiv_id in links.items()
    ]
    linked_ids = set(links.values())
    changed = store.papers_with_ids(author.name, gathered.changed)
    discovered = [r for i, r in gathered.new.items() if i not in linked_ids]
    if discovered or any(p.status == "candidate" for p in changed):
        names, categories = store.identity_basis(author.name)
        for arxiv_id in linked_ids:
            names.update(gathered.new[arxiv_id].authors)
            categories.update(gathered.new[arxiv_id].categories)
    else:
        names, categories = set(), set()

    def plausible(record: Record) -> bool:
        if record.arxiv_id in author.include_ids:
            return True
        identity = identify(record, names, categories, author.name)
        if not identity.plausible:
            _log.info(
                "candidate_held",
                arxiv_id=record.arxiv_id,
                reason="shares no co-author or category with the known papers",
            )
        return identity.plausible

    for paper in changed:
        entry = gathered.changed[paper.arxiv_id or ""]
        # a held candidate is promoted once it shares something with the known papers
        promoted = paper.status == "candidate" and plausible(entry)
        write = _observed(paper, entry, promoted)
        if write is not None:
            writes.append(write)
    writes += [_discovered(r, plausible(r)) for r in discovered]
    absent = store.tracked_missing_from(author.name, gathered.seen)
    writes += [_absent(state, settings.removal_after) for state in absent]
    return writes


def _link_seeds(
    store: Store, client: ArxivClient, unlinked: Sequence[Paper], new: Mapping[str, Record]
) -> dict[int, str]:
    """Match unlinked seed papers to new entries (paper id → arXiv id).

    Current versions first; only when seeds remain unmatched and some new
    entry has earlier versions are those fetched, in one batched request.
    """
    if not unlinked or not new:
        return {}
    seeds = {p.id: [r.record for r in store.history(p.id)] for p in unlinked}
    versions: dict[str, list[Record]] = {i: [r] for i, r in new.items()}
    assignment = link_seed_papers(seeds, versions)
    pending = [r for i, r in new.items() if i not in assignment.pairs.values()]
    wanted = earlier_version_ids(pending)
    if len(assignment.pairs) < len(unlinked) and wanted:
        for record in client.fetch_ids(wanted):
            if record.arxiv_id in versions:
                versions[record.arxiv_id].append(record)
        assignment = link_seed_papers(seeds, versions)
    for key, close in assignment.ambiguous.items():
        _log.warning("link_ambiguous", paper_id=key, candidates=list(close))
    return dict(assignment.pairs)


def _linked(paper: Paper, entry: Record) -> PaperWrite:
    change = diff_records(paper.record, entry)
    return PaperWrite(
        paper_id=paper.id,
        key=paper.key,
        arxiv_id=entry.arxiv_id,
        status="tracked",
        origin=paper.origin,
        revisions=(NewRevision(entry, ARXIV_SOURCE, change.kinds, change.changes),),
        event_type="paper.linked",
        event_kinds=change.kinds,
        event_changes=change.changes,
    )


def _observed(paper: Paper, entry: Record, promoted: bool) -> PaperWrite | None:
    """A known paper seen again: a revision if it changed, an event if it is (again) tracked."""
    announce = paper.status == "removed" or promoted
    change = None if content_hash(entry) == paper.record_hash else diff_records(paper.record, entry)
    if not change and not announce and paper.absent_syncs == 0:
        return None  # the steady state: nothing to write
    status = "tracked" if announce else paper.status
    event_type = None
    if announce:
        event_type = "paper.added"
    elif change and status == "tracked":
        event_type = "paper.revised"
    return PaperWrite(
        paper_id=paper.id,
        key=paper.key,
        arxiv_id=paper.arxiv_id,
        status=status,
        origin=paper.origin,
        revisions=(NewRevision(entry, ARXIV_SOURCE, change.kinds, change.changes),)
        if change
        else (),
        event_type=event_type,
        event_kinds=change.kinds if change else (),
        event_changes=change.changes if change else {},
    )


def _absent(paper: PaperState, removal_after: int) -> PaperWrite:
    absent = paper.absent_syncs + 1
    removed = absent >= removal_after
    return PaperWrite(
        paper_id=paper.id,
        key=paper.key,
        arxiv_id=paper.arxiv_id,
        status="removed" if removed else paper.status,
        origin=paper.origin,
        absent_syncs=absent,
        event_type="paper.removed" if removed else None,
    )


def _discovered(record: Record, plausible: bool) -> PaperWrite:
    return PaperWrite(
        key=record.arxiv_id or "",
        arxiv_id=record.arxiv_id,
        status="tracked" if plausible else "candidate",
        origin=ARXIV_SOURCE,
        revisions=(NewRevision(record, ARXIV_SOURCE),),
        event_type="paper.added" if plausible else None,
    )
