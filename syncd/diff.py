"""What changed between two canonical records, as event kinds and field changes.

A pure function of two records.  ``deepdiff`` finds the fields that differ;
this module decides what a difference means: a truncated author list that
is a prefix of the full one is no change, and a field a seed document cannot
carry is unknown rather than empty, so its first value on arXiv is no change.
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
    changed = DeepDiff(before, after, verbose_level=0).affected_root_keys
    changes: dict[str, dict[str, Any]] = {}
    for name in _FIELD_KIND:
        if name in changed:
            changes[name] = {"old": before[name], "new": after[name]}
    if "authors" in changes:
        old_keys = {normalize_name(n) for n in before["authors"]}
        new_keys = {normalize_name(n) for n in after["authors"]}
        changes["authors"]["added"] = [
            n for n in after["authors"] if normalize_name(n) not in old_keys
        ]
        changes["authors"]["removed"] = [
            n for n in before["authors"] if normalize_name(n) not in new_keys
        ]
    reported = {_FIELD_KIND[name] for name in changes}
    return Change(kinds=tuple(k for k in KINDS if k in reported), changes=changes)


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
    }
    for seed, _ in ((record, other), (other, record)):
        if seed.is_seed:
            # A seed page shows no version, comment, journal ref or DOI and only
            # the primary category: unknown there, so not comparable.
            for name in ("version", "categories", "comment", "journal_ref", "doi", "withdrawn"):
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
