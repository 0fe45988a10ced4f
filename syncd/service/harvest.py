"""The OAI-PMH harvest: arXiv's changes of the day, for every followed author at once.

A harvest lists the records changed since its ``from`` date (``ListRecords``
in arXivRaw, per configured set), page by page.  Each page is planned by the
same planner as a sync cycle: a record of a paper an author has is that
paper seen again (new version, field changes, withdrawal); a record of an
unknown paper goes to the followed authors it may be by (an index of
folded names, ``syncd.domain.attribution``: never to one whose name it only
resembles), and the identity rules decide whether it is theirs or a
candidate held with its reason.  A harvest sees only what changed, so it
counts no absence: removals are the periodic API sweep's.

Progress is durable: a page's writes, events and deliveries are stored in
one transaction with the token of the next page, so a harvest killed at any
point resumes without losing or doubling an event; ``from`` advances only
when a harvest completes, to the date of its first responseDate.  An expired
token restarts the current set from ``from``: the records already applied
come again with the hashes already stored, and announce nothing.  One
replica harvests at a time (``Harvests.claim``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

import structlog

from syncd import metrics
from syncd.config import AuthorSettings, Settings
from syncd.domain.attribution import NameIndex
from syncd.domain.model import Event, PaperWrite
from syncd.domain.planner import Observed
from syncd.domain.record import Record
from syncd.errors import BadResumptionToken, FeedError, StoreError, UpstreamError
from syncd.faults import fault_point
from syncd.service.authors import followed_settings
from syncd.service.backfill import backfill_flagged
from syncd.service.sync import observe, plan_author
from syncd.sources.arxiv import ArxivClient
from syncd.sources.oai import OaiClient, OaiPage
from syncd.storage import HarvestProgress, HarvestState, Storage

__all__ = ["HarvestResult", "harvest"]

_log = structlog.get_logger(__name__)

# Expired tokens restart the current set; more than this in one harvest is a loop.
MAX_RESTARTS = 3


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


@dataclass(frozen=True, slots=True)
class _Followed:
    """The authors a harvest plans for, by name, and the index of every followed name.

    Every followed author is in the index, baselined or not: whom a name could
    be does not wait for their first sync.
    """

    authors: dict[str, AuthorSettings]
    index: NameIndex

    @classmethod
    def of(cls, authors: Sequence[AuthorSettings], everyone: Sequence[str]) -> _Followed:
        return cls({a.name: a for a in authors}, NameIndex(everyone))


def harvest(
    storage: Storage,
    client: ArxivClient,
    settings: Settings,
    *,
    since: date | None = None,
    dry_run: bool = False,
    on_page: Callable[[HarvestResult], None] | None = None,
) -> HarvestResult:
    """Run one harvest to its end (or resume the one interrupted); see the module's doc.

    ``since`` starts it from that date instead (``syncd harvest --from``);
    ``dry_run`` plans every page and stores nothing.  Raises ``UpstreamError``
    or ``StoreError`` when it stops; the pages applied so far stay applied.
    """
    if dry_run:
        state = storage.harvests.state()
        if since is not None:
            state = HarvestState(from_date=since)
        return _run(storage, client, settings, state, dry_run=True, on_page=on_page)
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
        return _run(storage, client, settings, claimed, dry_run=False, on_page=on_page)
    except (UpstreamError, StoreError) as exc:
        failure = str(exc)  # for the pages' status strip, until a harvest completes
        raise
    finally:
        storage.harvests.release(failure)


def _run(
    storage: Storage,
    client: ArxivClient,
    settings: Settings,
    state: HarvestState,
    *,
    dry_run: bool,
    on_page: Callable[[HarvestResult], None] | None,
) -> HarvestResult:
    oai = OaiClient(client, settings.harvest)
    # Authors whose baseline is done: a first sync is the API's (it announces nothing).
    baselined = storage.baselines.baselined()
    everyone = followed_settings(storage, settings)
    authors = [a for a in everyone if a.name in baselined]
    followed = _Followed.of(authors, [a.name for a in everyone])
    sets: Sequence[str | None] = settings.harvest.sets or (None,)
    since = state.from_date or _first_from(storage, authors)
    result = HarvestResult(from_date=since)
    requests_before = client.requests
    set_index, token = (state.set_index, state.token) if state.in_progress else (0, None)
    started = state.started_response_date
    restarts = 0
    fetched: dict[str, Record] = {}
    _log.info("harvest_started", oai_from=since.isoformat(), resumed=state.in_progress)
    while set_index < len(sets):
        try:
            page = oai.next_page(token) if token else oai.first_page(since, sets[set_index])
        except BadResumptionToken as exc:
            restarts += 1
            if restarts > MAX_RESTARTS:
                raise FeedError(
                    f"{exc}; {MAX_RESTARTS} restarts in one harvest, giving up"
                ) from exc
            _log.warning("harvest_restarted", reason=str(exc), oai_set=sets[set_index])
            if not dry_run:
                storage.harvests.restart()
            token = None
            continue
        fault_point("harvest.page_fetched")
        started = started or page.response_date or _now_stamp()
        token = page.token
        following = set_index if token else set_index + 1
        plans = _plan_page(storage, client, settings, followed, page, fetched=fetched)
        result.pages += 1
        result.records += len(page.entries)
        result.planned_events += sum(1 for _, ws in plans for w in ws if w.event_type)
        if not dry_run:
            progress = HarvestProgress(
                started, following, token, len(page.entries), complete=following == len(sets)
            )
            result.events += storage.apply_harvest_page(plans, progress)
            metrics.observe_harvest_page(len(page.entries))
        set_index = following
        if on_page is not None:
            on_page(result)
    result.complete = True
    result.requests = client.requests - requests_before
    if not dry_run:
        _finish(storage, client, result, fetched, started)
    return result


def _plan_page(
    storage: Storage,
    client: ArxivClient,
    settings: Settings,
    followed: _Followed,
    page: OaiPage,
    *,
    fetched: dict[str, Record],
) -> list[tuple[str, Sequence[PaperWrite]]]:
    """Every author's writes for one page, planned as their cycles would plan these records."""
    live = [entry for entry in page.entries if not entry.deleted]
    owners = storage.papers.owners([entry.arxiv_id for entry in live])
    mine: dict[str, list[Record]] = {}
    for entry in live:
        names = owners.get(entry.arxiv_id, set()) | followed.index.authors_of(entry.authors)
        names &= followed.authors.keys()
        if not names:
            continue  # nobody's: most of a day's records, never read whole
        record = entry.read().as_record()
        for name in names:
            mine.setdefault(name, []).append(record)
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
            followed=followed.index,
        )
        for note in plan.notes:
            _log.info(note.event, author=name, **note.fields)
        if plan.writes:
            plans.append((name, plan.writes))
    return plans


def _finish(
    storage: Storage,
    client: ArxivClient,
    result: HarvestResult,
    fetched: dict[str, Record],
    started: str | None,
) -> None:
    """A complete harvest: metrics, log lines, and the flagged papers' earlier versions."""
    metrics.observe_events((e.type, e.kinds) for e in result.events)
    for event in result.events:
        _log.info(
            "paper_changed",
            event_type=event.type,
            event_id=event.id,
            author=event.author,
            arxiv_id=event.arxiv_id,
            kinds=list(event.kinds),
        )
    _log.info(
        "harvest_finished",
        pages=result.pages,
        records=result.records,
        events=len(result.events),
        requests=result.requests,
        response_date=started,
    )
    backfill_flagged(storage, client, fetched)


def _first_from(storage: Storage, authors: Sequence[AuthorSettings]) -> date:
    """The first harvest's ``from``: the day of the followed authors' earliest complete sync.

    Before it, their cycles know what arXiv holds; with none yet, today.
    """
    first = storage.runs.first_success([a.name for a in authors])
    return (first or datetime.now(UTC)).date()


def _now_stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
