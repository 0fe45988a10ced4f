"""The JSON shapes of syncd's public surface: CLI ``--json`` output and the HTTP API.

Field names follow DESIGN.md; changing one breaks users' scripts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from syncd.domain.history import withdrawal_notice
from syncd.domain.model import EndpointSummary, Event, Paper, PaperDetails, Revision
from syncd.domain.publications import link_json, notice_json
from syncd.domain.reports import REPORT_COLUMNS, Report
from syncd.domain.vocabulary import AUTHOR_EVENTS

__all__ = [
    "FieldValue",
    "endpoint_json",
    "event_json",
    "field_evolution",
    "paper_json",
    "report_json",
    "revision_json",
    "revision_label",
]

FieldValue = tuple[Any, tuple[str, ...]]
"""One value a field took, and the labels of the revisions that carried it."""


def paper_json(paper: Paper, details: PaperDetails) -> dict[str, Any]:
    """A paper as ``syncd papers --json`` lists it: what its page shows.

    ``authors`` are arXiv's list; ``followed_authors`` those of them followed
    here who hold the paper; ``author`` the one whose record this row is;
    ``publication`` its published version (``link_json``), null when none is
    known, and ``notices`` the corrections and retractions of that version.
    """
    record = paper.record
    primary = [record.primary_category] if record.primary_category else []
    return {
        "key": paper.key,
        "arxiv_id": paper.arxiv_id,
        "version": record.version,
        "title": record.title,
        "authors": list(record.authors),
        "authors_complete": record.authors_complete,
        "abstract": record.abstract,
        "categories": primary + [c for c in record.categories if c not in primary],
        "withdrawn": record.withdrawn,
        "withdrawn_by": record.withdrawn_by if record.withdrawn else None,
        "withdrawal_notice": (withdrawal_notice(record) or None) if record.withdrawn else None,
        "versions": [
            {"version": v.version, "date": v.date.isoformat() if v.date else None}
            for v in details.versions
        ],
        "status": paper.status,
        "origin": paper.origin,
        "author": paper.author,
        "followed_authors": list(details.followed_authors),
        "claimed": paper.claimed,
        "publication": link_json(details.publication) if details.publication else None,
        "notices": [notice_json(notice) for notice in details.notices],
    }


def revision_json(revision: Revision) -> dict[str, Any]:
    """One history item."""
    return {
        "seq": revision.seq,
        "observed_at": revision.observed_at.isoformat(),
        "source": revision.source,
        "version": revision.version,
        "version_date": revision.version_date.isoformat() if revision.version_date else None,
        "kinds": list(revision.kinds),
        "changes": revision.changes,
        "record": revision.record.to_dict(),
    }


def event_json(event: Event) -> dict[str, Any]:
    """One event, as listed by ``syncd events --json`` and carried by webhooks.

    An author's event (``author.added``, ``author.review_needed``) is about
    no paper: its ``paper`` and ``record`` are null and its ``changes`` hold
    ``author`` (name, counts, held ids).
    """
    about_paper = event.type not in AUTHOR_EVENTS
    record = event.record if about_paper else None
    return {
        "id": event.id,
        "seq": event.seq,
        "type": event.type,
        "created_at": event.created_at.isoformat(),
        "author": event.author,
        "authors": list(event.names),
        "paper": {"key": event.paper_key, "arxiv_id": event.arxiv_id} if about_paper else None,
        "kinds": list(event.kinds),
        "changes": event.changes,
        "record": record.to_dict() if record is not None else None,
    }


def revision_label(revision: Revision) -> str:
    """``v2`` for an arXiv version, ``seed`` for a seed document's revision."""
    return "seed" if revision.version is None else f"v{revision.version}"


def field_evolution(revisions: Sequence[Revision], name: str) -> list[FieldValue]:
    """How one record field evolved: each distinct value once, in order of first appearance,
    with the labels of the revisions (``seed``, ``v1``, ...) that carried it.

    A seed revision without the field is left out: a seed page that does
    not show a comment says nothing about it (``vocabulary.RECORD_FIELDS``).
    """
    values: dict[str, FieldValue] = {}
    for revision in revisions:
        value = revision.record.to_dict()[name]
        if revision.version is None and value in (None, []):
            continue
        key = json.dumps(value, sort_keys=True)
        known, labels = values.get(key, (value, ()))
        label = revision_label(revision)
        values[key] = (known, labels if label in labels else (*labels, label))
    return list(values.values())


def endpoint_json(summary: EndpointSummary, origin: str) -> dict[str, Any]:
    """A webhook endpoint and its delivery counts, as ``syncd webhooks list --json`` shows it.

    ``origin`` is the URL's scheme and host only: chat services put tokens in paths.
    """
    return {
        "name": summary.name,
        "url": origin,
        "active": summary.active,
        "disabled_at": summary.disabled_at.isoformat() if summary.disabled_at else None,
        "disabled_reason": summary.disabled_reason,
        "pending": summary.pending,
        "delivered": summary.delivered,
        "dead": summary.dead,
        "next_attempt_at": (
            summary.next_attempt_at.isoformat() if summary.next_attempt_at else None
        ),
        "last_error": summary.last_error,
        "authors": list(summary.authors),
        "groups": list(summary.groups),
    }


def report_json(report: Report) -> dict[str, Any]:
    """A group's report as ``syncd report --json`` prints it: the period, a row per member,
    the group's total (each change once)."""
    columns = REPORT_COLUMNS[1:]
    return {
        "group": report.group,
        "since": report.period.since.isoformat(),
        "until": report.period.until.isoformat(),
        "people": [dict(zip(REPORT_COLUMNS, row.values, strict=True)) for row in report.rows],
        "total": dict(zip(columns, report.total.values[1:], strict=True)),
    }
