"""The domain's frozen types: what storage hands out, what callers hand in, what seeds hold.

A leaf beside ``record`` and ``vocabulary``: plain values, no I/O.  Storage
maps its rows to these (``syncd.storage.rows``) and takes the write
commands; the planner, the renderers and the message builders read them
without loading the database.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from syncd.domain.publications import Notice, PublicationLink
from syncd.domain.record import Record, versioned_id
from syncd.domain.vocabulary import EventType, Origin, PaperStatus, ResultSource, RunStatus

__all__ = [
    "AuthorSyncState",
    "BackfillWrite",
    "EndpointSummary",
    "Event",
    "LatestChange",
    "NewRevision",
    "Paper",
    "PaperDetails",
    "PaperState",
    "PaperWrite",
    "Revision",
    "SeedPaper",
    "SeedRevision",
    "SyncRun",
    "SyncStanding",
    "SyncStats",
    "SyncTally",
    "Truncation",
    "VersionDate",
    "VersionGap",
    "VersionRefusal",
]

# -- what storage hands out --------------------------------------------------


@dataclass(frozen=True, slots=True)
class PaperState:
    """A paper's bookkeeping without its record: cheap to load for a whole page."""

    id: int
    key: str
    arxiv_id: str | None
    status: PaperStatus
    origin: Origin
    record_hash: str
    absent_syncs: int


@dataclass(frozen=True, slots=True)
class Paper:
    """A paper as it stands now, as one author holds it (``author``'s tie: status, origin,
    absences).  ``authors``: the followed authors who track it, when the read says."""

    id: int
    author: str
    key: str
    arxiv_id: str | None
    status: PaperStatus
    origin: Origin
    record: Record
    record_hash: str
    absent_syncs: int
    # In the author's own arXiv feed (ORCID iD or arXiv author id): theirs by their word.
    claimed: bool = False
    authors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class VersionDate:
    """One arXiv version of a paper and arXiv's date for it (None: the history lacks it)."""

    version: int
    date: datetime | None


@dataclass(frozen=True, slots=True)
class PaperDetails:
    """What a paper's page shows beyond its row: who holds it, its versions and their dates,
    where it was published.

    ``followed_authors`` are the followed authors whose record holds the paper
    as theirs (tracked), by name; ``versions`` run from v1 to the current one;
    ``publication`` is its current published version (accepted or confirmed),
    ``notices`` the corrections and retractions of that version, oldest first.
    """

    followed_authors: tuple[str, ...]
    versions: tuple[VersionDate, ...]
    publication: PublicationLink | None = None
    notices: tuple[Notice, ...] = ()


@dataclass(frozen=True, slots=True)
class AuthorSyncState:
    """What an author's cycle decides by: baseline taken, own feed last read, papers claimed."""

    baseline_at: datetime | None
    feed_fetched_at: datetime | None
    claimed: int
    # The id of the author's feed when arXiv last answered that it knows no author by it.
    feed_unknown_id: str | None = None
    # The day from which a harvest pass baselined the author (None: a name query did).
    baseline_from: date | None = None


@dataclass(frozen=True, slots=True)
class Truncation:
    """A read of an author's results cut at the cap: the ``kept`` newest of ``total``.

    ``total`` is what arXiv said it holds (``totalResults``, or the entries
    its feed listed); a read that reached the cap counts as cut even when
    arXiv holds exactly that many.  What was not read is unread, never absent.
    """

    source: ResultSource
    kept: int
    total: int

    @property
    def phrase(self) -> str:
        """The status in words: "name query truncated at 10,000 of 52,310 results"."""
        what = "name query" if self.source == ResultSource.QUERY else "own feed"
        return f"{what} truncated at {self.kept:,} of {self.total:,} results"


@dataclass(frozen=True, slots=True)
class Revision:
    """One entry of a paper's append-only history."""

    seq: int
    observed_at: datetime
    source: str
    version: int | None
    version_date: datetime | None  # arXiv's date for the version; None for seeds
    kinds: tuple[str, ...]
    changes: dict[str, Any]
    record: Record


@dataclass(frozen=True, slots=True)
class VersionGap:
    """A tracked paper at ``version`` and the arXiv versions its history holds."""

    paper_id: int
    author: str
    key: str
    arxiv_id: str
    version: int
    stored: frozenset[int]

    @property
    def missing(self) -> tuple[int, ...]:
        """The earlier versions the history lacks, oldest first."""
        return tuple(v for v in range(1, self.version) if v not in self.stored)


@dataclass(frozen=True, slots=True)
class VersionRefusal:
    """A version arXiv refused ``failures`` times in a row when asked by versioned id.

    ``next_try_at`` is None while it is still asked for every cycle, and
    when to ask again once it is set aside.
    """

    arxiv_id: str
    version: int
    failures: int
    last_error: str
    last_refused_at: datetime
    next_try_at: datetime | None

    @property
    def versioned_id(self) -> str:
        """``2602.09578v1``."""
        return versioned_id(self.arxiv_id, self.version)

    @property
    def set_aside(self) -> bool:
        """Whether it waits for ``next_try_at`` instead of being asked every cycle."""
        return self.next_try_at is not None

    def due(self, moment: datetime) -> bool:
        """Whether to ask for it at ``moment``."""
        return self.next_try_at is None or self.next_try_at <= moment


