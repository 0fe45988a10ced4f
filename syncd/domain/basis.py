"""Which of a name query's papers a name-only author's first sync takes as theirs.

An author followed by name alone (no seeds, no ORCID iD or arXiv author id)
has nothing to tell them from namesakes: ``au:"Ke Zhang"`` finds every Ke
Zhang.  But one person's papers hang together through their co-authors, and
a namesake's through others.  So the first sync groups the papers into the
connected components of co-authorship (two papers are joined when they
share a co-author; the author's own name, as ``name_matches`` reads it,
joins nothing) and takes the largest group as the author's basis when it is
clearly the largest: at least ``margin`` times the papers of the next.  The
rest stay candidates, each with the reason a reviewer reads.  With no clear
winner nothing is taken: every paper is a candidate whose reason starts with
``NEEDS_REVIEW``.

Groups of equal size are ordered by how many of the query's papers share a
category with them (the author's main field first), then by their smallest
arXiv id, so the answer never depends on the order arXiv listed them in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from syncd.domain.linking import name_matches
from syncd.domain.record import Record, normalize_name

__all__ = ["NEEDS_REVIEW", "Basis", "choose_basis", "coauthor_groups"]

# How a candidate's reason starts when no group was clearly the author's:
# ``syncd authors list`` shows the author as needing review.
NEEDS_REVIEW = "needs review"


@dataclass(frozen=True, slots=True)
class Basis:
    """The papers taken as the author's (arXiv ids), and why each other one is held."""

    taken: frozenset[str]
    reasons: Mapping[str, str]

    @property
    def needs_review(self) -> bool:
        """Whether no group was clearly the author's, so a person must decide."""
        return not self.taken and bool(self.reasons)


def coauthor_groups(records: Sequence[Record], author: str) -> list[list[Record]]:
    """The records' connected components through shared co-authors, largest first.

    Each group keeps its records in the order given; ties are ordered as the
    module says.
    """
    parent = list(range(len(records)))

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    first_with: dict[str, int] = {}
    for index, record in enumerate(records):
        for name in record.authors:
            if name_matches(name, author):
                continue
            key = normalize_name(name)
            if not key:
                continue
            other = first_with.setdefault(key, index)
            parent[root(index)] = root(other)
    groups: dict[int, list[Record]] = {}
    for index, record in enumerate(records):
        groups.setdefault(root(index), []).append(record)

    def rank(group: list[Record]) -> tuple[int, int, str]:
        touched = {c for r in group for c in _categories(r)}
        support = sum(1 for r in records if touched & set(_categories(r)))
        return (-len(group), -support, min(r.arxiv_id or "" for r in group))

    return sorted(groups.values(), key=rank)


def choose_basis(records: Sequence[Record], author: str, margin: float) -> Basis:
    """The author's basis among ``records`` (one name query's papers), or none when unclear."""
    groups = coauthor_groups(records, author)
    if not groups:
        return Basis(frozenset(), {})
    largest = groups[0]
    runner_up = len(groups[1]) if len(groups) > 1 else 0
    if len(largest) >= margin * runner_up:
        taken = frozenset(r.arxiv_id or "" for r in largest)
        reason = f"shares no co-author with the {_papers(len(largest))} of the basis"
        held = {r.arxiv_id or "": reason for g in groups[1:] for r in g}
        return Basis(taken, held)
    reason = (
        f"{NEEDS_REVIEW}: no co-author group is clearly the author's"
        f" (the largest holds {_papers(len(largest))}, the next {runner_up};"
        f" [sync] basis_margin is {margin:g})"
    )
    return Basis(frozenset(), {r.arxiv_id or "": reason for g in groups for r in g})


def _papers(count: int) -> str:
    return f"{count} paper{'s' if count != 1 else ''}"


def _categories(record: Record) -> tuple[str, ...]:
    primary = (record.primary_category,) if record.primary_category else ()
    return primary + tuple(record.categories)
