"""What cycles and harvests share: note what arXiv returned, link seeds, plan an author.

A name query's page (``syncd.service.sync``) and a harvest's records
(``syncd.service.harvest``) reach the same planner through here: each
observation is compared with the stored hashes in one query (``observe``),
then ``plan_author`` loads what the author's decisions need, links seed
papers (fetching earlier versions when a retitled paper needs them) and
lets the pure planner decide the writes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import structlog

from syncd import metrics
from syncd.config import SyncSettings
from syncd.domain.attribution import NameIndex
from syncd.domain.authors import Author
from syncd.domain.linking import earlier_version_ids, link_seeds_to_arxiv
from syncd.domain.model import Event, Paper
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
from syncd.domain.vocabulary import PaperStatus
from syncd.service.refusals import fetch_earlier
from syncd.sources.arxiv import ArxivClient
from syncd.sources.seeds import load_seeds_cached
from syncd.storage import Storage

__all__ = ["log_events", "observe", "plan_author", "seed_author"]

_log = structlog.get_logger(__name__)


def seed_author(storage: Storage, author: Author) -> int:
    """Import the author's seed snapshot; return how many papers were new (0 on a re-run)."""
    # Cached: sync_all seeds at every cycle, and the files rarely change.
    added = storage.import_seeds(author.name, seed_writes(load_seeds_cached(author.seeds)))
    if added:
        _log.info("seed_imported", author=author.name, papers_added=added)
    return added


def log_events(events: Sequence[Event]) -> None:
    """Count published events in the metrics and log one ``paper_changed`` line each."""
    metrics.observe_events((e.type, e.kinds) for e in events)
    for event in events:
        _log.info(
            "paper_changed",
            event_type=event.type,
            event_id=event.id,
            author=event.author,
            paper=event.paper_key,
            arxiv_id=event.arxiv_id,
            kinds=list(event.kinds),
        )


def observe(
    storage: Storage, author: Author, observed: Observed, records: Sequence[Record]
) -> None:
    """Note one page's entries for one author, comparing content hashes in one query."""
    excluded = author.exclude_ids
    fresh = [r for r in records if r.arxiv_id is not None and r.arxiv_id not in excluded]
    states = storage.papers.states(author.name, [r.arxiv_id or "" for r in fresh])
    observed.take(fresh, states)


def plan_author(
    storage: Storage,
    client: ArxivClient,
    author: Author,
    observed: Observed,
    *,
    fetched: dict[str, Record],
    settings: SyncSettings,
    complete: bool,
    claims: Sequence[str] = (),
    baseline: bool = False,
    pending: bool = False,
    followed: NameIndex | None = None,
) -> Plan:
    """Load what an author's decisions need, link seed papers, and plan the writes.

    ``complete``: ``observed`` is everything arXiv holds of the author (a
    cycle's name query), so a tracked paper missing from it counts as
    absent; a harvest sees only what changed and counts no absence.
    Earlier versions fetched to link seeds go into ``fetched``.  ``claims`` are
    the author's own feed's papers, and ``baseline`` says this is the author's
    first complete sync (it announces nothing but ``author.added``), and
    ``pending`` a harvest page before it (every paper waits for the pass's end:
    ``syncd.domain.baselines``);
    ``followed`` indexes every followed author's name (``Snapshot.followed``).
    """
    name = author.name
    changed = storage.papers.with_ids(name, observed.changed)
    check_trust(observed, storage.papers.tracked_count(name) if complete else 0, changed)
    # A seed of a paper another author linked already has its arXiv id: nothing to match.
    unlinked = [
        paper
        for paper in (
            storage.papers.with_status(name, PaperStatus.UNLINKED) if observed.new else []
        )
        if paper.arxiv_id is None
    ]
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
        baseline=baseline or pending,
        pending=pending,
        # Nothing tells the author from namesakes: their co-author groups will.
        basis_margin=None if author.seeds or claims else settings.basis_margin,
        followed=followed,
        # What an author.review_needed says waits in all, should new entries be held.
        candidates=storage.papers.candidate_count(name) if observed.new else 0,
        stories=storage.papers.stories(observed.new) if observed.new else {},
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
