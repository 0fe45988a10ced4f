"""Row mappers: database rows in, frozen domain objects out."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from syncd.domain.model import Event, Paper, PaperState, Revision, SyncRun
from syncd.domain.publications import (
    Evidence,
    LinkState,
    MatchLevel,
    Notice,
    PublicationLink,
    PublicationSource,
)
from syncd.domain.record import Record
from syncd.domain.vocabulary import Origin, PaperStatus, RunStatus
from syncd.storage.database import utc

__all__ = [
    "event",
    "paper",
    "paper_state",
    "publication_link",
    "publication_link_values",
    "publication_notice",
    "revision",
    "sync_run",
]


def paper_state(row: sa.Row[Any]) -> PaperState:
    """A ``PaperState`` from a row with the papers table's bookkeeping columns."""
    return PaperState(
        id=row.id,
        key=row.key,
        arxiv_id=row.arxiv_id,
        status=PaperStatus(row.status),
        origin=Origin(row.origin),
        record_hash=row.record_hash,
        absent_syncs=row.absent_syncs,
    )


def paper(row: sa.Row[Any], authors: tuple[str, ...] = ()) -> Paper:
    """A ``Paper`` from a papers row joined with one author's tie and name; ``authors``:
    the followed authors tracking it, when the read looked them up."""
    return Paper(
        id=row.id,
        author=row.author,
        key=row.key,
        arxiv_id=row.arxiv_id,
        status=PaperStatus(row.status),
        origin=Origin(row.origin),
        record=Record.from_dict(row.record),
        record_hash=row.record_hash,
        absent_syncs=row.absent_syncs,
        claimed=row.claimed,
        authors=authors,
    )


def revision(row: sa.Row[Any]) -> Revision:
    """A ``Revision`` from a revisions row."""
    return Revision(
        seq=row.seq,
        observed_at=utc(row.observed_at),
        source=row.source,
        version=row.version,
        version_date=utc(row.version_date) if row.version_date is not None else None,
        kinds=tuple(row.kinds),
        changes=row.changes,
        record=Record.from_dict(row.record),
    )


def event(row: sa.Row[Any]) -> Event:
    """An ``Event`` from an events row joined with its author, paper and revision record."""
    return Event(
        seq=row.seq,
        id=row.id,
        type=row.type,
        created_at=utc(row.created_at),
        author=row.author,
        paper_key=row.paper_key,
        arxiv_id=row.arxiv_id,
        kinds=tuple(row.kinds),
        changes=row.changes,
        record=Record.from_dict(row.record) if row.record is not None else None,
        authors=tuple(row.authors or ()) or (row.author,),
    )


def sync_run(row: sa.Row[Any]) -> SyncRun:
    """A ``SyncRun`` from a sync_runs row joined with its author's name."""
    return SyncRun(
        id=row.id,
        author=row.author,
        started_at=utc(row.started_at),
        finished_at=utc(row.finished_at) if row.finished_at is not None else None,
        status=RunStatus(row.status),
        error=row.error,
        requests=row.requests,
        entries=row.entries,
        events=row.events,
    )


def publication_link(row: sa.Row[Any]) -> PublicationLink:
    """A ``PublicationLink`` with its ``Evidence`` from a publication_links row."""
    return PublicationLink(
        doi=row.doi,
        venue=row.venue,
        type=row.type,
        date=row.date,
        title=row.title,
        url=row.url,
        evidence=Evidence(
            level=MatchLevel(row.level),
            source=PublicationSource(row.source),
            how=row.how,
            score=row.score,
            title_similarity=row.title_similarity,
            author_share=row.author_share,
            year_gap=row.year_gap,
        ),
        state=LinkState(row.state),
    )


def publication_link_values(link: PublicationLink) -> dict[str, Any]:
    """The publication_links columns a link sets (its paper, key and dates aside)."""
    evidence = link.evidence
    return {
        "doi": link.doi,
        "venue": link.venue,
        "type": link.type,
        "date": link.date,
        "title": link.title,
        "url": link.url,
        "source": evidence.source.value,
        "level": evidence.level.value,
        "how": evidence.how,
        "score": evidence.score,
        "title_similarity": evidence.title_similarity,
        "author_share": evidence.author_share,
        "year_gap": evidence.year_gap,
        "state": link.state.value,
    }


def publication_notice(row: sa.Row[Any], target_doi: str) -> Notice:
    """A ``Notice`` from a publication_notices row; ``target_doi``: its link's DOI."""
    return Notice(
        doi=row.doi, type=row.type, date=row.date, source=row.source, target_doi=target_doi
    )
