"""The read API's objects as pydantic models: what ``/api/v1/openapi.json`` documents.

The JSON itself is built by ``syncd.domain.views`` (the CLI's ``--json`` prints the
same dicts); these models describe it, and the API tests check every answer
against them through the OpenAPI schema (schemathesis).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from syncd.domain.publications import LinkState, MatchLevel, PublicationSource
from syncd.domain.vocabulary import (
    AuthorOrigin,
    Decision,
    EventType,
    Origin,
    PaperStatus,
    ResultSource,
)

__all__ = [
    "AuthorDetailOut",
    "AuthorIn",
    "AuthorOut",
    "CandidateOut",
    "DecisionIn",
    "DecisionOut",
    "EndpointOut",
    "ErrorOut",
    "EventOut",
    "EvidenceOut",
    "GroupIn",
    "GroupOut",
    "GroupPapersOut",
    "MembersIn",
    "NoticeOut",
    "PaperOut",
    "PaperRef",
    "PublicationDecisionIn",
    "PublicationDecisionOut",
    "PublicationOut",
    "RecordOut",
    "ReportCountsOut",
    "ReportOut",
    "ReportRowOut",
    "ReviewOut",
    "RevisionOut",
    "TruncationOut",
    "VersionOut",
]


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RecordOut(_Out):
    """The canonical record of one observation of a paper."""

    arxiv_id: str | None
    version: int | None
    title: str | None
    abstract: str | None
    authors: list[str]
    authors_complete: bool
    primary_category: str | None
    categories: list[str]
    comment: str | None
    journal_ref: str | None
    doi: str | None
    published: str | None
    updated: str | None
    withdrawn: bool
    withdrawn_by: str | None = Field(description='"author" or "admin" when the notice says')


class VersionOut(_Out):
    """One arXiv version of a paper."""

    version: int
    date: str | None = Field(
        description="arXiv's date for the version (ISO 8601, UTC); null when the history"
        " holds no revision of it"
    )


class EvidenceOut(_Out):
    """The parts of a bibliographic match's score; null for a certain match."""

    title_similarity: float | None = Field(description="the normalised titles' likeness, 0 to 1")
    author_share: float | None = Field(description="the share of authors in common, 0 to 1")
    year_gap: int | None = Field(description="the publication's year less the preprint's")


class PublicationOut(_Out):
    """A published version of a paper and why it is taken to be the paper's."""

    doi: str | None = Field(description="lower case; null for a journal reference without one")
    venue: str | None = Field(description="the journal's or the proceedings' title")
    type: str | None = Field(description="the source's type: journal-article, ...")
    date: str | None = Field(description="ISO 8601, as precise as the source gives it")
    title: str | None = Field(description="the published version's own title")
    url: str | None
    source: PublicationSource = Field(description="who told syncd about it")
    match: MatchLevel = Field(
        description="arxiv: arXiv's own doi or journal_ref; link: a relation between the two"
        " works in Crossref or OpenAlex; bibliographic: a match scored on title, authors, year"
    )
    how: str = Field(
        description="the route: arxiv-doi, arxiv-journal-ref, crossref-relation-doi,"
        " crossref-relation-arxiv-id, openalex-merged, crossref-search, person"
    )
    score: float = Field(description="1 for a certain match; else the bibliographic score")
    evidence: EvidenceOut
    state: LinkState = Field(
        description="accepted or confirmed (by a person) for a paper's publication; candidate"
        " while it waits for review; rejected; replaced by a better one"
    )


class NoticeOut(_Out):
    """A notice on a published version: a correction, a retraction, ..."""

    doi: str = Field(description="the notice's own DOI, lower case")
    type: str = Field(description="Crossref's update type: correction, retraction, erratum, ...")
    date: str | None = Field(description="ISO 8601, as precise as the source gives it")
    source: str = Field(description="who recorded it: publisher, retraction-watch, ...")
    publication_doi: str = Field(description="the DOI of the version it is about")


