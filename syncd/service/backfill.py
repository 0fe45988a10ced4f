"""Backfill: the versions of a paper syncd never saw, from arXiv's own record.

A paper linked or added at v3, or seen jumping from v2 to v4, has earlier
versions its history lacks.  arXiv serves each version by versioned id
(``2602.09578v1``; API manual 5.1.1) with that version's own metadata and its
``<updated>`` date, so the missing ones are fetched many per request
(``syncd.sources.arxiv.id_list_batches``) and stored as revisions whose source is
``arxiv:vN``.  They are the past: they publish no events and never change a
paper's current record.

Each request's answer is stored in its own transaction.  A request arXiv
refuses is halved until the refused ids stand alone, and the others are
stored (``syncd.domain.refusals``); a version refused a few times in a row is set
aside and asked for again rarely, and a paper waiting for one keeps its
flag.  A request that fails otherwise leaves the stored versions and the
papers' ``backfill_pending`` flags as they are, so the next cycle (or
``syncd backfill`` run again) fetches only what is still missing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import structlog

from syncd.domain.diff import diff_records
from syncd.domain.model import BackfillWrite, NewRevision, VersionGap, VersionRefusal
from syncd.domain.record import Record, versioned_id
from syncd.domain.refusals import ISOLATION_REQUESTS, fetch_isolating
from syncd.domain.vocabulary import RevisionSource
from syncd.errors import Interrupted, StoreError, UpstreamError
from syncd.service.refusals import settle
from syncd.sources.arxiv import ArxivClient, id_list_batches
from syncd.storage import Storage

__all__ = [
    "BackfillPlan",
    "BackfillProgress",
    "backfill_flagged",
    "backfill_writes",
    "plan_backfill",
    "run_backfill",
]

_log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class BackfillPlan:
    """What a backfill will fetch: the papers, and the versioned ids of each request.

    ``refusals`` are the records of refused versions among those asked for;
    ``set_aside`` the missing versions not asked for, since their next try
    has not come.
    """

    gaps: tuple[VersionGap, ...]
    batches: tuple[tuple[str, ...], ...]
    refusals: Mapping[str, VersionRefusal] = field(default_factory=dict)
    set_aside: tuple[VersionRefusal, ...] = ()

    @property
    def papers(self) -> int:
        """Papers whose history lacks versions."""
        return sum(1 for gap in self.gaps if gap.missing)

    @property
    def versions(self) -> int:
        """Versions missing from those histories."""
        return sum(len(gap.missing) for gap in self.gaps)

    @property
    def requests(self) -> int:
        """Requests to arXiv it takes: ``ceil(versions / batch)``, never one per version."""
        return len(self.batches)


@dataclass(frozen=True, slots=True)
class BackfillProgress:
    """How far a backfill has come, reported after each stored answer."""

    papers_done: int
    papers_total: int
    requests_done: int
    requests_total: int
    versions_stored: int
    versions_refused: int = 0


def plan_backfill(
    gaps: Sequence[VersionGap],
    known: Collection[str] = (),
    refusals: Mapping[str, VersionRefusal] | None = None,
    moment: datetime | None = None,
) -> BackfillPlan:
    """The requests for every missing version, by paper then version; ``known`` ids need none.

    A paper's versions are neighbours in the id list, so a request holds
    every version of most of its papers.  Of the versions arXiv refused
    before (``refusals``), those set aside until after ``moment`` (now) are
    left out, and the others go last, so that a refusal again halves a
    request of their own rather than one of versions never refused.
    """
    refusals = refusals or {}
    moment = moment or datetime.now(UTC)
    wanted = [
        ident
        for gap in gaps
        for version in gap.missing
        if (ident := versioned_id(gap.arxiv_id, version)) not in known
    ]
    waiting = tuple(refusals[i] for i in wanted if i in refusals and not refusals[i].due(moment))
    skipped = {r.versioned_id for r in waiting}
    asked = sorted((i for i in wanted if i not in skipped), key=lambda i: i in refusals)
    return BackfillPlan(
        tuple(gaps),
        tuple(tuple(batch) for batch in id_list_batches(asked)),
        {i: refusals[i] for i in asked if i in refusals},
        waiting,
    )


def backfill_writes(
    gaps: Iterable[VersionGap],
    records: Mapping[str, Record],
    anchors: Mapping[tuple[int, int], Record],
) -> list[BackfillWrite]:
    """The revisions of the missing versions found in ``records`` (by versioned id).

    Each is compared with the version before it, fetched alongside or held
    in the history (``anchors``, by paper id and version); v1 has nothing
    before it.
    """
    writes = []
    for gap in gaps:
        revisions = []
        for version in gap.missing:
            record = records.get(versioned_id(gap.arxiv_id, version))
            if record is None:
                continue
            before = records.get(versioned_id(gap.arxiv_id, version - 1)) or anchors.get(
                (gap.paper_id, version - 1)
            )
            change = diff_records(before, record) if before is not None else None
            source = str(RevisionSource.backfilled(version))
            if change:
                revisions.append(NewRevision(record, source, change.kinds, change.changes))
            else:
                revisions.append(NewRevision(record, source))
        writes.append(BackfillWrite(gap.paper_id, tuple(revisions)))
    return writes


def run_backfill(
    storage: Storage,
    client: ArxivClient,
    plan: BackfillPlan,
    *,
    known: Mapping[str, Record] | None = None,
    progress: Callable[[BackfillProgress], None] | None = None,
) -> BackfillProgress:
    """Fetch and store what ``plan`` lacks, one transaction per answer; return the final count.

    ``known`` records (by versioned id, fetched earlier in the cycle) are
    stored without a request.  Refused ids are isolated and counted
    (``syncd.domain.refusals``).  Raises ``UpstreamError`` when a request fails
    otherwise, or refusals outrun the isolation budget, keeping what was
    stored before.
    """
    known = dict(known or {})
    owners = {versioned_id(g.arxiv_id, v): g for g in plan.gaps for v in g.missing}
    # Paper id -> the number of the last request holding one of its versions.
    last_request = {owners[i].paper_id: n for n, b in enumerate(plan.batches, 1) for i in b}
    # Papers needing no request (complete, or known in full) first: their flags clear now.
    stored = _store(storage, [g for g in plan.gaps if g.paper_id not in last_request], known)
    done = _progress(plan, last_request, 0, stored, 0)
    if progress is not None:
        progress(done)
    budget, refused = ISOLATION_REQUESTS, 0
    for number, batch in enumerate(plan.batches, start=1):
        fetched = fetch_isolating(lambda ids: _one_request(client, ids), batch, budget)
        budget -= fetched.isolation_requests
        refused += len(settle(storage.versions, fetched, plan.refusals))
        records = known | {
            versioned_id(r.arxiv_id or "", r.version or 0): r for r in fetched.records
        }
        touched = {owners[ident].paper_id: owners[ident] for ident in batch}
        stored += _store(storage, list(touched.values()), records)
        if fetched.unresolved and fetched.error is not None:
            raise fetched.error
        done = _progress(plan, last_request, number, stored, refused)
        if progress is not None:
            progress(done)
    return done


def _one_request(client: ArxivClient, ids: Sequence[str]) -> list[Record]:
    """The records of versioned ``ids``, which fit one request."""
    return [record for records in client.fetch_versions(ids) for record in records]


def _progress(
    plan: BackfillPlan, last_request: Mapping[int, int], number: int, stored: int, refused: int
) -> BackfillProgress:
    unfinished = sum(1 for last in last_request.values() if last > number)
    return BackfillProgress(
        plan.papers - unfinished, plan.papers, number, plan.requests, stored, refused
    )


def backfill_flagged(
    storage: Storage, client: ArxivClient, known: Mapping[str, Record]
) -> BackfillProgress | None:
    """After a sync's cycles: fill the histories of flagged papers; never fail the sync.

    The cycles' events are already stored.  A failure is logged and the
    flags stay, so the next cycle tries again; a shutdown just stops.
    """
    try:
        gaps = storage.versions.gaps(pending_only=True)
        if not gaps:
            return None
        plan = plan_backfill(gaps, known, storage.versions.refusals())
        with structlog.contextvars.bound_contextvars(backfill=True):
            done = run_backfill(storage, client, plan, known=known)
    except (UpstreamError, StoreError) as exc:
        _log.warning(
            "backfill_failed",
            error=str(exc),
            error_type=type(exc).__name__,
            outcome="the missing versions are fetched again next cycle",
        )
        return None
    except Interrupted:
        _log.info("backfill_interrupted", outcome="the missing versions are fetched next cycle")
        return None
    _log.info(
        "backfill_finished",
        papers=done.papers_done,
        versions=done.versions_stored,
        requests=done.requests_done,
        versions_refused=done.versions_refused,
        versions_set_aside=len(plan.set_aside),
    )
    return done


def _store(storage: Storage, gaps: Sequence[VersionGap], records: Mapping[str, Record]) -> int:
    """Store the versions of ``gaps`` found in ``records`` in one transaction; return how many."""
    if not gaps:
        return 0
    wanted = {
        (gap.paper_id, version - 1)
        for gap in gaps
        for version in gap.missing
        if version > 1
        and versioned_id(gap.arxiv_id, version) in records
        and versioned_id(gap.arxiv_id, version - 1) not in records
    }
    anchors = storage.versions.anchors(wanted) if wanted else {}
    return storage.versions.store(backfill_writes(gaps, records, anchors))
