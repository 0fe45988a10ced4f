"""Where a preprint was published: works other sources know, links with evidence, notices.

The values every stage of issue 33 shares.  Sources (Crossref, OpenAlex)
parse their answers into ``Work``s and ``Notice``s; the matcher
(``syncd.domain.matching``) weighs them against the paper's arXiv record
into ``PublicationLink``s with their ``Evidence``; storage keeps links and
notices and hands them back as ``PaperPublications``; events carry a link as
``link_json`` writes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "Evidence",
    "KnownPublications",
    "LinkState",
    "LinkedWork",
    "MatchLevel",
    "Notice",
    "PaperPublications",
    "PlannedEvent",
    "PublicationLink",
    "PublicationPlan",
    "PublicationSource",
    "ReviewItem",
    "Work",
    "link_json",
    "link_key",
    "normalize_doi",
    "notice_is_retraction",
    "notice_json",
    "review_json",
]


class PublicationSource(StrEnum):
    """Who told us about a publication."""

    ARXIV = "arxiv"  # the paper's own arXiv record: its doi or journal_ref
    CROSSREF = "crossref"
    OPENALEX = "openalex"


class MatchLevel(StrEnum):
    """How strongly a publication is known to be the paper's, strongest first."""

    ARXIV = "arxiv"  # arXiv's own doi / journal_ref: certain
    LINK = "link"  # a relation between the two works in Crossref or OpenAlex: certain
    BIBLIOGRAPHIC = "bibliographic"  # a scored match on title, authors and year


class LinkState(StrEnum):
    """Where a link between a paper and a publication stands."""

    ACCEPTED = "accepted"  # announced as fact: certain, or scored at least accept_score
    CANDIDATE = "candidate"  # scored from review_score: waits for a person, never announced
    CONFIRMED = "confirmed"  # a candidate a person confirmed: announced, and kept
    REJECTED = "rejected"  # a person said no: never proposed again
    REPLACED = "replaced"  # was the paper's publication until a better link took its place


@dataclass(frozen=True, slots=True)
class Notice:
    """A notice on a published version: a correction, a retraction, an expression of concern.

    ``type`` is Crossref's update type as given (``correction``,
    ``retraction``, ``expression_of_concern``, ``erratum``, ...); ``source``
    who recorded the update (``publisher``, ``retraction-watch``).
    """

    doi: str  # the notice's own DOI, normalised (normalize_doi)
    type: str
    date: str | None  # ISO 8601 date, as precise as the source gives it (YYYY, YYYY-MM, ...)
    source: str
    target_doi: str  # the publication it is about, normalised


@dataclass(frozen=True, slots=True)
class Work:
    """A work another source knows: a journal article, a proceedings paper, a book chapter."""

    source: PublicationSource
    doi: str | None  # normalised
    title: str
    authors: tuple[str, ...]  # as the source writes them: "Given Family"
    year: int | None
    date: str | None  # its publication date, ISO 8601, as precise as the source gives it
    venue: str | None  # the journal's or proceedings' title
    type: str | None  # the source's own type: journal-article, proceedings-article, ...
    url: str | None = None
    notices: tuple[Notice, ...] = ()  # the updates the source lists on it (updated-by)


@dataclass(frozen=True, slots=True)
class LinkedWork:
    """A work a source says is the published version of an arXiv paper.

    ``how`` is the route (``Evidence.how``): ``crossref-relation-doi`` (a
    ``has-preprint`` relation naming the arXiv DOI), ``crossref-relation-arxiv-id``
    (naming the bare id, of type ``arxiv``), ``openalex-merged`` (OpenAlex keeps
    the preprint and the publication as one work).
    """

    arxiv_id: str  # bare, without version: "2403.01234", "hep-th/9901001"
    work: Work
    how: str


@dataclass(frozen=True, slots=True)
class Evidence:
    """Why a publication is taken to be the paper's.

    ``how`` names the route in one word (``arxiv-doi``, ``arxiv-journal-ref``,
    ``crossref-relation-doi``, ``crossref-relation-arxiv-id``,
    ``openalex-merged``, ``crossref-search``, ``person``); ``score`` is 1.0
    for a certain match.  The three parts of a bibliographic score are kept
    so a person can see why.
    """

    level: MatchLevel
    source: PublicationSource
    how: str
    score: float
    title_similarity: float | None = None
    author_share: float | None = None
    year_gap: int | None = None


@dataclass(frozen=True, slots=True)
class PublicationLink:
    """A publication tied to a paper: what it is, why, and where the tie stands."""

    doi: str | None  # None for a journal_ref arXiv gave without a DOI
    venue: str | None
    type: str | None
    date: str | None
    title: str | None
    url: str | None
    evidence: Evidence
    state: LinkState


