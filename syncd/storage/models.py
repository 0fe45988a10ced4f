"""What only storage speaks of: a delivery's lease and report, the event log's queries, and
the papers a publication lookup is due for.

The domain's own frozen types (``Paper``, ``Revision``, ``Event``, ...) live
in ``syncd.domain.model``; storage maps its rows to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from syncd.domain.model import Event
from syncd.domain.publications import KnownPublications
from syncd.domain.record import Record

__all__ = ["Attempt", "Claim", "DuePaper", "EventQuery", "EventStamp"]


@dataclass(frozen=True, slots=True)
class EventStamp:
    """What a feed of the newest events depends on: their seqs and the newest one's time."""

    seqs: tuple[int, ...]
    last_at: datetime | None


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
class EventQuery:
    """Which events a reader asks for: a filter, a position in the log and a page size.

    Oldest first after seq ``after``, or (``newest_first``) newest first below
    seq ``before``; ``None`` leaves that bound open.  ``authors`` narrows to
    the events of any of these authors (a group's members), ``group`` to those
    of the members of the group of that name (read by the database, however
    many), ``published_from`` and ``published_before`` to those published in
    that window.
    """

    author: str | None = None
    authors: frozenset[str] | None = None
    group: str | None = None
    published_from: datetime | None = None
    published_before: datetime | None = None
    paper_id: int | None = None
    type: str | None = None
    after: int | None = None
    before: int | None = None
    newest_first: bool = False
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class DuePaper:
    """A paper a publication lookup is due for, with what the record knows of it.

    ``turn``: how many lookups of it were written; a lookup's write is taken
    only while it is still this (``Publications.apply``), so two replicas
    never both write one.  ``quiet``: never looked up, and it came in without
    an announcement (an author's baseline, a seed): what its first lookup
    finds is recorded without events, as the baseline's papers are.
    """

    paper_id: int
    key: str
    arxiv_id: str
    record: Record
    known: KnownPublications
    searched_at: datetime | None
    turn: int
    quiet: bool
    failures: int = 0  # lookups in a row that a source failed
