"""Baselines from the harvest: the authors added before a pass started, baselined when it ends.

While harvesting, a new author costs no name query.  Each page of a pass
stores the records that may be theirs as candidates awaiting the pass
(``syncd.domain.baselines``), announcing nothing.  When a pass completes,
every author added before it began (before it read the followed authors,
by this machine's clock) is covered by it: every page was planned for them,
and all that changed on arXiv since its ``from`` day has been listed.  Then:

* an author the pass named no paper of, with no feed of their own, is dated
  as baselined in one statement for all of them, without an event (as a
  first sync that finds nothing);
* any other is baselined alone, as a first sync would be: their own feed is
  read when they have an ORCID iD or arXiv author id (their claims), the
  papers held for the pass and the claims are decided together by the
  identity rules (claims, ``include_ids``, the co-author basis), quietly,
  and one ``author.added`` announces them.

An author added after the pass started waits for the next pass.  One whose
baseline fails (their feed could not be read) waits too, for the next pass;
arXiv throttling us stops the feeds until then.  The day the pass listed
from is kept with the baseline: a later sweep's older papers are the
baseline's (``syncd.domain.baselines.quiet_before``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime

import structlog

from syncd.config import Settings
from syncd.domain.attribution import NameIndex
from syncd.domain.authors import Author
from syncd.domain.model import Event
from syncd.domain.planner import Observed
from syncd.domain.record import Record
from syncd.domain.vocabulary import PaperStatus
from syncd.errors import ConflictError, StoreError, Throttled, UpstreamError
from syncd.service.claims import read_feed
from syncd.service.planning import plan_author
from syncd.service.turns import until_fresh
from syncd.sources.arxiv import ArxivClient
from syncd.storage import Storage

__all__ = ["Baselined", "baseline_covered", "baselined_only"]

_log = structlog.get_logger(__name__)

# The papers an author waiting for the pass may hold: candidates awaiting it, and the
# ones ``include_ids`` or a claim made theirs at once.
_HELD = (PaperStatus.CANDIDATE, PaperStatus.TRACKED)


def baseline_covered(
    storage: Storage,
    client: ArxivClient,
    settings: Settings,
    *,
    since: date,
    begun: datetime,
    authors: Mapping[str, Author],
    followed: NameIndex,
    fetched: dict[str, Record],
) -> list[Event]:
    """Baseline every author the pass from ``since`` covered: those added by ``begun``, this
    machine's clock before the pass read the followed authors (see the module's doc);
    returns the ``author.added`` events published.

    ``authors`` are the followed authors this harvest read; one added since
    waits for the next pass.
    """
    unheld = storage.baselines.baseline_unheld(sorted(authors), begun, since)
    events: list[Event] = []
    failed = 0
    for name in storage.baselines.awaiting(begun):
        author = authors.get(name)
        if author is None:
            continue  # added after this harvest read the followed authors
        try:
            events += _baseline(
                storage, client, settings, author, since=since, followed=followed, fetched=fetched
            )
        except Throttled as exc:
            _log.warning("harvest_baselines_deferred", author=name, reason=str(exc))
            break
        except (UpstreamError, StoreError, ConflictError) as exc:
            failed += 1
            _log.warning("harvest_baseline_failed", author=name, error=str(exc))
    _log.info("harvest_baselines", unheld=unheld, announced=len(events), failed=failed)
    return events


@dataclass(frozen=True, slots=True)
class Baselined:
    """The authors a round of sweeps may sweep, and when a harvest pass baselined those it
    did: that baseline was their slot's look at arXiv, their first sweep comes in the next."""

    authors: list[Author]
    by_harvest: Mapping[str, datetime]


def baselined_only(storage: Storage, authors: Sequence[Author]) -> Baselined:
    """``authors`` but those awaiting a harvest's baseline: while harvesting, no name query
    for them (all of them when the database cannot say; each cycle then fails on its own)."""
    try:
        baselined = storage.baselines.baselined()
    except StoreError:
        return Baselined(list(authors), {})
    taken = [a for a in authors if a.name in baselined]
    if len(taken) < len(authors):
        _log.info("sweeps_awaiting_harvest", authors=len(authors) - len(taken))
    return Baselined(taken, {name: at for name, at in baselined.items() if at is not None})


def _baseline(
    storage: Storage,
    client: ArxivClient,
    settings: Settings,
    author: Author,
    *,
    since: date,
    followed: NameIndex,
    fetched: dict[str, Record],
) -> list[Event]:
    """One author's baseline from what the pass held for them and their own feed."""
    name = author.name
    state = storage.baselines.state(name)
    reading = read_feed(client, author, state, datetime.now(UTC))
    claims = reading.claims or []

    def attempt() -> list[Event]:
        read_seq = storage.papers.write_seqs([name])[name]
        held = [p.record for status in _HELD for p in storage.papers.with_status(name, status)]
        # Every paper decided again, together, as a first sync's new entries are.
        entries = {r.arxiv_id: r for r in held if r.arxiv_id not in author.exclude_ids}
        entries |= {r.arxiv_id: r for r in claims}
        observed = Observed(
            seen={i for i in entries if i}, new={i: r for i, r in entries.items() if i}
        )
        plan = plan_author(
            storage,
            client,
            author,
            observed,
            fetched=fetched,
            settings=settings.sync,
            complete=False,
            claims=[r.arxiv_id or "" for r in claims],
            baseline=True,
            followed=followed,
        )
        assert plan.baseline is not None  # a baseline's plan always sums it up
        changes = plan.baseline.changes(
            name, author.orcid, author.arxiv_author_id, reading.unknown_id
        )
        return storage.apply_harvest_baseline(
            name,
            plan.writes,
            changes,
            since=since,
            read_seq=read_seq,
            claims=None if reading.claims is None else [r.arxiv_id or "" for r in claims],
            unknown_feed=reading.unknown_id,
        )

    return until_fresh(attempt, event="harvest_baseline_replanned")
