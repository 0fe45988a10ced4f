"""The OAI-PMH harvest: arXiv's changes of the day, for every followed author at once.

A harvest lists the records changed since its ``from`` date (``ListRecords``
in arXivRaw, per configured set), page by page.  Each page is planned by the
same planner as a sync cycle: a record of a paper an author has is that
paper seen again (new version, field changes, withdrawal); a record of an
unknown paper goes to the followed authors it may be by (an index of
folded names, ``syncd.domain.attribution``: never to one whose name it only
resembles), and the identity rules decide whether it is theirs or a
candidate held with its reason.  A harvest sees only what changed, so it
counts no absence: removals are the periodic API sweep's.  With ``[harvest]
enabled``, an author without a baseline is planned for too: their records
wait, quietly, for the pass's end, which baselines them
(``syncd.service.baselines``).

Progress is durable: a page's writes, events and deliveries are stored in
one transaction with the token of the next page, so a harvest killed at any
point resumes without losing or doubling an event; ``from`` advances only
when a harvest completes, to the date of its first responseDate (never past
this machine's clock, never back before ``from``).  An expired token
restarts the current set from ``from``: the records already applied come
again with the hashes already stored, and announce nothing.  One replica
harvests at a time (``Harvests.claim``).

A harvest ends, whatever the server sends: a token it already sent in this
set, a page listing the same records as one before it in this set, or more
than ``MAX_PAGES`` pages in one run stop it with a recorded failure (the
pages applied stay applied, and the next harvest resumes where it stopped).
Cycles run beside a harvest, in this process or another replica: a page is
planned from each of its authors' write sequence (``Papers.write_seqs``),
and its apply refuses to go on if a cycle wrote one of those authors'
papers since (``StalePlan``); the page is then planned again from what is
stored, so one change is never announced twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

import structlog

from syncd import metrics
from syncd.config import Settings
from syncd.domain.attribution import NameIndex
from syncd.domain.authors import Author
from syncd.domain.model import Event, PaperWrite
from syncd.domain.planner import Observed
from syncd.domain.record import Record
from syncd.errors import (
    BadResumptionToken,
    FeedError,
    Interrupted,
    PermanentUpstreamError,
    SyncdError,
)
from syncd.faults import fault_point
from syncd.service.authors import followed_authors
from syncd.service.backfill import backfill_flagged
from syncd.service.baselines import baseline_covered
from syncd.service.planning import log_events, observe, plan_author
from syncd.service.turns import until_fresh
from syncd.sources.arxiv import ArxivClient
from syncd.sources.oai import OaiClient, OaiEntry, OaiPage
from syncd.storage import HarvestProgress, HarvestState, Storage

__all__ = ["MAX_PAGES", "HarvestResult", "harvest"]

_log = structlog.get_logger(__name__)

# Expired tokens restart the current set; more than this in one harvest is a loop.
MAX_RESTARTS = 3
# One run's pages.  At arXiv's 3,500 records a page (RECORDS_LIMIT of arXiv/oaipmh;
# 1,000 in its 2015 service) that is one to 3.5 million records, more than all of
# arXiv listed from its first datestamp (``--from 2005-09-16``, about 2.5 million in
# some 715 pages): a run past it is a list that does not end, and the next run
# resumes where it stopped.
MAX_PAGES = 1000
# Unreadable records nobody follows named in one log line; the rest are counted.
_NAMED_SKIPS = 10


@dataclass
class HarvestResult:
    """How one harvest went; ``claimed`` is false when another replica was harvesting."""

    claimed: bool = True
    complete: bool = False
    pages: int = 0
    records: int = 0
    requests: int = 0
    events: list[Event] = field(default_factory=list)
    planned_events: int = 0
    from_date: date | None = None
    skipped: int = 0  # records that could not be read, of papers nobody here follows
    # How far the current list has come, for a progress bar: its records through the last
    # page and its size when arXiv's token counts them, the last page's last datestamp.
    listed: int | None = None
    list_size: int | None = None
    reached: str | None = None


@dataclass(frozen=True, slots=True)
class _Followed:
    """The authors a harvest plans for, by name, and the index of every followed name.

    Every followed author is in the index, baselined or not: whom a name could
    be does not wait for their first sync.  ``pending``: the authors planned for
    whose baseline is a pass's (``syncd.service.baselines``); ``begun``: this
    machine's clock before the pass in progress read the followed authors, so
    every author added by then is in every page's plan (None: a pass resumed
    from a syncd that did not say, which baselines nobody).
    """

    authors: dict[str, Author]
    index: NameIndex
    pending: frozenset[str] = frozenset()
    begun: datetime | None = None

    @classmethod
    def read(cls, storage: Storage, settings: Settings, state: HarvestState) -> _Followed:
        """The followed authors now: those baselined, and while harvesting the others too."""
        begun = state.pass_started_at if state.in_progress else datetime.now(UTC)
        baselined = storage.baselines.baselined()
        everyone = followed_authors(storage, settings)
        # While harvesting, a new author's baseline is a pass's; else their first sync's.
        planned = (
            everyone if settings.harvest.enabled else [a for a in everyone if a.name in baselined]
        )
        pending = frozenset(a.name for a in planned if a.name not in baselined)
        index = NameIndex([a.name for a in everyone])
        return cls({a.name: a for a in planned}, index, pending, begun)

    @property
    def baselined(self) -> list[Author]:
        """The authors whose baseline is done."""
        return [a for name, a in self.authors.items() if name not in self.pending]


@dataclass(frozen=True, slots=True)
class _PagePlan:
    """One page's writes by author, and the write sequences they were planned from."""

    writes: list[tuple[str, Sequence[PaperWrite]]]
    read_seqs: dict[str, int]
    skipped: list[OaiEntry]

    @property
    def events(self) -> int:
        return sum(1 for _, writes in self.writes for w in writes if w.event_type)


