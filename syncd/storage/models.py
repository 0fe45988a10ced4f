"""What storage hands out (frozen domain objects, never rows) and what callers hand in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from syncd.record import Record, versioned_id
from syncd.vocabulary import EventType, Origin, PaperStatus, RunStatus

__all__ = [
    "Attempt",
    "BackfillWrite",
    "Claim",
    "EndpointSummary",
    "Event",
    "EventQuery",
    "EventStamp",
    "NewRevision",
    "Paper",
    "PaperState",
    "PaperWrite",
    "Revision",
    "SyncRun",
    "SyncStats",
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
    """A tracked paper as it stands now."""

    id: int
    author: str
    key: str
    arxiv_id: str | None
    status: PaperStatus
    origin: Origin
    record: Record
    record_hash: str
    absent_syncs: int


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


@dataclass(frozen=True, slots=True)
class EventStamp:
    """What a feed of the newest events depends on: their seqs and the newest one's time."""

    seqs: tuple[int, ...]
    last_at: datetime | None


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


@dataclass(frozen=True, slots=True)
class Claim:
    """A delivery this process has leased: send it, then report how it went.

    It carries one event, or a cycle's digest: the events of one cycle the
    endpoint takes, in publication order, under the digest's own id.
    """

    delivery_id: int
    endpoint: str
    attempts: int
    events: tuple[Event, ...]
    digest_id: str | None = None

    @property
    def message_id(self) -> str:
        """The id every attempt of this message carries (``webhook-id``): the event's, or
        the digest's."""
        return self.digest_id if self.digest_id is not None else self.events[0].id


@dataclass(frozen=True, slots=True)
class Attempt:
    """How one delivery attempt went, as the dispatcher reports it.

    Not delivered and no ``retry_at``: dead-lettered, unless the endpoint is
    being disabled (a 410), when the delivery waits for it.
    """

    delivery_id: int
    status: int | None
    error: str | None = None
    delivered: bool = False
    retry_at: datetime | None = None
    disable_endpoint: bool = False


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


@dataclass(frozen=True, slots=True)
class BackfillWrite:
    """Earlier versions of a known paper, to add to its history without touching the paper.

    They publish no events.  Versions the history already holds are skipped.
    """

    paper_id: int
    revisions: tuple[NewRevision, ...]


@dataclass(frozen=True, slots=True)
class EventQuery:
    """Which events a reader asks for: a filter, a position in the log and a page size.

    Oldest first after seq ``after``, or (``newest_first``) newest first below
    seq ``before``; ``None`` leaves that bound open.
    """

    author: str | None = None
    paper_id: int | None = None
    type: str | None = None
    after: int | None = None
    before: int | None = None
    newest_first: bool = False
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class SyncStats:
    """Counters a cycle reports about itself."""

    requests: int = 0
    entries: int = 0