@dataclass(frozen=True, slots=True)
class Event:
    """A published change: what webhooks deliver and ``syncd events`` lists."""

    seq: int
    id: str
    type: str
    created_at: datetime
    author: str
    paper_key: str
    arxiv_id: str | None
    kinds: tuple[str, ...]
    changes: dict[str, Any]
    record: Record | None
    # The followed authors who held the paper as tracked when it was published, sorted
    # (for an author's event, that author); ``author`` is whose sync found it.
    authors: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The followed authors the event names: ``authors``, else whose sync found it."""
        return self.authors or (self.author,)


@dataclass(frozen=True, slots=True)
class SyncRun:
    """One sync cycle of one author, successful or not."""

    id: int
    author: str
    started_at: datetime
    finished_at: datetime | None
    status: RunStatus
    error: str | None
    requests: int
    entries: int
    events: int


class SyncStanding(StrEnum):
    """Where a followed author's cycles stand: the last finished one succeeded, failed
    (or was abandoned), or none has finished yet."""

    SYNCED = "synced"
    FAILING = "failing"
    NEVER = "never"


@dataclass(frozen=True, slots=True)
class SyncTally:
    """How the cycles of a set of followed authors go, counted (the status strip's line).

    ``all_failed`` is the latest failed cycle while none of them ever had a
    good one (what the index says in place of papers), else None.
    """

    authors: int
    synced: int
    failing: int
    running: int
    unknown_ids: int
    last_synced: datetime | None
    all_failed: SyncRun | None = None

    @property
    def never(self) -> int:
        """The authors no cycle has finished for yet."""
        return self.authors - self.synced - self.failing


@dataclass(frozen=True, slots=True)
class LatestChange:
    """A paper's most recent change: the last event published about it, else its last revision.

    ``event_type`` is None for a paper no event names yet (a seed paper not
    linked): its change is its last revision, with what that revision changed.
    """

    at: datetime
    event_type: str | None
    kinds: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EndpointSummary:
    """An endpoint and the state of its deliveries, for ``syncd webhooks list``."""

    name: str
    active: bool
    disabled_at: datetime | None
    disabled_reason: str | None
    pending: int
    delivered: int
    dead: int
    # Of its pending deliveries: when the first is due, and the error of the first that failed.
    next_attempt_at: datetime | None = None
    last_error: str | None = None
    # Whose events it takes (syncd.domain.routing.Audience): neither, everyone's.
    authors: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()


# -- what callers hand in -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class NewRevision:
    """A revision to append: the record observed and how it differs from the last one."""

    record: Record
    source: str
    kinds: tuple[str, ...] = ()
    changes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PaperWrite:
    """Insert (``paper_id is None``) or update one paper, append revisions, publish an event.

    The event, if any, is attached to the last appended revision.
    ``backfill_pending`` flags a paper whose earlier versions may be missing
    from its history; a write never clears the flag (``BackfillWrite`` does).
    """

    key: str
    arxiv_id: str | None
    status: PaperStatus
    origin: Origin
    paper_id: int | None = None
    absent_syncs: int = 0
    revisions: tuple[NewRevision, ...] = ()
    event_type: EventType | None = None
    event_kinds: tuple[str, ...] = ()
    event_changes: Mapping[str, Any] = field(default_factory=dict)
    backfill_pending: bool = False
    # Why a candidate is held, for its reviewer; None keeps a held candidate's reason.
    candidate_reason: str | None = None
    # The record hash of the paper the plan read (None: the plan took it for new); a
    # write whose revisions would change it from another is stale (``StalePlan``).
    read_hash: str | None = None


@dataclass(frozen=True, slots=True)
class BackfillWrite:
    """Earlier versions of a known paper, to add to its history without touching the paper.

    They publish no events.  Versions the history already holds are skipped.
    """

    paper_id: int
    revisions: tuple[NewRevision, ...]


@dataclass(frozen=True, slots=True)
class SyncStats:
    """Counters a cycle reports about itself."""

    requests: int = 0
    entries: int = 0


# -- what the seed documents hold ----------------------------------------------


@dataclass(frozen=True, slots=True)
class SeedRevision:
    """One version of a paper as the seeds show it; ``record`` is merged up to this point."""

    source: str
    line: int
    record: Record


@dataclass(frozen=True, slots=True)
class SeedPaper:
    """A paper of the seeded snapshot: a stable key and its revisions, oldest first."""

    key: str
    revisions: tuple[SeedRevision, ...]

    @property
    def record(self) -> Record:
        """The paper as of its last revision."""
        return self.revisions[-1].record