@dataclass
class _Ending:
    """What makes a harvest end whatever the server sends (see the module's doc).

    Tokens and pages are remembered per set, from its first page: a set
    listed again (an expired token) may send its pages again.
    """

    max_pages: int
    pages: int = 0
    tokens: set[str] = field(default_factory=set)
    # Each page's records as a digest: kept whole, the pages of a 2.5-million-record list
    # held every id and datestamp of it (hundreds of MiB); its 715 digests are 11 KiB.
    listed: set[bytes] = field(default_factory=set)

    def new_list(self, token: str | None = None) -> None:
        """A set is listed from its start, or from ``token`` (a harvest resumed)."""
        self.tokens = {token} if token else set()
        self.listed = set()

    def check(self, page: OaiPage) -> None:
        """Count the page; ``FeedError`` if it goes back to where this list has been."""
        self.pages += 1
        if page.token is None:
            return  # the list ends here
        if page.token in self.tokens:
            raise FeedError(
                f"arXiv sent the resumptionToken {page.token[:60]!r} again (page"
                f" {self.pages} of this run): its list loops, stopping here"
            )
        records = _records_digest(page)
        if records in self.listed:
            raise FeedError(
                f"page {self.pages} of this run lists the same {len(page.entries)} records as"
                " one before it under a new token: its list loops, stopping here"
            )
        self.tokens.add(page.token)
        self.listed.add(records)

    def stop(self) -> None:
        """Raise if this run has had its pages and there are more."""
        if self.pages >= self.max_pages:
            raise PermanentUpstreamError(
                f"stopped after {self.pages} pages in one run, more than a year of arXiv's"
                " changes (a list that does not end?); the next harvest resumes from here"
            )


def _records_digest(page: OaiPage) -> bytes:
    """What tells a page's records from another page's: a digest of their ids and datestamps."""
    listed = "\x00".join(f"{entry.arxiv_id} {entry.datestamp}" for entry in page.entries)
    return hashlib.blake2b(listed.encode(), digest_size=16).digest()


def harvest(
    storage: Storage,
    client: ArxivClient,
    settings: Settings,
    *,
    since: date | None = None,
    dry_run: bool = False,
    on_page: Callable[[HarvestResult], None] | None = None,
    max_pages: int = MAX_PAGES,
) -> HarvestResult:
    """Run one harvest to its end (or resume the one interrupted); see the module's doc.

    ``since`` starts it from that date instead (``syncd harvest --from``);
    ``dry_run`` plans every page and stores nothing; ``max_pages`` bounds the
    pages of this run.  Raises ``UpstreamError`` or ``StoreError`` when it
    stops; the pages applied so far stay applied, and the failure is recorded
    (``HarvestState.last_error``), an unexpected one too.
    """
    if dry_run:
        state = storage.harvests.state()
        if since is not None:
            state = HarvestState(from_date=since)
        return _run(storage, client, settings, state, max_pages, dry_run=True, on_page=on_page)
    claimed = storage.harvests.claim()
    if claimed is None:
        _log.info("harvest_skipped", reason="another replica is harvesting")
        return HarvestResult(claimed=False)
    failure: str | None = None
    try:
        if since is not None:
            # Only once claimed: another replica's harvest in progress stays its own.
            storage.harvests.start_from(since)
            claimed = HarvestState(from_date=since)
        return _run(storage, client, settings, claimed, max_pages, dry_run=False, on_page=on_page)
    except Exception as exc:
        if not isinstance(exc, Interrupted):  # a shutdown is no failure
            failure = _failure(exc)  # for the pages' status strip, until a harvest completes
        raise
    finally:
        storage.harvests.release(failure)


