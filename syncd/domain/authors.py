"""Followed authors as values: what defines one, what a person sees of one, and its JSON.

Authors live in the database (issue 22): ``config`` ones mirror ``[[authors]]``
tables, reconciled at start; ``runtime`` ones are added and removed with
``syncd authors`` or the API.  Nothing here touches storage.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from syncd.domain.vocabulary import AuthorOrigin

__all__ = [
    "ARXIV_AUTHOR_PAGE",
    "ORCID_PAGE",
    "AuthorDefinition",
    "AuthorSummary",
    "Candidate",
    "FollowedAuthor",
    "author_json",
    "candidate_json",
]

ARXIV_AUTHOR_PAGE = "https://arxiv.org/a/"
ORCID_PAGE = "https://orcid.org/"


@dataclass(frozen=True, slots=True)
class AuthorDefinition:
    """What a followed author is made of; seed paths are absolute."""

    name: str
    origin: AuthorOrigin
    orcid: str | None = None
    arxiv_author_id: str | None = None
    query: str | None = None
    seeds: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FollowedAuthor:
    """An author a cycle syncs, with the review decisions taken on its candidates."""

    definition: AuthorDefinition
    confirmed: tuple[str, ...] = ()  # always the author's, as if in include_ids
    rejected: tuple[str, ...] = ()  # never the author's again, as if in exclude_ids


@dataclass(frozen=True, slots=True)
class AuthorSummary:
    """An author as ``syncd authors list`` and the pages show it."""

    definition: AuthorDefinition
    removed_at: datetime | None
    tracked: int
    claimed: int
    candidates: int
    last_started: datetime | None  # the last cycle's start, whatever its end
    last_success: datetime | None
    last_failure: datetime | None
    last_error: str | None  # why the last failed cycle failed

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
