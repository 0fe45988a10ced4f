"""An author's baseline: what their first complete sync (or harvest pass) announces, and what
it keeps quiet.

A new author's papers are history, not news: the first complete look at them
records them without a ``paper.added`` each and announces the author once
(``author.added``, its counts from ``Baseline``).  That look is a name query
(the first cycle), or, while harvesting, a harvest pass:

* during a pass that started before the author was added, every record that
  may be theirs is stored as a candidate awaiting the pass
  (``AWAITING_HARVEST``, ``pending_basis``): nothing is decided page by page,
  so a name-only author's co-author basis sees all their papers at once;
* when the pass ends, the baseline decides them all with the same rules as a
  first sync (claims, ``include_ids``, the co-author basis), quietly;
* the pass saw only records changed since its ``from`` day: a paper a later
  cycle finds whose version is older than that day was no news the harvest
  missed but part of the history the pass could not list, and is recorded as
  the baseline would have (``quiet_before``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from syncd.domain.basis import Basis
from syncd.domain.model import PaperWrite
from syncd.domain.record import Record
from syncd.domain.vocabulary import EventType, PaperStatus

__all__ = [
    "AWAITING_HARVEST",
    "Baseline",
    "announcement",
    "pending_basis",
    "quiet_before",
    "unannounced",
]

# Why a paper of an author waiting for their harvest baseline is held meanwhile.
AWAITING_HARVEST = "awaiting the harvest's baseline: decided when its pass ends"
# The events a baseline does not publish: its papers are history, not news.
_HISTORY = (EventType.ADDED, EventType.LINKED)


@dataclass(frozen=True, slots=True)
class Baseline:
    """What a baseline announces in its one ``author.added``: the papers as they now stand.

    ``tracked`` counts the claimed ones too; ``candidates`` are arXiv ids.
    """

    tracked: int
    claimed: int
    candidates: tuple[str, ...]
    needs_review: bool

    def changes(
        self,
        name: str,
        orcid: str | None,
        arxiv_author_id: str | None,
        unknown_id: str | None = None,
    ) -> dict[str, Any]:
        """The ``changes`` of the ``author.added`` event: who, and their papers as counted.

        ``unknown_id``: the id of the author's feed arXiv knows no author by.
        """
        return {
            "author": {
                "name": name,
                "orcid": orcid,
                "arxiv_author_id": arxiv_author_id,
                "unknown_id": unknown_id,
                "papers": self.tracked,
                "claimed": self.claimed,
                "candidates": len(self.candidates),
                "candidate_ids": list(self.candidates),
                "needs_review": self.needs_review,
            }
        }


def announcement(writes: Sequence[PaperWrite], changes: Mapping[str, Any]) -> PaperWrite | None:
    """The ``author.added`` event of a baseline, filed under one of the papers ``writes``
    store (the store gives it the paper's id when that paper is new).

    Every event row names a paper (the outbox orders deliveries by paper), so
    the announcement is filed under the first tracked paper by key, or the
    first paper at all; the payload says it is about the author.  An author
    with no paper yet has nothing to announce.
    """
    papers = sorted(writes, key=lambda w: (w.status != PaperStatus.TRACKED, w.key))
    if not papers:
        return None
    host = papers[0]
    return PaperWrite(
        key=host.key,
        arxiv_id=host.arxiv_id,
        status=host.status,
        origin=host.origin,
        paper_id=host.paper_id,
        event_type=EventType.AUTHOR_ADDED,
        event_changes=changes,
    )


def unannounced(write: PaperWrite) -> PaperWrite:
    """A baseline's write: recorded, linked and backfilled as usual, announcing nothing."""
    if write.event_type not in _HISTORY:
        return write
    return _silent(write)


def pending_basis(arxiv_ids: Collection[str]) -> Basis:
    """During a harvest pass before the author's baseline: every paper held, awaiting it."""
    return Basis(frozenset(), dict.fromkeys(arxiv_ids, AWAITING_HARVEST))


def quiet_before(
    writes: Sequence[PaperWrite], records: Mapping[str, Record], since: date | None
) -> Sequence[PaperWrite]:
    """``writes`` of a cycle of an author a harvest baselined from the day ``since``, the
    papers whose version is older than that day announcing nothing (see the module's doc);
    ``writes`` as they are when ``since`` is None (a name query took the baseline).

    ``records`` are the cycle's entries by arXiv id.  A review notice is kept
    quiet only when every paper it names is that old.
    """
    if since is None:
        return writes
    old = {w.key for w in writes if _older(records.get(w.arxiv_id or ""), since)}
    return tuple(_silent(w) if _history(w, old) else w for w in writes)


def _history(write: PaperWrite, old: Collection[str]) -> bool:
    """Whether ``write`` announces only papers of keys ``old``: history, not news."""
    if write.event_type in _HISTORY:
        return write.key in old
    if write.event_type == EventType.REVIEW_NEEDED:
        named = write.event_changes.get("author", {}).get("candidate_ids", ())
        return all(key in old for key in named)
    return False


def _older(record: Record | None, since: date) -> bool:
    """Whether ``record``'s version is dated before ``since`` (an unknown date is not)."""
    dated = record.version_date if record is not None else None
    return dated is not None and dated.date() < since


def _silent(write: PaperWrite) -> PaperWrite:
    return replace(write, event_type=None, event_kinds=(), event_changes={})