def _failure(exc: Exception) -> str:
    """What a failed harvest records: our own message, or what a bug raised."""
    if isinstance(exc, SyncdError):
        return str(exc)
    return f"unexpected {type(exc).__name__}: {exc}"


def _run(
    storage: Storage,
    client: ArxivClient,
    settings: Settings,
    state: HarvestState,
    max_pages: int,
    *,
    dry_run: bool,
    on_page: Callable[[HarvestResult], None] | None,
) -> HarvestResult:
    oai = OaiClient(client, settings.harvest)
    followed = _Followed.read(storage, settings, state)
    sets: Sequence[str | None] = settings.harvest.sets or (None,)
    since = state.from_date or _first_from(storage, followed.baselined)
    result = HarvestResult(from_date=since)
    requests_before = client.requests
    set_index, token = (state.set_index, state.token) if state.in_progress else (0, None)
    started = state.started_response_date
    restarts = 0
    fetched: dict[str, Record] = {}
    ending = _Ending(max_pages)
    ending.new_list(token)
    _log.info("harvest_started", oai_from=since.isoformat(), resumed=state.in_progress)
    while set_index < len(sets):
        try:
            page = oai.next_page(token) if token else oai.first_page(since, sets[set_index])
        except BadResumptionToken as exc:
            restarts += 1
            _restart(storage, exc, restarts, sets[set_index], dry_run=dry_run)
            token = None
            ending.new_list()
            continue
        fault_point("harvest.page_fetched")
        ending.check(page)
        started = started or _started(page.response_date, since)
        token = page.token
        following = set_index if token else set_index + 1
        progress = HarvestProgress(
            started,
            following,
            token,
            len(page.entries),
            complete=following == len(sets),
            pass_started_at=followed.begun,
        )
        result.events += _take_page(
            storage,
            client,
            settings,
            page,
            followed=followed,
            progress=progress,
            result=result,
            fetched=fetched,
            dry_run=dry_run,
        )
        if following != set_index:
            ending.new_list()
        set_index = following
        if on_page is not None:
            on_page(result)
        if set_index < len(sets):
            ending.stop()
    result.complete = True
    result.requests = client.requests - requests_before
    if not dry_run:
        _finish(
            storage, client, settings, result, followed=followed, fetched=fetched, started=started
        )
    return result


def _restart(
    storage: Storage, exc: BadResumptionToken, restarts: int, oai_set: str | None, *, dry_run: bool
) -> None:
    """Start the list over after arXiv refused its token; give up after ``MAX_RESTARTS``."""
    if restarts > MAX_RESTARTS:
        raise FeedError(f"{exc}; {MAX_RESTARTS} restarts in one harvest, giving up") from exc
    _log.warning("harvest_restarted", reason=str(exc), oai_set=oai_set)
    if not dry_run:
        storage.harvests.restart()


def _take_page(
    storage: Storage,
    client: ArxivClient,
    settings: Settings,
    page: OaiPage,
    *,
    followed: _Followed,
    progress: HarvestProgress,
    result: HarvestResult,
    fetched: dict[str, Record],
    dry_run: bool,
) -> list[Event]:
    """Plan one page and apply it with ``progress``; plan it again while a cycle wrote one of
    its authors' papers in between (``StalePlan``).  Returns the events published."""

    def plan_and_apply() -> tuple[_PagePlan, list[Event]]:
        plan = _plan_page(storage, client, settings, followed, page, fetched=fetched)
        if dry_run:
            return plan, []
        fault_point("harvest.page_planned")
        return plan, storage.apply_harvest_page(plan.writes, progress, plan.read_seqs)

    plan, events = until_fresh(plan_and_apply, event="harvest_page_replanned")
    if not dry_run:
        metrics.observe_harvest_page(len(page.entries))
    if plan.skipped:
        named = [f"{e.where} {e.problem}" for e in plan.skipped[:_NAMED_SKIPS]]
        _log.warning("harvest_records_unreadable", count=len(plan.skipped), records=named)
    result.pages += 1
    result.records += len(page.entries)
    result.listed = page.cursor + len(page.entries) if page.cursor is not None else None
    result.list_size = page.list_size  # with the cursor, or neither (OaiPage)
    result.reached = page.entries[-1].datestamp if page.entries else result.reached
    result.skipped += len(plan.skipped)
    result.planned_events += plan.events
    return events


