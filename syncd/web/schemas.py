"""The read API's objects as pydantic models: what ``/api/v1/openapi.json`` documents.

The JSON itself is built by ``syncd.domain.views`` (the CLI's ``--json`` prints the
same dicts); these models describe it, and the API tests check every answer
against them through the OpenAPI schema (schemathesis).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from syncd.domain.vocabulary import EventType, Origin, PaperStatus

__all__ = [
    "EndpointOut",
    "ErrorOut",
    "EventOut",
    "PaperOut",
    "PaperRef",
    "RecordOut",
    "RevisionOut",
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


class PaperOut(_Out):
    """A tracked paper as it stands now (``syncd papers --json``)."""

    key: str
    arxiv_id: str | None
    version: int | None
    title: str | None
    authors: list[str]
    authors_complete: bool
    status: PaperStatus
    origin: Origin
    author: str = Field(description="the configured author whose record holds the paper")


class RevisionOut(_Out):
    """One entry of a paper's append-only history (``syncd history --json``)."""

    seq: int
    observed_at: str = Field(description="ISO 8601, UTC")
    source: str = Field(description='"arxiv", or "seed:<file>" for a seed document')
    version: int | None
    kinds: list[str]
    changes: dict[str, dict[str, Any]] = Field(
        description='per changed field {"old", "new"}; lists also "added", "removed"'
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
    author: str
    paper: PaperRef | None = Field(
        description='null for "author.added", which is about the author: see changes.author'
    )
    kinds: list[str]
    changes: dict[str, dict[str, Any]]
    record: RecordOut | None


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


class ErrorOut(_Out):
    """What went wrong, in one line that echoes nothing secret."""

    error: str
