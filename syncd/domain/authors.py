"""Followed authors as values: what defines one, what a person sees of one, and its JSON.

Authors live in the database (issue 22): ``config`` ones mirror ``[[authors]]``
tables, reconciled at start; ``runtime`` ones are added and removed with
``syncd authors`` or the API.  Nothing here touches storage.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from syncd.domain.author_names import author_term
from syncd.domain.identifiers import unknown_id_advice
from syncd.domain.model import Truncation
from syncd.domain.moments import human_time
from syncd.domain.vocabulary import AuthorOrigin

__all__ = [
    "ARXIV_AUTHOR_PAGE",
    "ORCID_PAGE",
    "Author",
    "AuthorSummary",
    "Candidate",
    "FollowedAuthor",
    "author_json",
    "candidate_json",
    "describe_reason",
    "status_line",
]

ARXIV_AUTHOR_PAGE = "https://arxiv.org/a/"
ORCID_PAGE = "https://orcid.org/"
_NO_REASON = "no reason recorded"


@dataclass(frozen=True, slots=True)
class Author:
    """A followed author, checked: what ``[[authors]]`` tables and run-time additions
    validate into (``syncd.config``), what the database keeps, and what cycles sync.

    The database keeps all but ``include_ids`` and ``exclude_ids``, which only the
    file's tables give; a cycle's authors carry the review decisions in them too.
    """

    name: str
    origin: AuthorOrigin = AuthorOrigin.CONFIG
    orcid: str | None = None
    arxiv_author_id: str | None = None
    query: str | None = None
    seeds: tuple[Path, ...] = ()
    include_ids: tuple[str, ...] = ()  # always the author's
    exclude_ids: tuple[str, ...] = ()  # never the author's

    @property
    def feed_id(self) -> str | None:
        """The id of the author's own arXiv feed: the arXiv author id, else the ORCID iD."""
        return self.arxiv_author_id or self.orcid

    @property
    def search_query(self) -> str:
        """The arXiv ``search_query`` for this author: ``au:"Name"`` unless configured."""
        return self.query or author_term(self.name)


@dataclass(frozen=True, slots=True)
class FollowedAuthor:
    """An author a cycle syncs, as stored, with the review decisions taken on its candidates."""

    definition: Author
    confirmed: tuple[str, ...] = ()  # always the author's, as if in include_ids
    rejected: tuple[str, ...] = ()  # never the author's again, as if in exclude_ids


@dataclass(frozen=True, slots=True)
class AuthorSummary:
    """An author as ``syncd authors list`` and the pages show it."""

    definition: Author
    removed_at: datetime | None
    tracked: int
    claimed: int
    candidates: int
    last_started: datetime | None  # the last cycle's start, whatever its end
    last_success: datetime | None
    last_failure: datetime | None
    last_error: str | None  # why the last failed cycle failed
    # Its baseline found no group of papers clearly the author's (syncd.domain.basis).
    needs_review: bool = False
    # The id of its own feed that arXiv knows no author by, and since when (issue 30).
    unknown_id: str | None = None
    unknown_id_since: datetime | None = None
    # Its last reads cut at [arxiv] max_results_per_author (issue 34).
    truncated: tuple[Truncation, ...] = ()

    @property
    def name(self) -> str:
        return self.definition.name


@dataclass(frozen=True, slots=True)
class Candidate:
    """A paper the author's query found that is not (yet) taken as theirs."""

    arxiv_id: str
    title: str | None
    version: int | None
    reason: str | None  # None: held before reasons were recorded


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def author_json(summary: AuthorSummary, next_sync: datetime | None) -> dict[str, Any]:
    """An author as ``syncd authors list --json`` and ``GET /api/v1/authors`` give it."""
    definition = summary.definition
    return {
        "name": definition.name,
        "orcid": definition.orcid,
        "arxiv_author_id": definition.arxiv_author_id,
        "query": definition.query,
        "source": str(definition.origin),
        "followed": summary.removed_at is None,
        "removed_at": _time(summary.removed_at),
        "tracked": summary.tracked,
        "claimed": summary.claimed,
        "candidates": summary.candidates,
        "needs_review": summary.needs_review,
        "unknown_id": summary.unknown_id,
        "unknown_id_since": _time(summary.unknown_id_since),
        "truncated": [
            {"source": str(cut.source), "at": cut.kept, "of": cut.total}
            for cut in summary.truncated
        ],
        "last_success": _time(summary.last_success),
        "last_failure": _time(summary.last_failure),
        "last_error": summary.last_error,
        "next_sync": _time(next_sync),
    }


def candidate_json(candidate: Candidate) -> dict[str, Any]:
    """A candidate as ``GET /api/v1/authors/{name}`` lists it."""
    return {
        "arxiv_id": candidate.arxiv_id,
        "title": candidate.title,
        "version": candidate.version,
        "reason": candidate.reason,
    }


def describe_reason(reason: str | None) -> str:
    """A candidate's reason as people read it."""
    return reason or _NO_REASON


def status_line(summary: AuthorSummary, next_at: datetime | None) -> str:
    """Last success, last failure and why, next sync (or since when no longer followed)."""

    def when(value: datetime | None) -> str:
        return human_time(value) if value is not None else "never"

    parts = [f"last success {when(summary.last_success)}"]
    if summary.needs_review:
        parts.insert(0, f"needs review: {summary.candidates} candidates, none clearly theirs")
    if summary.unknown_id is not None:
        since = when(summary.unknown_id_since)
        parts.insert(0, f"{unknown_id_advice(summary.unknown_id)} (since {since})")
    parts[:0] = [cut.phrase for cut in summary.truncated]
    if summary.last_failure is not None:
        reason = summary.last_error or _NO_REASON
        parts.append(f"last failure {when(summary.last_failure)}: {reason}")
    if summary.removed_at is not None:
        parts.append(f"no longer followed since {when(summary.removed_at)}")
    else:
        parts.append(f"next sync {when(next_at)}")
    return "; ".join(parts)
