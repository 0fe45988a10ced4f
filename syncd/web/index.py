"""What every page says about the record as a whole: how syncing goes, and the index's order.

``sync_status`` is the one source of the status strip every page carries
(and of the index's "every sync so far failed"): per followed author the
last good cycle and a failure since, when this process syncs next, and,
with ``[harvest] enabled``, how the OAI-PMH harvester goes (its stored state);
and which arXiv hosts throttle us, until when (``syncd.domain.throttle``).
The next sync is known only to the process that schedules it (``syncd
run``); a web server without the scheduler says it does not know.

``papers_page`` reads a page of any list of papers (the index, an author's,
a group's, the API's), latest change first, searched in the database
(``syncd.storage.paper_lists``), with the link to the next page; ``paper_cursor``
reads the ``after`` cursor such a link carries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from fastapi import HTTPException

from syncd.domain.model import AuthorSyncs, Paper, SyncRun
from syncd.domain.throttle import Cooldown
from syncd.service.app import App
from syncd.storage import HarvestState, PaperCursor, PaperListQuery
from syncd.web.paging import decode_cursor, encode_cursor

__all__ = [
    "MAX_QUERY",
    "STRIP_AUTHORS",
    "NextSync",
    "StripSummary",
    "SyncStatus",
    "paper_cursor",
    "papers_page",
    "sync_status",
]

# When this process runs its next cycle; None while none is scheduled.
NextSync = Callable[[], datetime | None]
# The longest search a page takes (a title is rarely longer).
MAX_QUERY = 100
# The most authors the strip names one by one: a department's hundreds would fill
# a screen before the page begins, so past this it counts them and names only
# those that need a look.
STRIP_AUTHORS = 12
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class StripSummary:
    """The strip's line for many authors: how many, how many whose last cycle succeeded,
    how many failing, and when the latest cycle of any of them succeeded."""

    authors: int
    synced: int
    failing: int
    last_synced: datetime | None


@dataclass(frozen=True, slots=True)
class SyncStatus:
    """How syncing goes: each followed author's cycles, and the next one if this process knows.

    ``scheduled`` is whether this process schedules cycles at all (``syncd
    run``); without it ``next_sync`` is None because it cannot be known here.
    ``harvest`` is the harvester's state, None when it is not enabled.
    ``throttled`` pairs each arXiv host that slows us down with its cooldown.
    """

    authors: tuple[AuthorSyncs, ...]
    scheduled: bool
    next_sync: datetime | None
    harvest: HarvestState | None = None
    throttled: tuple[tuple[str, Cooldown], ...] = ()

    @property
    def listed(self) -> tuple[AuthorSyncs, ...]:
        """The authors the strip names one by one: all of a few; of more than
        ``STRIP_AUTHORS``, those that need a look (failing, syncing now, an id arXiv does
        not know), the others counted in ``summary``."""
        if len(self.authors) <= STRIP_AUTHORS:
            return self.authors
        return tuple(a for a in self.authors if a.failing or a.running or a.unknown_id)

    @property
    def summary(self) -> StripSummary | None:
        """The authors the strip counts instead of naming; None when it names them all."""
        if len(self.authors) <= STRIP_AUTHORS:
            return None
        successes = [a.last_success for a in self.authors if a.last_success is not None]
        failing = sum(a.failing for a in self.authors)
        return StripSummary(
            authors=len(self.authors),
            synced=sum(a.last_success is not None and not a.failing for a in self.authors),
            failing=failing,
            last_synced=max((r.finished_at or r.started_at for r in successes), default=None),
        )

    @property
    def every_sync_failed(self) -> SyncRun | None:
        """The latest failure when no cycle of any author ever succeeded; else None."""
        if any(a.last_success is not None for a in self.authors):
            return None
        failures = [a.last_failure for a in self.authors if a.last_failure is not None]
        return max(failures, key=lambda run: run.id, default=None)


def sync_status(
    found: Sequence[AuthorSyncs],
    followed: Sequence[str],
    next_sync: NextSync | None,
    harvest: HarvestState | None = None,
    cooldowns: Mapping[str, Cooldown] | None = None,
) -> SyncStatus:
    """The status of the ``followed`` authors (in that order) from their runs ``found``,
    of the harvester if ``harvest`` holds its state, and of the arXiv hosts whose
    ``cooldowns`` still slow us down."""
    by_name = {author.author: author for author in found}
    authors = tuple(by_name.get(name, AuthorSyncs(name, None, None, False)) for name in followed)
    when = next_sync() if next_sync is not None else None
    slowed = [(host, c) for host, c in (cooldowns or {}).items() if c.slowed]
    throttled = tuple(sorted(slowed, key=lambda pair: pair[0]))
    return SyncStatus(authors, next_sync is not None, when, harvest, throttled)


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