def _plan_page(
    storage: Storage,
    client: ArxivClient,
    settings: Settings,
    followed: _Followed,
    page: OaiPage,
    *,
    fetched: dict[str, Record],
) -> _PagePlan:
    """Every author's writes for one page, planned as their cycles would plan these records.

    A record that cannot be read is skipped when nobody here follows it, and
    stops the page (``FeedError``) when someone does.
    """
    live = [entry for entry in page.entries if not entry.deleted]
    owners = storage.papers.owners([entry.arxiv_id for entry in live if entry.arxiv_id])
    mine: dict[str, list[Record]] = {}
    skipped: list[OaiEntry] = []
    for entry in live:
        # Every record of the page: most name nobody, and cost a lookup per name and no set.
        names = followed.index.authors_of(entry.authors)
        held = owners.get(entry.arxiv_id)
        if held:
            names |= held
        if names:
            names &= followed.authors.keys()
        if not names:
            if entry.problem is not None:
                skipped.append(entry)
            continue  # nobody's: most of a day's records, never read whole
        try:
            record = entry.read().as_record()
        except FeedError as exc:
            raise FeedError(f"{exc}; a record followed here: the harvest stops on it") from exc
        for name in names:
            mine.setdefault(name, []).append(record)
    # Before anything of theirs is read: a cycle that writes after this makes the plan stale.
    read_seqs = storage.papers.write_seqs(sorted(mine)) if mine else {}
    plans: list[tuple[str, Sequence[PaperWrite]]] = []
    for name in sorted(mine):
        author = followed.authors[name]
        observed = Observed()
        observe(storage, author, observed, mine[name])
        if not observed.changed and not observed.new:
            continue
        plan = plan_author(
            storage,
            client,
            author,
            observed,
            fetched=fetched,
            settings=settings.sync,
            complete=False,
            pending=name in followed.pending,
            followed=followed.index,
        )
        for note in plan.notes:
            _log.info(note.event, author=name, **note.fields)
        if plan.writes:
            plans.append((name, plan.writes))
    return _PagePlan(plans, read_seqs, skipped)


def _finish(
    storage: Storage,
    client: ArxivClient,
    settings: Settings,
    result: HarvestResult,
    *,
    followed: _Followed,
    fetched: dict[str, Record],
    started: datetime | None,
) -> None:
    """A complete harvest: the baselines of the authors it covered, metrics, log lines, and
    the flagged papers' earlier versions."""
    if followed.pending and followed.begun is not None and result.from_date is not None:
        requests_before = client.requests
        result.events += baseline_covered(
            storage,
            client,
            settings,
            since=result.from_date,
            begun=followed.begun,
            authors=followed.authors,
            followed=followed.index,
            fetched=fetched,
        )
        result.requests += client.requests - requests_before
    log_events(result.events)
    _log.info(
        "harvest_finished",
        pages=result.pages,
        records=result.records,
        events=len(result.events),
        requests=result.requests,
        skipped=result.skipped,
        response_date=started.isoformat() if started else None,
    )
    backfill_flagged(storage, client, fetched)


def _first_from(storage: Storage, authors: Sequence[Author]) -> date:
    """The first harvest's ``from``: the day of the followed authors' earliest complete sync.

    Before it, their cycles know what arXiv holds; with none yet, today.
    """
    first = storage.runs.first_success([a.name for a in authors])
    return (first or datetime.now(UTC)).date()


def _started(response_date: datetime, since: date) -> datetime:
    """The moment the next ``from`` is taken from: arXiv's responseDate, but never past
    this machine's clock (a server clock ahead would skip changes) nor before ``since``."""
    floor = datetime.combine(since, datetime.min.time(), UTC)
    return max(floor, min(response_date, datetime.now(UTC)))