def link_key(link: PublicationLink) -> str:
    """What tells a paper's links apart (``publication_links.key``): the DOI, or
    ``journal-ref`` for a journal reference arXiv gave without one."""
    return link.doi if link.doi is not None else "journal-ref"


@dataclass(frozen=True, slots=True)
class KnownPublications:
    """What the record holds of one paper's publications when a lookup is planned."""

    links: tuple[PublicationLink, ...]  # every link ever tied to the paper, in any state
    notice_dois: frozenset[str]  # the notices already recorded (and announced)

    @property
    def current(self) -> PublicationLink | None:
        """The link announced as the paper's publication now: accepted or confirmed."""
        for link in self.links:
            if link.state in (LinkState.ACCEPTED, LinkState.CONFIRMED):
                return link
        return None


@dataclass(frozen=True, slots=True)
class PlannedEvent:
    """An event a publication plan publishes: its type (an ``EventType``) and changes."""

    type: str
    changes: dict[str, Any]


@dataclass(frozen=True, slots=True)
class PublicationPlan:
    """What one lookup (or one person's decision) writes about a paper's publications.

    ``links`` are upserted by ``link_key`` with the state they carry (a new
    current link, the one it replaces as ``replaced``, new candidates,
    decisions); ``notices`` are new and recorded once; ``events`` are
    published in order in the same transaction.
    """

    links: tuple[PublicationLink, ...] = ()
    notices: tuple[Notice, ...] = ()
    events: tuple[PlannedEvent, ...] = ()


@dataclass(frozen=True, slots=True)
class PaperPublications:
    """What the record knows of one paper's published versions, for its faces."""

    current: PublicationLink | None  # accepted or confirmed, the best one
    candidates: tuple[PublicationLink, ...]  # waiting for review
    notices: tuple[Notice, ...]  # on the current publication, oldest first

    @property
    def retracted(self) -> bool:
        """Whether a notice retracts the current publication."""
        return any(notice_is_retraction(notice.type) for notice in self.notices)


# Crossref's update types that take the published version back; every other
# update (correction, erratum, corrigendum, expression_of_concern, addendum,
# clarification, partial_retraction, ...) is announced as a correction.
_RETRACTIONS = frozenset({"retraction", "withdrawal", "removal"})


def notice_is_retraction(notice_type: str) -> bool:
    """Whether a notice of this Crossref update type retracts its publication."""
    return notice_type.strip().lower().replace("-", "_") in _RETRACTIONS


def normalize_doi(value: str) -> str | None:
    """A DOI as syncd keeps it: lower case, without a resolver prefix; None if it is none.

    DOIs are case-insensitive (the DOI Handbook, 3.4); sources write them as
    ``10.x/y``, ``doi:10.x/y`` or ``https://doi.org/10.x/y``.
    """
    text = value.strip()
    lowered = text.lower()
    for prefix in (
        "https://doi.org/",
        "http://doi.org/",
        "https://dx.doi.org/",
        "http://dx.doi.org/",
        "doi:",
    ):
        if lowered.startswith(prefix):
            text = text[len(prefix) :]
            break
    text = text.strip().lower()
    if not text.startswith("10.") or "/" not in text or any(c.isspace() for c in text):
        return None
    return text


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """A candidate link waiting for a person: the paper, and the publication it may be."""

    paper_key: str
    arxiv_id: str | None
    title: str | None
    link: PublicationLink


def review_json(item: ReviewItem) -> dict[str, Any]:
    """A candidate link as ``syncd publications review --json`` and the API list it."""
    return {
        "paper": item.paper_key,
        "arxiv_id": item.arxiv_id,
        "title": item.title,
        "publication": link_json(item.link),
    }


def link_json(link: PublicationLink) -> dict[str, Any]:
    """A link as events, the API and webhooks carry it."""
    evidence = link.evidence
    return {
        "doi": link.doi,
        "venue": link.venue,
        "type": link.type,
        "date": link.date,
        "title": link.title,
        "url": link.url,
        "source": evidence.source.value,
        "match": evidence.level.value,
        "how": evidence.how,
        "score": round(evidence.score, 3),
        "evidence": {
            "title_similarity": evidence.title_similarity,
            "author_share": evidence.author_share,
            "year_gap": evidence.year_gap,
        },
        "state": link.state.value,
    }


def notice_json(notice: Notice) -> dict[str, Any]:
    """A notice as events, the API and webhooks carry it."""
    return {
        "doi": notice.doi,
        "type": notice.type,
        "date": notice.date,
        "source": notice.source,
        "publication_doi": notice.target_doi,
    }
