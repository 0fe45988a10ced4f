"""The words syncd's record, events and metrics are made of, defined once.

A leaf: it imports nothing from the package, so configuration, storage, the
differ, the views and the metrics can all take their vocabularies from here
without importing each other.

``RECORD_FIELDS`` is the one table of a paper record's fields.  It drives
``Record.to_dict``, ``content_hash`` and the differ, so a new field is one
line here (plus the dataclass attribute and, if it needs one, its rule).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

__all__ = [
    "AUTHOR_EVENTS",
    "EVENT_TYPES",
    "KINDS",
    "PUBLICATION_EVENTS",
    "RECORD_FIELDS",
    "DeliveryFormat",
    "DeliveryGroup",
    "DeliveryStatus",
    "EventType",
    "FieldShape",
    "HashRule",
    "Origin",
    "PaperStatus",
    "Put",
    "RecordField",
    "ResultSource",
    "RevisionSource",
    "RunStatus",
    "SeedKnowledge",
    "source_label",
]

# A version number as stored: ASCII digits only.
_NUMBER_RE = re.compile("[0-9]+")


class EventType(StrEnum):
    """What an event says happened to a paper, or to the set of followed authors."""

    LINKED = "paper.linked"
    ADDED = "paper.added"
    REVISED = "paper.revised"
    REMOVED = "paper.removed"
    # An author's first complete sync (their baseline): it announces this, not
    # their papers one by one.  ``changes["author"]`` holds the counts.
    AUTHOR_ADDED = "author.added"
    # A cycle (or a harvested page) held papers of the author as candidates that
    # were not held before: a person is asked to review them.  Once per cycle, about
    # the new ones only; ``changes["author"]`` holds how many and which.
    REVIEW_NEEDED = "author.review_needed"
    # Where the paper was published, and what befell that version (issue 33):
    # ``changes["publication"]`` holds the link (syncd.domain.publications.link_json).
    PUBLISHED = "paper.published"
    # A better link took the place of the announced one; ``changes["previous"]`` is that one.
    PUBLICATION_CHANGED = "paper.publication_changed"
    # A notice on the published version: ``changes["notice"]`` holds its DOI, type and date.
    CORRECTED = "paper.corrected"
    RETRACTED = "paper.retracted"


EVENT_TYPES: tuple[str, ...] = tuple(EventType)
# Events about an author rather than a paper.  Each is filed under one of the
# author's papers (the outbox orders deliveries by paper), which it is not about:
# it carries no paper and no record.
AUTHOR_EVENTS: frozenset[str] = frozenset({EventType.AUTHOR_ADDED, EventType.REVIEW_NEEDED})
# Events about a paper's published version, found outside arXiv's record of it.
PUBLICATION_EVENTS: frozenset[str] = frozenset(
    {
        EventType.PUBLISHED,
        EventType.PUBLICATION_CHANGED,
        EventType.CORRECTED,
        EventType.RETRACTED,
    }
)

# Change kinds, in the order events report them.
KINDS: tuple[str, ...] = (
    "version",
    "title",
    "authors",
    "abstract",
    "categories",
    "comment",
    "journal_ref",
    "doi",
    "withdrawn",
)


class PaperStatus(StrEnum):
    """Where a paper stands in the record."""

    UNLINKED = "unlinked"  # a seed paper not yet matched to an arXiv id
    TRACKED = "tracked"
    CANDIDATE = "candidate"  # found by the author query, not yet shown to be theirs
    REMOVED = "removed"  # missing from arXiv's answers for `removal_after` cycles
    # Not theirs, as a person decided (``syncd authors reject``); ``confirm`` takes it back.
    REJECTED = "rejected"


class Origin(StrEnum):
    """Where a paper first came from."""

    SEED = "seed"
    ARXIV = "arxiv"


class AuthorOrigin(StrEnum):
    """Where a followed author is defined."""

    CONFIG = "config"  # an [[authors]] table, reconciled at start; changed in the file
    RUNTIME = "runtime"  # `syncd authors add` or the API


class ResultSource(StrEnum):
    """What an author's cycle reads their papers from, each capped at
    ``[arxiv] max_results_per_author``."""

    QUERY = "query"  # the name query (or the author's custom query)
    FEED = "feed"  # the author's own arXiv feed (orcid / arxiv_author_id)


class Decision(StrEnum):
    """A person's review of an author's candidate paper."""

    CONFIRMED = "confirmed"
    REJECTED = "rejected"  # never the author's again, as if in exclude_ids


class Put(StrEnum):
    """What storing a run-time author did."""

    ADDED = "added"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


class DeliveryFormat(StrEnum):
    """The body an endpoint takes: signed Standard Webhooks JSON, or a chat message."""

    STANDARD = "standard"
    SLACK = "slack"  # also Mattermost's and Rocket.Chat's incoming webhooks
    DISCORD = "discord"
    APPRISE = "apprise"  # a [[notify]] target: a title and a body in its service's format


class DeliveryGroup(StrEnum):
    """What one message to an endpoint carries: one event, or every change of a cycle."""

    EVENT = "event"
    CYCLE = "cycle"


class DeliveryStatus(StrEnum):
    """A webhook delivery's state in the outbox."""

    PENDING = "pending"
    DELIVERED = "delivered"
    DEAD = "dead"


