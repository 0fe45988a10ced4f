"""One sync cycle: fetch → link → diff → store, for one author.

``sync_author`` is the only function here that touches the network or the
database; it gathers what arXiv says, hands it with the stored state to the
pure ``plan_cycle``, and stores the plan in one transaction.  Any upstream
answer that cannot be trusted fails the cycle before anything is written.
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
from syncd.linking import earlier_version_ids, identify, link_seed_papers
from syncd.record import Record, content_hash
from syncd.seeds import SeedPaper, load_seeds
from syncd.store import Event, NewRevision, Paper, PaperWrite, Store, SyncStats

__all__ = [
    "CycleResult",
    "plan_cycle",
    "seed_author",
    "seed_writes",
    "sync_all",
    "sync_author",
]

_log = structlog.get_logger(__name__)

ARXIV_SOURCE = "arxiv"


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
    added = store.import_seeds(author.name, seed_writes(load_seeds(author.seeds)))
    _log.info("seed_imported", author=author.name, papers_added=added)
    return added


def sync_author(
    store: Store,
    client: ArxivClient,
    author: AuthorSettings,
    settings: SyncSettings,
    *,
    claim_window: float | None = None,
) -> CycleResult | None:
    """Run one cycle for ``author``: store every change, or nothing if arXiv can't be trusted.

    Returns None when another replica claimed this author's cycle.
    """
    run_id = store.start_sync_run(author.name, unless_started_within=claim_window)
    if run_id is None:
        _log.info("cycle_skipped", author=author.name, reason="another replica claimed it")
        return None
    # Bound as context so the client's per-request lines carry the cycle too.
    with structlog.contextvars.bound_contextvars(cycle=run_id, author=author.name):
        return _run_cycle(store, client, author, settings, run_id)


def sync_all(
    store: Store,
    client: ArxivClient,
    authors: Sequence[AuthorSettings],
    settings: SyncSettings,
    *,
    claim_window: float | None = None,
) -> list[CycleResult]:
    """Seed (if needed) and sync each author in turn; record each cycle in the metrics.

    With ``claim_window``, an author whose cycle another replica started
    within that many seconds is skipped (see ``Store.start_sync_run``).
    """
    results = []
    for author in authors:
        started = time.monotonic()
        seed_author(store, author)
        result = sync_author(store, client, author, settings, claim_window=claim_window)
        if result is None:
            continue
        metrics.observe_cycle(result.ok, time.monotonic() - started, time.time())
        metrics.observe_events((e.type, e.kinds) for e in result.events)
        results.append(result)
    return results


def _run_cycle(
    store: Store, client: ArxivClient, author: AuthorSettings, settings: SyncSettings, run_id: int
) -> CycleResult:
    requests_before = client.requests
    entries: dict[str, Record] = {}
    try:
        known = store.papers(author.name)
        entries = _fetch_entries(client, author, known)
        _refuse_sudden_emptiness(entries, known)
        links = _link_seeds(store, client, known, entries)
        writes = plan_cycle(known, entries, links, author, settings)
    except (UpstreamError, Interrupted) as exc:
        stats = SyncStats(requests=client.requests - requests_before, entries=len(entries))
        store.fail_sync_run(run_id, str(exc), stats)
        _log.error("cycle_failed", error=str(exc), error_type=type(exc).__name__)
        return CycleResult(run_id, author.name, ok=False, error=str(exc), stats=stats)
    stats = SyncStats(requests=client.requests - requests_before, entries=len(entries))
    events = store.apply_cycle(run_id, author.name, writes, stats)
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
    _log.info("cycle_finished", entries=stats.entries, requests=stats.requests, events=len(events))
    return CycleResult(run_id, author.name, ok=True, events=events, stats=stats)


def _fetch_entries(
    client: ArxivClient, author: AuthorSettings, known: Sequence[Paper]
) -> dict[str, Record]:
    """Every current entry of the author query, plus ``include_ids`` the query missed."""
    entries: dict[str, Record] = {}
    for page in client.search(author.search_query):
        for record in page.records:
            if record.arxiv_id is not None and record.arxiv_id not in author.exclude_ids:
                entries[record.arxiv_id] = record
    missing = [i for i in author.include_ids if i not in entries]
    if missing:
        fetched = {r.arxiv_id: r for r in client.fetch_ids(missing) if r.arxiv_id}
        lost = sorted(set(missing) - set(fetched))
        if lost:
            raise FeedError(f"include_ids not returned by arXiv: {', '.join(lost)}")
        entries |= fetched
    return entries


def _refuse_sudden_emptiness(entries: Mapping[str, Record], known: Sequence[Paper]) -> None:
    # arXiv has answered a valid but empty feed by mistake; that must never
    # read as every tracked paper being gone.
    tracked = sum(1 for p in known if p.status == "tracked")
    if not entries and tracked:
        raise FeedError(
            f"arXiv answered no papers for an author who had {tracked}; "
            "treating the answer as a glitch, not as removals"
        )


def _link_seeds(
    store: Store, client: ArxivClient, known: Sequence[Paper], entries: Mapping[str, Record]
) -> dict[int, str]:
    """Match unlinked seed papers to new entries (paper id → arXiv id).

    Current versions first; only when seeds remain unmatched and some new
    entry has earlier versions are those fetched, in one batched request.
    """
    unlinked = [p for p in known if p.status == "unlinked"]
    tracked_ids = {p.arxiv_id for p in known if p.arxiv_id}
    new = {i: r for i, r in entries.items() if i not in tracked_ids}
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


def plan_cycle(
    known: Sequence[Paper],
    entries: Mapping[str, Record],
    links: Mapping[int, str],
    author: AuthorSettings,
    settings: SyncSettings,
) -> list[PaperWrite]:
    """Decide every write of a complete, trusted cycle; a pure function of its inputs."""
    linked_ids = set(links.values())
    known_records = [p.record for p in known if p.status in {"tracked", "unlinked"}]
    known_records += [entries[i] for i in linked_ids]
    writes: list[PaperWrite] = []
    for paper in known:
        write: PaperWrite | None = None
        if paper.id in links:
            write = _linked(paper, entries[links[paper.id]])
        elif paper.arxiv_id is not None and paper.arxiv_id in entries:
            entry = entries[paper.arxiv_id]
            # a held candidate is promoted once it shares something with the known papers
            promoted = paper.status == "candidate" and _plausible(entry, known_records, author)
            write = _observed(paper, entry, promoted)
        elif paper.status == "tracked":
            write = _absent(paper, settings.removal_after)
        if write is not None:
            writes.append(write)
    seen = {p.arxiv_id for p in known if p.arxiv_id} | linked_ids
    for arxiv_id, record in entries.items():
        if arxiv_id not in seen:
            writes.append(_discovered(record, _plausible(record, known_records, author)))
    return writes


def _plausible(record: Record, known: Sequence[Record], author: AuthorSettings) -> bool:
    if record.arxiv_id in author.include_ids:
        return True
    identity = identify(record, known, author.name)
    if not identity.plausible:
        _log.info(
            "candidate_held",
            arxiv_id=record.arxiv_id,
            reason="shares no co-author or category with the known papers",
        )
    return identity.plausible


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


def _absent(paper: Paper, removal_after: int) -> PaperWrite:
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
