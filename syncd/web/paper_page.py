"""What a paper's page and its compare view show, gathered for their templates.

Like arXiv's abstract page, the current record comes first (with links to
the abstract page, the PDF, each version and the DOI); then what arXiv
lacks: where it was published (``syncd.web.published``: its published
version with the evidence, candidates for review, notices, a banner when it
is retracted), the submission history with arXiv's date and syncd's for each
revision, every change against the revision before it (newest first, from
``syncd.domain.history``), the events announced about the paper, and a
comparison of any two revisions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastapi import HTTPException
from markupsafe import Markup

from syncd.domain.history import (
    HistoryStep,
    RevisionRefError,
    compare_revisions,
    find_revision,
    history_steps,
    in_version_order,
    revision_refs,
    withdrawal_mark,
)
from syncd.domain.model import Event, Paper, Revision
from syncd.domain.vocabulary import EventType, Origin, PaperStatus, source_label
from syncd.render.describe import describe
from syncd.render.field_diffs import kind_label
from syncd.render.html import changes_html
from syncd.service.app import App
from syncd.storage import EventQuery
from syncd.web.fragments import Fragments
from syncd.web.paging import PAGE_SIZE
from syncd.web.published import publication_context

__all__ = ["ARXIV", "compare_context", "paper_context"]

ARXIV = "https://arxiv.org"
_WITHDRAWN_BY = {"author": "by the authors", "admin": "by arXiv administrators"}
_NO_CHANGE = Markup('<p class="nochange">No change in the compared fields.</p>')


@dataclass(frozen=True, slots=True)
class _Step:
    """A revision as the page lists it: in the submission history and among the changes."""

    ref: str
    label: str
    source: str
    observed_at: datetime
    version_date: datetime | None
    kinds: tuple[str, ...]
    against: str | None
    html: Markup


@dataclass(frozen=True, slots=True)
class _Announced:
    """An event about the paper, as it was announced."""

    headline: str
    summary: str
    when: datetime
    type: str


def paper_context(app: App, fragments: Fragments, paper: Paper) -> dict[str, Any]:
    """What paper.html shows of ``paper``."""
    revisions = app.storage.papers.history(paper.id)
    steps = history_steps(revisions)
    refs = revision_refs(revisions)
    shown = [_step(paper.id, step, refs, fragments) for step in steps]
    mark = withdrawal_mark(revisions)
    # The latest page of its events; /events?paper= pages through them all.
    query = EventQuery(paper_id=paper.id, newest_first=True, limit=PAGE_SIZE + 1)
    found = app.storage.events.page(query)
    announced = [_announced(e) for e in found[:PAGE_SIZE]]
    removed = next((e.when for e in announced if e.type == EventType.REMOVED), None)
    return {
        "paper": paper,
        "record": paper.record,
        "steps": shown,
        "changes": [s for s in reversed(shown) if s.against is not None],
        "withdrawal": mark,
        "withdrawn_by": _WITHDRAWN_BY.get(mark.by or "", "") if mark else "",
        "announced": announced,
        "more_announced": len(found) > PAGE_SIZE,
        "unannounced": _unannounced(paper),
        # When it left the author's results, while it stays out of them.
        "removed_at": removed if paper.status == PaperStatus.REMOVED else None,
        "versions": list(range(1, (paper.record.version or 0) + 1)),
        "choices": [(s.ref, s.label) for s in shown],
        "arxiv": ARXIV,
        "kind_label": kind_label,
        # Whether syncd looks for published versions: a page says so when it found none.
        "publications_enabled": app.settings.publications.enabled,
        **publication_context(app.storage.publication_reads.of_paper(paper.id)),
    }


def _unannounced(paper: Paper) -> str:
    """Why a paper without an event has none: what the page says in place of its events."""
    if paper.origin == Origin.SEED and paper.status == PaperStatus.UNLINKED:
        return "seeding announces nothing"
    if paper.status == PaperStatus.CANDIDATE:
        return "a candidate is announced once it is taken as the author's"
    # Tracked without an event of its own: recorded by the author's first complete sync.
    return "it was recorded by its author's first sync, which announces the author, not each paper"


def compare_context(
    app: App, paper: Paper, old_ref: str | None, new_ref: str | None
) -> dict[str, Any]:
    """What compare.html shows: the change from one revision of ``paper`` to another.

    Without ``from`` the first revision is compared, without ``to`` the
    latest; a reference the history does not hold is a 400 naming it.
    """
    revisions = in_version_order(app.storage.papers.history(paper.id))
    if not revisions:
        raise HTTPException(404, "this paper has no revisions to compare")
    old = _chosen(revisions, old_ref, revisions[0], "from")
    new = _chosen(revisions, new_ref, revisions[-1], "to")
    change = compare_revisions(old, new)
    refs = revision_refs(revisions)
    return {
        "paper": paper,
        "old": _compared(old, refs),
        "new": _compared(new, refs),
        "html": changes_html(change.changes) if change else _NO_CHANGE,
        "kinds": change.kinds,
        "choices": [(refs[r.seq], _label(r, refs)) for r in revisions],
        "kind_label": kind_label,
    }


def _chosen(
    revisions: Sequence[Revision], ref: str | None, default: Revision, name: str
) -> Revision:
    """The revision ``ref`` names, ``default`` without one; a 400 naming parameter ``name``."""
    if not ref:
        return default
    try:
        return find_revision(revisions, ref)
    except RevisionRefError as exc:
        raise HTTPException(400, f"bad parameter {name!r}: {exc}") from None


def _compared(revision: Revision, refs: Mapping[int, str]) -> dict[str, Any]:
    return {
        "ref": refs[revision.seq],
        "label": _label(revision, refs),
        "source": source_label(revision.source, revision.version),
    }


def _step(paper_id: int, step: HistoryStep, refs: Mapping[int, str], fragments: Fragments) -> _Step:
    revision = step.revision
    return _Step(
        ref=refs[revision.seq],
        label=_label(revision, refs),
        source=source_label(revision.source, revision.version),
        observed_at=revision.observed_at,
        version_date=revision.version_date,
        kinds=revision.kinds,
        against=_label(step.previous, refs) if step.previous is not None else None,
        html=fragments.step(paper_id, step),
    )


def _label(revision: Revision, refs: Mapping[int, str]) -> str:
    """``v2``, or ``seed`` for a seed document's revision; an earlier observation of the
    same version (or seed) adds its reference: ``v2 (r7)``."""
    short = "seed" if revision.version is None else f"v{revision.version}"
    ref = refs[revision.seq]
    return short if ref == short else f"{short} ({ref})"


def _announced(event: Event) -> _Announced:
    told = describe(event, public_url=None)
    return _Announced(told.headline, told.summary, event.created_at, event.type)