class RunStatus(StrEnum):
    """How a sync cycle ended, or that it has not."""

    RUNNING = "running"
    OK = "ok"
    FAILED = "failed"
    ABANDONED = "abandoned"  # its process died mid-cycle


# How a field's value is held, compared and hashed:
# text and number are scalars (None when unknown); names is an ordered tuple;
# set is a tuple whose order means nothing; flag is a bool.
FieldShape = Literal["text", "number", "names", "set", "flag"]
# What a seed page can say about a field: "shown" fields are on every seed
# record, "if_present" ones only on some, "never" ones on none (so a seed
# record's value is "unknown" rather than empty, and is not compared).
SeedKnowledge = Literal["shown", "if_present", "never"]
# Whether a field is part of content_hash: "when_set" fields count only when
# not None, so records stored before such a field existed keep their hash.
HashRule = Literal["always", "never", "when_set"]


@dataclass(frozen=True, slots=True)
class RecordField:
    """One field of the canonical record.

    ``kind`` is the change kind a difference in it reports; ``None`` means it
    is not compared.  ``hashed`` says how it takes part in ``content_hash``.
    """

    name: str
    shape: FieldShape
    kind: str | None = None
    hashed: HashRule = "always"
    seed: SeedKnowledge = "never"


# In the record's (and its JSON's) order.
RECORD_FIELDS: tuple[RecordField, ...] = (
    RecordField("arxiv_id", "text"),
    RecordField("version", "number", kind="version"),
    RecordField("title", "text", kind="title", seed="if_present"),
    RecordField("abstract", "text", kind="abstract", seed="if_present"),
    RecordField("authors", "names", kind="authors", seed="shown"),
    RecordField("authors_complete", "flag"),
    RecordField("primary_category", "text", kind="categories", seed="if_present"),
    RecordField("categories", "set", kind="categories"),
    RecordField("comment", "text", kind="comment"),
    RecordField("journal_ref", "text", kind="journal_ref"),
    RecordField("doi", "text", kind="doi"),
    # published and updated follow the version; they are not the paper's content.
    RecordField("published", "text", hashed="never"),
    RecordField("updated", "text", hashed="never"),
    RecordField("withdrawn", "flag", kind="withdrawn"),
    # "author" or "admin" (syncd.domain.withdrawal); added after records were stored.
    RecordField("withdrawn_by", "text", kind="withdrawn", hashed="when_set"),
)


@dataclass(frozen=True, slots=True)
class RevisionSource:
    """Where a revision was read, as its ``source`` column stores it.

    ``arxiv`` (a sync's answer), ``arxiv:vN`` (version N fetched by its
    versioned id: a backfill) or ``seed:<file>`` (a seed document): written
    by ``str()`` and read back by ``parse``, here and nowhere else.
    """

    kind: Literal["arxiv", "backfilled", "seed"]
    version: int | None = None  # the version a backfill fetched
    name: str | None = None  # the seed document's file name

    @classmethod
    def arxiv(cls) -> RevisionSource:
        """A version as a sync's answer carried it."""
        return cls("arxiv")

    @classmethod
    def backfilled(cls, version: int) -> RevisionSource:
        """Version ``version``, fetched by its versioned id to fill a history."""
        return cls("backfilled", version=version)

    @classmethod
    def seed(cls, name: str) -> RevisionSource:
        """The seed document named ``name`` (its file name)."""
        return cls("seed", name=name)

    @classmethod
    def parse(cls, stored: str) -> RevisionSource | None:
        """The source a stored string names; None for one syncd never writes."""
        if stored == "arxiv":
            return cls.arxiv()
        if stored.startswith("seed:"):
            return cls.seed(stored.removeprefix("seed:"))
        number = stored.removeprefix("arxiv:v")
        if number != stored and _NUMBER_RE.fullmatch(number):
            return cls.backfilled(int(number))
        return None

    def __str__(self) -> str:
        if self.kind == "seed":
            return f"seed:{self.name}"
        if self.kind == "backfilled":
            return f"arxiv:v{self.version}"
        return "arxiv"

    def label(self, version: int | None) -> str:
        """How the pages name it, for a revision at arXiv version ``version``."""
        if self.kind == "seed":
            return f"seed document {self.name}"
        if self.kind == "arxiv":
            return (
                f"arXiv v{version}, seen by a sync" if version is not None else "arXiv, by a sync"
            )
        return f"arXiv v{self.version}, fetched later for the history"


def source_label(stored: str, version: int | None) -> str:
    """The label of a stored source (``RevisionSource.label``); an unknown one as stored."""
    source = RevisionSource.parse(stored)
    return stored if source is None else source.label(version)
