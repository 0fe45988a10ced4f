"""Publication lookups: where followed papers were published, and what befell that version.

A run takes the papers due (``Publications.due``: new ones at once, the
others spread over ``[publications] interval``, a changed arXiv record at
once) and looks them up in batches, cheapest and strongest evidence first:

1. arXiv's own record: a DOI or a journal reference is certain, and needs
   no request (``syncd.domain.matching.arxiv_link``);
2. Crossref's relations naming the preprint, in both of their forms, one
   request for a whole batch (``CrossrefClient.linked_works``);
3. OpenAlex, with a key only: one work by its arXiv DOI per paper still
   without a link;
4. a bibliographic search on Crossref, one request per paper still without
   a link, at most once per interval (``wants_search``);
5. the notices (corrections, retractions) on the publications' DOIs, one
   request for the batch.

Each paper's findings are planned by ``plan_publication`` (pure) and written
with their events in one transaction (``Publications.apply``), which writes
nothing when another replica has written that lookup already: nothing is
announced twice.  A source that fails fails the lookups that needed it:
they are written as failed (no link, no event: nothing invented), counted,
logged, and tried again soon; the others go on.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

import structlog

from syncd import metrics
from syncd.config import Settings
from syncd.domain.matching import (
    Lookup,
    Thresholds,
    arxiv_link,
    confirm,
    next_lookup,
    plan_publication,
    reject,
    retry_after_failure,
    wants_search,
)
from syncd.domain.model import Event
from syncd.domain.publications import (
    LinkedWork,
    LinkState,
    MatchLevel,
    Notice,
    PublicationLink,
    PublicationPlan,
    Work,
    normalize_doi,
)
from syncd.domain.record import split_arxiv_id
from syncd.domain.vocabulary import Decision
from syncd.errors import ConflictError, NotFoundError, UpstreamError
from syncd.service.planning import log_events
from syncd.sources.crossref import NOTICE_BATCH, CrossrefClient
from syncd.sources.openalex import OpenAlexClient
from syncd.sources.polite import Plumbing, host_of
from syncd.storage import DuePaper, Storage

__all__ = [
    "PublicationRun",
    "PublicationSources",
    "check_publications",
    "decide_publication",
    "publication_sources",
]

_log = structlog.get_logger(__name__)

# Papers looked up together: as many as one request for their notices takes (their
# links take two: each arXiv id is asked in two forms).
BATCH = NOTICE_BATCH
# Papers one scheduled run looks up at most; the rest wait for the next run.
RUN_LIMIT = 500


@dataclass(frozen=True, slots=True)
class PublicationSources:
    """The sources a run asks: Crossref always, OpenAlex only when a key is set."""

    crossref: CrossrefClient
    openalex: OpenAlexClient | None


@contextmanager
def publication_sources(
    settings: Settings, storage: Storage, sleep: Callable[[float], None] = time.sleep
) -> Iterator[PublicationSources]:
    """The configured sources, each paced on its host (through ``storage``: shared by
    replicas on PostgreSQL) and cooling down when it throttles us, as arXiv's hosts do."""
    publications = settings.publications

    def paced(url: str) -> Plumbing:
        return {
            "pacer": storage.host_pacer(host_of(url)),
            "cooldowns": storage.cooldowns,
            "sleep": sleep,
        }

    with ExitStack() as stack:
        crossref = stack.enter_context(
            CrossrefClient(publications, settings.arxiv, **paced(publications.crossref_url))
        )
        openalex = None
        if publications.openalex_key is not None:
            openalex = stack.enter_context(
                OpenAlexClient(publications, settings.arxiv, **paced(publications.openalex_url))
            )
        yield PublicationSources(crossref, openalex)


