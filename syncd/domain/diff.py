"""What changed between two canonical records, as event kinds and field changes.

A pure function of two records.  Equality finds the fields that differ,
``deepdiff`` says what changed inside the lists (authors and categories added
or removed); this module decides what a difference means: a truncated
author list that is a prefix of the full one is no change, nor are the same
names read another way (``syncd.domain.canonical.same_names``: a record
stored before syncd read every format as arXiv means it), and a field a
seed document cannot carry is unknown rather than empty, so its first value
on arXiv is no change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from syncd.domain.canonical import same_names
from syncd.domain.record import Record, normalize_name
from syncd.domain.vocabulary import KINDS, RECORD_FIELDS, RecordField

__all__ = ["KINDS", "Change", "diff_records"]

# The compared fields in the order their changes are reported: by kind, then
# in record order (primary_category before categories).
_COMPARED: tuple[RecordField, ...] = tuple(
    f for kind in KINDS for f in RECORD_FIELDS if f.kind == kind
)
# What a seed page cannot vouch for: fields it never shows, and those it
# shows only sometimes when a given seed record lacks them.
_NEVER_ON_SEEDS = tuple(f.name for f in _COMPARED if f.seed == "never")
_SOMETIMES_ON_SEEDS = tuple(f.name for f in _COMPARED if f.seed == "if_present")
_LIST_FIELDS = tuple(f.name for f in _COMPARED if f.shape in ("names", "set"))


@dataclass(frozen=True, slots=True)
class Change:
    """The kinds of a change and, per changed field, ``{"old": ..., "new": ...}``.

    Authors and categories add ``added`` and ``removed``; a version that
    jumps adds ``skipped_versions``, the versions in between.
    """

    kinds: tuple[str, ...]
    changes: dict[str, dict[str, Any]]

    def __bool__(self) -> bool:
        return bool(self.kinds)


def diff_records(old: Record, new: Record) -> Change:
    """Compare ``old`` with ``new`` and report what a reader would call a change."""
    before, after = _comparable(old, new), _comparable(new, old)
    # Plain equality finds the changed fields; it runs for every changed paper
    # of a busy cycle, where a DeepDiff per record would cost ~100 µs each.
    changed = [f for f in _COMPARED if f.name in before and before[f.name] != after[f.name]]
    changes: dict[str, dict[str, Any]] = {
        f.name: {"old": before[f.name], "new": after[f.name]} for f in changed
    }
    for name in _LIST_FIELDS:
        if name in changes:
            changes[name] |= _list_change(before[name], after[name])
    if "version" in changes:
        skipped = _skipped_versions(old.version, new.version)
        if skipped:
            changes["version"]["skipped_versions"] = skipped
    reported = {f.kind for f in changed}
    return Change(kinds=tuple(k for k in KINDS if k in reported), changes=changes)


def _skipped_versions(old: int | None, new: int | None) -> list[int]:
    """The versions between ``old`` and ``new`` that neither record is: v2 → v4 skipped [3]."""
    if old is None or new is None:
        return []
    return list(range(old + 1, new))


def _list_change(old: list[str], new: list[str]) -> dict[str, list[str]]:
    """Who or what was added and removed, by DeepDiff of the two lists as multisets.

    A reordered list changes but adds and removes nothing.
    """
    # Imported here: deepdiff takes 0.2 s to import, and the commands that only
    # read (`syncd papers`, `events`) reach this module through the history.
    from deepdiff import DeepDiff  # noqa: PLC0415

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
    view: dict[str, Any] = {f.name: _comparable_value(record, f) for f in _COMPARED}
    for seed in (record, other):
        if seed.is_seed:
            for name in _NEVER_ON_SEEDS:
                view.pop(name, None)
            for name in _SOMETIMES_ON_SEEDS:
                if getattr(seed, name) is None:
                    view.pop(name, None)
    if _authors_agree_on_prefix(record, other) or _authors_read_alike(record, other):
        view.pop("authors")
    return view


def _authors_read_alike(a: Record, b: Record) -> bool:
    """True when two arXiv records list the same names, read by different rules."""
    return (
        a.authors != b.authors
        and not a.is_seed
        and not b.is_seed
        and same_names(a.authors, b.authors)
    )


def _comparable_value(record: Record, field: RecordField) -> Any:
    """A field's value as the diff compares and reports it: lists for JSON, sets sorted."""
    value = getattr(record, field.name)
    if field.shape == "names":
        return list(value)
    if field.shape == "set":
        return sorted(value)
    return value


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
