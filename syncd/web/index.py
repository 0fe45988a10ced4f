"""What every page says about the record as a whole: how syncing goes, and the index's order.

``sync_status`` is the one source of the status strip every page carries
(and of the index's "every sync so far failed"): one line counting the
followed authors synced, failing and never synced (``SyncRuns.tally``, an
aggregate in the database: a page never reads every author), when this
process syncs next, and, with ``[harvest] enabled``, how the OAI-PMH harvester
goes (its stored state); and which arXiv hosts throttle us, until when
(``syncd.domain.throttle``).  Its details are on ``/authors``.  The next sync
is known only to the process that schedules it (``syncd run``); a web server
without the scheduler says it does not know.

``search`` and ``by_latest_change`` order and narrow the index: pure
functions over the papers storage hands out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from syncd.domain.model import LatestChange, Paper, SyncRun, SyncTally
from syncd.domain.record import normalize_name, split_arxiv_id
from syncd.domain.throttle import Cooldown
from syncd.storage import HarvestState

__all__ = [
    "MAX_QUERY",
    "STRIP_AUTHORS",
    "NextSync",
    "SyncStatus",
    "by_latest_change",
    "search",
    "sync_status",
]

# When this process runs its next cycle; None while none is scheduled.
NextSync = Callable[[], datetime | None]
# The longest search a page takes (a title is rarely longer).
MAX_QUERY = 100
# The most authors the index links one by one under its papers.
STRIP_AUTHORS = 12
_NEVER = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class SyncStatus:
    """How syncing goes: the followed authors' cycles counted, and the next one if this
    process knows.

    ``group`` names the group whose members ``tally`` counts (a group's pages),
    None for every followed author.  ``scheduled`` is whether this process
    schedules cycles at all (``syncd run``); without it ``next_sync`` is None
    because it cannot be known here.  ``harvest`` is the harvester's state,
    None when it is not enabled.  ``throttled`` pairs each arXiv host that
    slows us down with its cooldown.
    """

    tally: SyncTally
    scheduled: bool
    next_sync: datetime | None
    harvest: HarvestState | None = None
    throttled: tuple[tuple[str, Cooldown], ...] = ()
    group: str | None = None

    @property
    def every_sync_failed(self) -> SyncRun | None:
        """The latest failure when no cycle of any author ever succeeded; else None."""
        return self.tally.all_failed

    @property
    def throttling(self) -> Cooldown | None:
        """The cooldown that lasts longest of the hosts throttling us now; None if none is."""
        now = [c for _, c in self.throttled if c.throttling]
        return max(now, key=lambda c: c.not_before or _NEVER, default=None)


def sync_status(
    tally: SyncTally,
    next_sync: NextSync | None,
    harvest: HarvestState | None = None,
    cooldowns: Mapping[str, Cooldown] | None = None,
    group: str | None = None,
) -> SyncStatus:
    """The status of the authors ``tally`` counts (the members of ``group``, when given),
    of the harvester if ``harvest`` holds its state, and of the arXiv hosts whose
    ``cooldowns`` still slow us down."""
    when = next_sync() if next_sync is not None else None
    slowed = [(host, c) for host, c in (cooldowns or {}).items() if c.slowed]
    throttled = tuple(sorted(slowed, key=lambda pair: pair[0]))
    return SyncStatus(tally, next_sync is not None, when, harvest, throttled, group)


def search(papers: Sequence[Paper], query: str) -> list[Paper]:
    """The papers whose title, arXiv id, key or authors hold every word of ``query``.

    Case, accents and punctuation are folded on both sides, so ``flexmarl``
    and ``zhida jiang`` find what a reader means.  A query that is an arXiv id
    (``arXiv:2602.09578v2``, an abstract page's address) finds that paper.
    """
    query = query[:MAX_QUERY]
    arxiv_id = _arxiv_id(query)
    if arxiv_id is not None:
        return [p for p in papers if p.arxiv_id == arxiv_id]
    terms = normalize_name(query).split()
    if not terms:
        return list(papers)
    return [p for p in papers if all(term in _searched_text(p) for term in terms)]


def by_latest_change(papers: Sequence[Paper], changes: Mapping[int, LatestChange]) -> list[Paper]:
    """Newest change first; at the same moment, and for papers with none, by key."""
    by_key = sorted(papers, key=lambda p: p.key)
    return sorted(by_key, key=lambda p: _changed_at(p, changes), reverse=True)


def _changed_at(paper: Paper, changes: Mapping[int, LatestChange]) -> datetime:
    change = changes.get(paper.id)
    return change.at if change is not None else _NEVER


def _arxiv_id(query: str) -> str | None:
    """The arXiv id ``query`` names, without its version; None when it is no id."""
    text = query.strip()
    if text[:6].lower() == "arxiv:":
        text = text[6:]
    try:
        return split_arxiv_id(text)[0]
    except ValueError:
        return None


def _searched_text(paper: Paper) -> str:
    record = paper.record
    words = [
        record.title or "",
        paper.arxiv_id or "",
        paper.key,
        paper.author,
        *paper.authors,
        *record.authors,
    ]
    return normalize_name(" ".join(words))