@dataclass
class PublicationRun:
    """How one run of lookups went."""

    checked: int = 0
    failed: int = 0
    stale: int = 0  # written by another replica first
    events: list[Event] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every lookup that ran could ask every source it needed."""
        return self.failed == 0


def check_publications(
    storage: Storage,
    sources: PublicationSources,
    settings: Settings,
    *,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    arxiv_ids: Sequence[str] | None = None,
    stop: threading.Event | None = None,
) -> PublicationRun:
    """Look up the papers due now (or ``arxiv_ids``, due or not), batch by batch."""
    run = PublicationRun()
    limit = len(arxiv_ids) if arxiv_ids is not None else RUN_LIMIT
    due = storage.publications.due(now(), limit, arxiv_ids=arxiv_ids)
    lookups = _Lookups(storage, sources, settings, run)
    for start in range(0, len(due), BATCH):
        if stop is not None and stop.is_set():
            break
        lookups.check_batch(due[start : start + BATCH], now())
    if due:
        _log.info(
            "publications_checked",
            checked=run.checked,
            failed=run.failed,
            stale=run.stale,
            events=len(run.events),
        )
    return run


@dataclass
class _Findings:
    """What a batch's requests found, per paper, and which papers a source failed."""

    linked: dict[int, list[LinkedWork]] = field(default_factory=lambda: defaultdict(list))
    searched: dict[int, tuple[Work, ...]] = field(default_factory=dict)
    notices: list[Notice] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)

    def fail(self, papers: Sequence[DuePaper], error: str) -> None:
        for paper in papers:
            self.failed.setdefault(paper.paper_id, error)


@dataclass(frozen=True, slots=True)
class _Lookups:
    """One run's lookups: where they ask, where they write, what they count."""

    storage: Storage
    sources: PublicationSources
    settings: Settings
    run: PublicationRun

    def check_batch(self, batch: Sequence[DuePaper], when: datetime) -> None:
        """Look a batch up: its links, searches and notices, then write each paper."""
        interval = self.settings.publications.interval
        found = _Findings()
        _ask_links(self.sources, [p for p in batch if _needs_links(p)], found)
        to_search = [
            p
            for p in batch
            if p.paper_id not in found.failed
            and wants_search(p.known, _linked(p, found), p.searched_at, when, interval)
        ]
        _search(self.sources.crossref, to_search, found)
        publications = self.settings.publications
        thresholds = Thresholds(publications.accept_score, publications.review_score)
        looked = [p for p in batch if p.paper_id not in found.failed]
        watched = {
            p.paper_id: doi
            for p in looked
            if (doi := _watched_doi(p, _plan(p, found, thresholds))) is not None
        }
        watching = [p for p in looked if p.paper_id in watched]
        _ask_notices(self.sources.crossref, sorted(set(watched.values())), watching, found)
        for paper in batch:
            error = found.failed.get(paper.paper_id)
            if error is None:
                self._write(paper, _plan(paper, found, thresholds), found, when)
            else:
                self._record_failure(paper, error, when)

    def _write(
        self, paper: DuePaper, plan: PublicationPlan, found: _Findings, when: datetime
    ) -> None:
        written = self.storage.publications.apply(
            paper,
            plan,
            checked_at=when,
            due_at=next_lookup(paper.key, when, self.settings.publications.interval),
            searched=paper.paper_id in found.searched,
        )
        if written is None:
            self.run.stale += 1
            return
        self.run.checked += 1
        self.run.events.extend(written)
        log_events(written)

    def _record_failure(self, paper: DuePaper, error: str, when: datetime) -> None:
        interval = self.settings.publications.interval
        self.storage.publications.failed(
            paper,
            error=error,
            when=when,
            retry_at=retry_after_failure(paper.failures + 1, when, interval),
        )
        self.run.failed += 1
        self.run.errors.append(f"{paper.arxiv_id}: {error}")


def _linked(paper: DuePaper, found: _Findings) -> bool:
    """Whether this lookup found a certain link with a DOI: then there is nothing to search."""
    return bool(found.linked[paper.paper_id]) or not _needs_links(paper)


def _needs_links(paper: DuePaper) -> bool:
    """Whether a paper is asked for links: not when arXiv's own record gives its DOI, nor
    when its publication is already a certain link with a DOI, which nothing outranks
    (``strength``): such a paper is watched for notices only."""
    own = arxiv_link(paper.record)
    if own is not None and own.doi is not None:
        return False
    current = paper.known.current
    return (
        current is None or current.doi is None or current.evidence.level is MatchLevel.BIBLIOGRAPHIC
    )


