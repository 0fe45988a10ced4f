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

``papers_page`` reads a page of any list of papers (the index, an author's,
a group's, the API's), latest change first, searched in the database
(``syncd.storage.paper_lists``), with the link to the next page; ``paper_cursor``
reads the ``after`` cursor such a link carries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from fastapi import HTTPException

from syncd.domain.model import Paper, SyncRun, SyncTally
from syncd.domain.throttle import Cooldown
from syncd.service.app import App
from syncd.storage import HarvestState, PaperCursor, PaperListQuery
from syncd.web.paging import decode_cursor, encode_cursor

__all__ = [
    "MAX_QUERY",
    "STRIP_AUTHORS",
    "NextSync",
    "SyncStatus",
    "paper_cursor",
    "papers_page",
    "sync_status",
]

# When this process runs its next cycle; None while none is scheduled.
NextSync = Callable[[], datetime | None]
# The longest search a page takes (a title is rarely longer).
MAX_QUERY = 100
# The most authors the index links one by one under its papers.
STRIP_AUTHORS = 12
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
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


def paper_cursor(after: str | None) -> PaperCursor | None:
    """The row a papers list's ``after`` names (none, the first page, when it is empty);
    a 400 when it names none."""
    if not after:
        return None
    micros, paper_id = decode_cursor(after, int, int)
    try:
        return _EPOCH + timedelta(microseconds=int(micros)), int(paper_id)
    except OverflowError:
        raise HTTPException(400, "bad parameter 'after': not a cursor this list gave") from None


def papers_page(app: App, query: PaperListQuery) -> tuple[list[Paper], str | None]:
    """A page of papers, latest change first, and the cursor of the next page (None when
    this is the last), for ``paging.next_link``: its last row."""
    found = app.storage.paper_lists.page(query)
    if found.next is None:
        return found.papers, None
    at, paper_id = found.next
    return found.papers, encode_cursor((at - _EPOCH) // timedelta(microseconds=1), paper_id)