class PaperOut(_Out):
    """A tracked paper as it stands now (``syncd papers --json``): what its page shows."""

    key: str
    arxiv_id: str | None
    version: int | None
    title: str | None
    authors: list[str] = Field(description="the authors as arXiv lists them")
    authors_complete: bool
    abstract: str | None
    categories: list[str] = Field(description="arXiv categories, the primary one first")
    withdrawn: bool = Field(description="the current version is withdrawn")
    withdrawn_by: str | None = Field(description='"author" or "admin" when the notice says')
    withdrawal_notice: str | None = Field(description="arXiv's notice, when withdrawn")
    versions: list[VersionOut] = Field(description="v1 to the current version, in order")
    status: PaperStatus
    origin: Origin
    author: str = Field(description="the followed author whose hold on the paper is shown")
    followed_authors: list[str] = Field(
        description="every followed author who holds the paper as theirs (tracked), by name"
    )
    claimed: bool = Field(description="in the shown author's own arXiv feed (ORCID iD or arXiv id)")
    publication: PublicationOut | None = Field(
        description="the published version (accepted, or confirmed by a person); null when"
        " none is known"
    )
    notices: list[NoticeOut] = Field(
        description="corrections and retractions of the published version, oldest first"
    )


class RevisionOut(_Out):
    """One entry of a paper's append-only history (``syncd history --json``)."""

    seq: int
    observed_at: str = Field(description="ISO 8601, UTC")
    source: str = Field(description='"arxiv", or "seed:<file>" for a seed document')
    version: int | None
    kinds: list[str] = Field(
        description="what changed against the revision before it in version order"
    )
    changes: dict[str, dict[str, Any]] = Field(
        description='per changed field {"old", "new"} against the revision before it in'
        ' version order; lists also "added", "removed"'
    )
    record: RecordOut


class PaperRef(_Out):
    """Which paper an event is about."""

    key: str
    arxiv_id: str | None


class EventOut(_Out):
    """A published change (``syncd events --json``; what webhooks carry)."""

    id: str
    seq: int
    type: EventType
    created_at: str = Field(description="ISO 8601, UTC")
    author: str = Field(description="the followed author whose sync found the change")
    authors: list[str] = Field(
        description="the followed authors who track the paper, sorted (for an author's"
        " event, that author): every delivery of the event names the same"
    )
    paper: PaperRef | None = Field(
        description='null for "author.added" and "author.review_needed", which are about the'
        " author: see changes.author"
    )
    kinds: list[str]
    changes: dict[str, dict[str, Any]] = Field(
        description='per changed field {"old", "new"}; for an author\'s event "author"; for'
        ' paper.published "publication" (a publication, as a paper\'s), for'
        ' paper.publication_changed also "previous", for paper.corrected and paper.retracted'
        ' also "notice" (as a paper\'s notices)'
    )
    record: RecordOut | None = Field(
        description="the paper as it stands; for paper.removed (and a paper back unchanged)"
        " its last known state; null for an author's event, and for an event of a paper"
        " without any revision"
    )


class EndpointOut(_Out):
    """A webhook endpoint and its deliveries (``syncd webhooks list --json``)."""

    name: str
    url: str = Field(description="scheme and host only; never the path, which may hold a token")
    active: bool
    disabled_at: str | None
    disabled_reason: str | None
    pending: int
    delivered: int
    dead: int
    next_attempt_at: str | None = Field(description="when the first pending delivery is due")
    last_error: str | None = Field(
        description="why the first pending delivery that failed failed (status or error)"
    )
    authors: list[str] = Field(description="routed by these authors (with groups' members)")
    groups: list[str] = Field(description="and these groups' members; neither: every author")


class ErrorOut(_Out):
    """What went wrong, in one line that echoes nothing secret."""

    error: str


class TruncationOut(_Out):
    """A read of an author's results cut at the cap: "truncated at N"."""

    source: ResultSource = Field(description="query: the name query; feed: their own arXiv feed")
    at: int = Field(description="how many results were read (the newest)")
    of: int = Field(description="how many arXiv said it holds")


