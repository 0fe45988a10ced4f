"""What changed between two canonical records, as event kinds and field changes.

A pure function of two records.  Equality finds the fields that differ,
``deepdiff`` says what changed inside the lists (authors and categories added
or removed); this module decides what a difference means: a truncated
author list that is a prefix of the full one is no change, and a field a
seed document cannot carry is unknown rather than empty, so its first value
on arXiv is no change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deepdiff import DeepDiff

from syncd.record import Record, normalize_name

__all__ = ["KINDS", "Change", "diff_records"]

# Event kinds, in the order they are reported.
KINDS: tuple[str, ...] = (
    "version",
    "title",
    "authors",
    "abstract",
    "categories",
    "comment",
    "journal_ref",
    "doi",
    "withdrawn",
)

# The record field behind each compared value, and the kind its change reports.
_FIELD_KIND: dict[str, str] = {
    "version": "version",
    "title": "title",
    "authors": "authors",
    "abstract": "abstract",
    "primary_category": "categories",
    "categories": "categories",
    "comment": "comment",
    "journal_ref": "journal_ref",
    "doi": "doi",
    "withdrawn": "withdrawn",
    "withdrawn_by": "withdrawn",
}


@dataclass(frozen=True, slots=True)
class Change:
    """The kinds of a change and, per changed field, ``{"old": ..., "new": ...}``."""

    kinds: tuple[str, ...]
    changes: dict[str, dict[str, Any]]

    def __bool__(self) -> bool:
        return bool(self.kinds)


def diff_records(old: Record, new: Record) -> Change:
    """Compare ``old`` with ``new`` and report what a reader would call a change."""
    before, after = _comparable(old, new), _comparable(new, old)
    # Plain equality finds the changed fields; it runs for every changed paper
    # of a busy cycle, where a DeepDiff per record would cost ~100 µs each.
    changes: dict[str, dict[str, Any]] = {
        name: {"old": before[name], "new": after[name]}
        for name in _FIELD_KIND
        if name in before and before[name] != after[name]
    }
    for name in ("authors", "categories"):
        if name in changes:
            changes[name] |= _list_change(before[name], after[name])
    reported = {_FIELD_KIND[name] for name in changes}
    return Change(kinds=tuple(k for k in KINDS if k in reported), changes=changes)


def _list_change(old: list[str], new: list[str]) -> dict[str, list[str]]:
    """Who or what was added and removed, by DeepDiff of the two lists as multisets.

    A reordered list changes but adds and removes nothing.
    """
    delta = DeepDiff(old, new, ignore_order=True, report_repetition=True, verbose_level=0)
    return {
        "added": list(delta.get("iterable_item_added", {}).values()),
        "removed": list(delta.get("iterable_item_removed", {}).values()),
    }


def _comparable(record: Record, other: Record) -> dict[str, Any]:
    """The values of ``record`` that a diff against ``other`` should compare.

    Called once from each side, so the rules below apply symmetrically: a
    field is left out when either side cannot vouch for it.
    """
    view: dict[str, Any] = {
        "version": record.version,
        "title": record.title,
        "authors": list(record.authors),
        "abstract": record.abstract,
        "primary_category": record.primary_category,
        "categories": sorted(record.categories),
        "comment": record.comment,
        "journal_ref": record.journal_ref,
        "doi": record.doi,
        "withdrawn": record.withdrawn,
        "withdrawn_by": record.withdrawn_by,
    }
    for seed, _ in ((record, other), (other, record)):
        if seed.is_seed:
            # A seed page shows no version, comment, journal ref or DOI and only
            # the primary category: unknown there, so not comparable.
            for name in (
                "version",
                "categories",
                "comment",
                "journal_ref",
                "doi",
                "withdrawn",
                "withdrawn_by",
            ):
                view.pop(name, None)
            for name in ("title", "abstract", "primary_category"):
                if getattr(seed, name) is None:
                    view.pop(name, None)
    if _authors_agree_on_prefix(record, other):
        view.pop("authors")
    return view


def _authors_agree_on_prefix(a: Record, b: Record) -> bool:
    """True when a truncated list on either side is a prefix of the other list.

    ``Zhida Jiang, Yang Xu, Hongli Xu et al.`` is no author change against a
    full list that starts with those names in that order.
    """
    if a.authors_complete and b.authors_complete:
        return False
    if not a.authors_complete and not b.authors_complete:
        prefix, full = sorted((a.authors, b.authors), key=len)
    elif not a.authors_complete:
        prefix, full = a.authors, b.authors
    else:
        prefix, full = b.authors, a.authors
    return len(prefix) <= len(full) and _names(full[: len(prefix)]) == _names(prefix)


def _names(names: tuple[str, ...]) -> list[str]:
    return [normalize_name(n) for n in names]