def _ask_links(sources: PublicationSources, papers: Sequence[DuePaper], found: _Findings) -> None:
    """Crossref's relations for the batch in one request, then OpenAlex per unlinked paper."""
    if not papers:
        return
    by_id = {_bare(p.arxiv_id): p for p in papers}
    try:
        linked = sources.crossref.linked_works(list(by_id))
    except UpstreamError as exc:
        _source_failed("crossref", "link", exc, papers, found)
    else:
        metrics.observe_publication_request("crossref", "link", ok=True)
        for work in linked:
            paper = by_id.get(_bare(work.arxiv_id))
            if paper is not None:
                found.linked[paper.paper_id].append(work)
    openalex = sources.openalex
    if openalex is None:
        return
    for paper in papers:
        if paper.paper_id in found.failed or found.linked[paper.paper_id]:
            continue
        try:
            merged = openalex.linked_work(_bare(paper.arxiv_id))
        except UpstreamError as exc:
            _source_failed("openalex", "link", exc, [paper], found)
            continue
        metrics.observe_publication_request("openalex", "link", ok=True)
        if merged is not None:
            found.linked[paper.paper_id].append(merged)


def _search(crossref: CrossrefClient, papers: Sequence[DuePaper], found: _Findings) -> None:
    """One bibliographic search per paper: its title, authors and first version's year."""
    for paper in papers:
        record = paper.record
        year = int(record.published[:4]) if record.published else None
        try:
            works = crossref.search(record.title or "", record.authors, year)
        except UpstreamError as exc:
            _source_failed("crossref", "search", exc, [paper], found)
            continue
        metrics.observe_publication_request("crossref", "search", ok=True)
        found.searched[paper.paper_id] = tuple(works)


def _ask_notices(
    crossref: CrossrefClient,
    dois: Sequence[str],
    papers: Sequence[DuePaper],
    found: _Findings,
) -> None:
    """The notices on the publications of ``papers`` (``dois``), in one request."""
    if not dois:
        return
    try:
        found.notices = crossref.notices(dois)
    except UpstreamError as exc:
        _source_failed("crossref", "notices", exc, papers, found)
        return
    metrics.observe_publication_request("crossref", "notices", ok=True)


def _source_failed(
    source: str, kind: str, exc: UpstreamError, papers: Sequence[DuePaper], found: _Findings
) -> None:
    metrics.observe_publication_request(source, kind, ok=False)
    error = f"{source} {kind} lookup failed: {exc}"
    _log.warning(
        "publication_source_failed",
        source=source,
        kind=kind,
        papers=len(papers),
        error=str(exc),
        error_type=type(exc).__name__,
    )
    found.fail(papers, error)


def _plan(paper: DuePaper, found: _Findings, thresholds: Thresholds) -> PublicationPlan:
    lookup = Lookup(
        linked=tuple(found.linked[paper.paper_id]),
        searched=found.searched.get(paper.paper_id),
        notices=tuple(found.notices),
    )
    return plan_publication(paper.record, paper.known, lookup, thresholds, quiet=paper.quiet)


def _watched_doi(paper: DuePaper, plan: PublicationPlan) -> str | None:
    """The DOI of the paper's publication once ``plan`` is written: its notices are watched."""
    current: PublicationLink | None = next(
        (link for link in plan.links if link.state in _ANNOUNCED), paper.known.current
    )
    return current.doi if current is not None else None


_ANNOUNCED = (LinkState.ACCEPTED, LinkState.CONFIRMED)


def _bare(arxiv_id: str) -> str:
    """An arXiv id without its version: what relations and OpenAlex name."""
    return split_arxiv_id(arxiv_id)[0]


def decide_publication(
    storage: Storage, paper: str, doi: str, decision: Decision, when: datetime
) -> list[Event]:
    """A person's word on a link of ``paper`` (its key, or its arXiv id in any form people
    paste) to ``doi``: a confirmed candidate is announced; a rejected link, candidate or
    current, never comes back.

    ``doi`` may be ``journal-ref`` (arXiv's journal reference without a DOI).  A
    link the paper does not have, or one in a state the decision does not apply
    to, is a ``ConflictError`` that says why.
    """
    found = storage.papers.find(paper)
    if found is None:
        raise NotFoundError(f"no paper with key or arXiv id {paper!r}")
    paper_id, known = storage.publications.known(found.key)
    key = normalize_doi(doi) or doi.strip().lower()
    decide = confirm if decision == Decision.CONFIRMED else reject
    try:
        plan = decide(known, key)
    except ValueError as exc:
        raise ConflictError(f"{paper}: {exc}") from None
    events = storage.publications.decide(paper_id, plan, when=when)
    log_events(events)
    return events