class AuthorOut(_Out):
    """A followed author (``syncd authors list --json``)."""

    name: str
    orcid: str | None
    arxiv_author_id: str | None
    query: str | None = Field(description='the arXiv search_query; null: au:"<name>"')
    source: AuthorOrigin = Field(description="config: an [[authors]] table; runtime: added")
    followed: bool = Field(description="false once removed; papers, history and events stay")
    removed_at: str | None
    tracked: int = Field(description="tracked papers, claimed ones included")
    claimed: int = Field(description="tracked papers in the author's own arXiv feed")
    candidates: int = Field(description="papers held for review")
    needs_review: bool = Field(description="no group of its papers was clearly the author's")
    unknown_id: str | None = Field(
        description="the ORCID iD or arXiv author id arXiv knows no author by: link the iD to"
        " an arXiv account, or correct or remove it; null when arXiv knows it (or none is set)"
    )
    unknown_id_since: str | None = Field(description="since when arXiv has said so")
    truncated: list[TruncationOut] = Field(
        description="the author's last reads cut at [arxiv] max_results_per_author: the papers"
        " past the cap were not read (never counted absent); empty when every read was whole"
    )
    last_success: str | None
    last_failure: str | None
    last_error: str | None = Field(description="why the last failed cycle failed")
    next_sync: str | None = Field(description="when the scheduler's cycles next sync the author")


class CandidateOut(_Out):
    """A paper the author's query found that is not taken as theirs yet."""

    arxiv_id: str
    title: str | None
    version: int | None
    reason: str | None = Field(description="why it is held; null when none was recorded")


class AuthorDetailOut(AuthorOut):
    """A followed author and the candidates held for review."""

    candidate_papers: list[CandidateOut]


class AuthorIn(_Out):
    """An author to follow from now on (seed files are for the command line)."""

    name: str = Field(min_length=1, max_length=200)
    orcid: str | None = Field(
        None, max_length=64, description="the bare iD, or ORCID's URL of it (https://orcid.org/...)"
    )
    arxiv_author_id: str | None = Field(None, max_length=64)
    query: str | None = Field(None, max_length=2000)


class DecisionIn(_Out):
    """arXiv ids of the author's candidates."""

    ids: list[str] = Field(min_length=1, max_length=1000)


class DecisionOut(_Out):
    """What a review decision did."""

    name: str
    decision: Decision
    ids: list[str]
    events: list[str] = Field(description="ids of the paper.added events published")


class GroupOut(_Out):
    """A group of followed authors (``syncd groups list --json``)."""

    name: str
    description: str
    source: AuthorOrigin = Field(description="config: a [[groups]] table; runtime: made")
    members: list[str] = Field(description="the followed authors in it, by name")


class GroupIn(_Out):
    """A group to make (or describe again), with members to put in it."""

    name: str = Field(min_length=1, max_length=100)
    description: str = Field("", max_length=2000)
    members: list[str] = Field([], max_length=10000, description="followed authors' names")


class MembersIn(_Out):
    """Authors to put in a group and to take out of it."""

    add: list[str] = Field([], max_length=10000)
    remove: list[str] = Field([], max_length=10000)


class GroupPapersOut(GroupOut):
    """A group and its members' papers, each once, latest change first."""

    papers: list[PaperOut] = Field(description="tracked, unlinked and removed; no candidates")


class ReportCountsOut(_Out):
    """What a report counts over its period."""

    new_papers: int = Field(description="paper.added events")
    new_versions: int = Field(description="versions paper.revised moved by, withdrawals aside")
    withdrawals: int


class ReportRowOut(ReportCountsOut):
    """One member's counts."""

    person: str


class ReportOut(_Out):
    """A group's report over whole UTC days, both ends included."""

    group: str
    since: str = Field(description="YYYY-MM-DD")
    until: str = Field(description="YYYY-MM-DD")
    people: list[ReportRowOut]
    total: ReportCountsOut = Field(description="the group's, each change once")


class ReviewOut(_Out):
    """A candidate publication link waiting for a person (``syncd publications review``)."""

    paper: str
    arxiv_id: str | None
    title: str | None
    publication: PublicationOut


class PublicationDecisionIn(_Out):
    """The publication decided on: its DOI, or ``journal-ref``."""

    doi: str = Field(min_length=1, max_length=300)


class PublicationDecisionOut(_Out):
    """What a decision on a publication link did."""

    paper: str
    doi: str
    decision: Decision
    events: list[str] = Field(description="ids of the events published")
