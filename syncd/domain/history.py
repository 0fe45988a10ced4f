"""A paper's history as people read it: in version order, each revision against the one before.

A revision stores the change that was announced when it was written: against
whatever the record held then.  Backfilled versions arrive after the version
syncd first saw (v1 is stored after v2), so those stored changes tell the
story out of order.  Wherever a history is shown (the paper's page, ``syncd
history``, ``/api/v1/papers/{ref}/history``) it is retold here, from the
stored records alone: seed revisions first, then v1, v2, ..., later
observations of one version after its first, and each revision's kinds and
changes computed against its neighbour before it in that order.

Events are not retold: they are what was announced, and stay so.

Pure: plain revisions in, plain values out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from syncd.domain.diff import Change, diff_records
from syncd.domain.model import Revision
from syncd.domain.record import Record
from syncd.domain.withdrawal import WithdrawnBy, detect_withdrawal

__all__ = [
    "HistoryStep",
    "RevisionRefError",
    "WithdrawalMark",
    "compare_revisions",
    "find_revision",
    "history_steps",
    "in_version_order",
    "revision_refs",
    "withdrawal_mark",
    "withdrawal_notice",
]

_VERSION_REF = re.compile(r"v([0-9]{1,4})")
_SEQ_REF = re.compile(r"r([0-9]{1,9})")


@dataclass(frozen=True, slots=True)
class HistoryStep:
    """One revision of a history, its ``kinds`` and ``changes`` against ``previous``.

    ``previous`` is the revision before it in version order; ``None`` for
    the first, whose kinds and changes are empty (it is where the story starts).
    """

    revision: Revision
    previous: Revision | None

    @property
    def first(self) -> bool:
        """Whether this is where the history starts."""
        return self.previous is None


@dataclass(frozen=True, slots=True)
class WithdrawalMark:
    """A paper whose current version is withdrawn: since which version, by whom, the notice.

    ``version`` is the first of the withdrawn versions the paper ends with
    (None when only a seed document is known); ``notice`` is arXiv's notice
    as it stands, from the abstract or the comment that carries it.
    """

    version: int | None
    by: WithdrawnBy | None
    notice: str


class RevisionRefError(ValueError):
    """A revision reference that names no revision of the history; the message says why."""


def in_version_order(revisions: Iterable[Revision]) -> list[Revision]:
    """Seed revisions first, then each version's, each version's observations as stored."""
    return sorted(revisions, key=lambda r: (r.version is not None, r.version or 0, r.seq))


def history_steps(revisions: Iterable[Revision]) -> list[HistoryStep]:
    """The history in version order, each revision's changes against the one before it."""
    steps: list[HistoryStep] = []
    previous: Revision | None = None
    for revision in in_version_order(revisions):
        change = diff_records(previous.record, revision.record) if previous else Change((), {})
        shown = replace(revision, kinds=change.kinds, changes=change.changes)
        steps.append(HistoryStep(shown, previous))
        previous = revision
    return steps


def compare_revisions(old: Revision, new: Revision) -> Change:
    """What differs from ``old`` to ``new``, any two revisions of one paper."""
    return diff_records(old.record, new.record)


def revision_refs(revisions: Iterable[Revision]) -> dict[int, str]:
    """The shortest reference ``find_revision`` takes back to each revision, by seq.

    ``v2`` for a version's latest observation, ``seed`` for the last seed
    revision, ``r<seq>`` for any other.
    """
    refs: dict[int, str] = {}
    named: set[str] = set()
    for revision in reversed(in_version_order(revisions)):
        short = "seed" if revision.version is None else f"v{revision.version}"
        refs[revision.seq] = short if short not in named else f"r{revision.seq}"
        named.add(short)
    return refs


def find_revision(revisions: Sequence[Revision], ref: str) -> Revision:
    """The revision ``ref`` names: ``v3`` (version 3's latest observation), ``seed`` (the
    last seed revision) or ``r12`` (the revision stored as seq 12).

    Raises ``RevisionRefError`` naming what the history holds instead.
    """
    ordered = in_version_order(revisions)
    found: Revision | None = None
    if ref == "seed":
        found = next((r for r in reversed(ordered) if r.version is None), None)
    elif match := _VERSION_REF.fullmatch(ref):
        version = int(match.group(1))
        found = next((r for r in reversed(ordered) if r.version == version), None)
    elif match := _SEQ_REF.fullmatch(ref):
        seq = int(match.group(1))
        found = next((r for r in ordered if r.seq == seq), None)
    else:
        raise RevisionRefError(f"{ref[:40]!r} is not vN, seed or rN; {_held(ordered)}")
    if found is None:
        raise RevisionRefError(f"this paper has no revision {ref}; {_held(ordered)}")
    return found


def withdrawal_mark(revisions: Iterable[Revision]) -> WithdrawalMark | None:
    """Whether the paper's current version is withdrawn, since when and with which notice.

    None when it is not.  The version is the first of the run of withdrawn
    versions the history ends with.
    """
    ordered = in_version_order(revisions)
    if not ordered or not ordered[-1].record.withdrawn:
        return None
    since = ordered[-1]
    for revision in reversed(ordered):
        if not revision.record.withdrawn:
            break
        since = revision
    current = ordered[-1].record
    return WithdrawalMark(since.version, current.withdrawn_by, withdrawal_notice(current))


def withdrawal_notice(record: Record) -> str:
    """The text of a withdrawn record's notice: its abstract, or its comment when the
    notice is there (an admin note appended to it)."""
    if record.abstract and detect_withdrawal(record.abstract, None).withdrawn:
        return record.abstract
    return record.comment or record.abstract or ""


def _held(ordered: Sequence[Revision]) -> str:
    versions = sorted({r.version for r in ordered if r.version is not None})
    named = [f"v{v}" for v in versions]
    if any(r.version is None for r in ordered):
        named.insert(0, "seed")
    shown = ", ".join(named) if named else "no versions"
    return f"it has {shown} (or r<seq>, a revision's number)"
