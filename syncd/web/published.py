"""What the pages show of a paper's published version: where, how it was found, its notices.

The paper's page shows its published version with the evidence in words,
the candidates waiting for a person (never as fact), every notice on the
version, and a banner when one retracts it; the lists (the index, a group's
and an author's papers) show each paper's venue and DOI, and whether it was
retracted.  The words are ``syncd.render.publications``', as in the events'
messages; the templates escape and isolate every string a source gave.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from syncd.domain.model import Paper
from syncd.domain.publications import (
    Notice,
    PaperPublications,
    PublicationLink,
    link_json,
    notice_is_retraction,
)
from syncd.render.publications import doi_url, found_words, recorder_words, type_words
from syncd.service.app import App

__all__ = ["ShownNotice", "ShownPublication", "listed_publications", "publication_context"]


@dataclass(frozen=True, slots=True)
class ShownPublication:
    """A published version as a page shows it: each field as the source gave it, and how it
    was found (with a bibliographic score's parts) in words."""

    venue: str | None
    doi: str | None
    doi_url: str | None
    type: str
    date: str | None
    title: str | None
    found: str
    retracted: bool = False  # a notice retracts it: the lists say so beside the venue


@dataclass(frozen=True, slots=True)
class ShownNotice:
    """A notice on the published version: ``Correction``, its DOI and date, who recorded it."""

    kind: str
    doi: str
    doi_url: str
    date: str | None
    recorder: str
    retraction: bool


def publication_context(publications: PaperPublications) -> dict[str, Any]:
    """What paper.html shows of the paper's published versions: ``publication`` (or None),
    ``publication_candidates``, ``notices`` (oldest first) and ``retraction`` (the notice
    that retracts it, for the banner, or None)."""
    notices = [_notice(notice) for notice in publications.notices]
    return {
        "publication": _shown(publications.current) if publications.current else None,
        "publication_candidates": [_shown(link) for link in publications.candidates],
        "notices": notices,
        "retraction": next((notice for notice in notices if notice.retraction), None),
    }


def listed_publications(app: App, papers: Sequence[Paper]) -> dict[int, ShownPublication]:
    """Each listed paper's published version, by paper id, read for all at once."""
    listed = app.storage.publication_reads.current_of([paper.id for paper in papers])
    return {
        paper_id: replace(_shown(shown.current), retracted=shown.retracted)
        for paper_id, shown in listed.items()
        if shown.current is not None
    }


def _shown(link: PublicationLink) -> ShownPublication:
    return ShownPublication(
        venue=link.venue,
        doi=link.doi,
        doi_url=doi_url(link.doi) if link.doi else None,
        type=type_words(link.type),
        date=link.date,
        title=link.title,
        found=_sentence(found_words(link_json(link))),
    )


def _notice(notice: Notice) -> ShownNotice:
    return ShownNotice(
        kind=type_words(notice.type).capitalize() or "Notice",
        doi=notice.doi,
        doi_url=doi_url(notice.doi),
        date=notice.date,
        recorder=recorder_words(notice.source),
        retraction=notice_is_retraction(notice.type),
    )


def _sentence(words: str) -> str:
    """``words`` as a sentence starts: ``Found by arXiv's own record`` (``arXiv`` kept)."""
    return words[:1].upper() + words[1:]
