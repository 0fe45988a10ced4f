"""Which of a name query's papers a name-only author's first sync takes as theirs.

An author followed by name alone (no seeds, no ORCID iD or arXiv author id)
has nothing to tell them from namesakes: ``au:"Ke Zhang"`` finds every Ke
Zhang.  But one person's papers hang together through their co-authors, and
a namesake's through others.  So the first sync groups the papers into the
connected components of co-authorship (two papers are joined when they
share a co-author; every form of the author's own name, as
``syncd.domain.names.could_be`` reads it, joins nothing) and takes the
largest group as the author's basis when it is clearly the largest: at least
``margin`` times the papers of the next.  The rest stay candidates, each
with the reason a reviewer reads.  With no clear winner nothing is taken:
every paper is a candidate whose reason starts with ``NEEDS_REVIEW``.

Only papers that name the author as surely as their name can be written
are grouped (``syncd.domain.attribution.read``): for "John Smith", those
listing "John Smith" (or "John A. Smith") that no other followed author could
be.  A paper that gives only initials ("J. Smith"), or a name another
followed author could be as well, decides nothing about the basis: it joins
the basis when it shares a co-author with it, and is held with its doubt
otherwise.  A paper no name of which can be the author is not the basis's
to judge (``syncd.domain.attribution.attribute`` holds it).

Groups of equal size are ordered by how many of the query's papers share a
category with them (the author's main field first), then by their smallest
arXiv id, so the answer never depends on the order arXiv listed them in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from syncd.domain.attribution import NameIndex, Reading, read
from syncd.domain.names import NameMatch, could_be, name_match
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


def _coauthors(record: Record, author: str) -> set[str]:
    """The folded names on ``record`` that cannot be ``author``."""
    return {
        key
        for name in record.authors
        if not could_be(name, author) and (key := normalize_name(name))
    }


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
        for key in _coauthors(record, author):
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


def choose_basis(
    records: Sequence[Record], author: str, margin: float, followed: NameIndex | None = None
) -> Basis:
    """The author's basis among ``records`` (one name query's papers), or none when unclear.

    ``followed`` names every followed author, so a name another of them could
    be is known to be contested.
    """
    surest = name_match(author, author)  # "Z. Jiang" is never written out
    sure: list[Record] = []
    unsure: list[tuple[Record, Reading]] = []
    for record in records:
        reading = read(record.authors, author, followed)
        if reading.level >= surest and not reading.rivals:
            sure.append(record)
        elif reading.level >= NameMatch.INITIALS:
            unsure.append((record, reading))
    groups = coauthor_groups(sure, author)
    runner_up = len(groups[1]) if len(groups) > 1 else 0
    if not groups or len(groups[0]) < margin * runner_up:
        return _unclear(groups, unsure, author, margin)
    largest = groups[0]
    taken = {r.arxiv_id or "" for r in largest}
    held = f"shares no co-author with the {_papers(len(largest))} of the basis"
    reasons = {r.arxiv_id or "": held for g in groups[1:] for r in g}
    circle = set().union(*(_coauthors(r, author) for r in largest))
    for record, reading in unsure:
        if _coauthors(record, author) & circle:
            taken.add(record.arxiv_id or "")
        else:
            reasons[record.arxiv_id or ""] = f"{reading.doubt(author)}; the paper {held}"
    return Basis(frozenset(taken), reasons)


def _unclear(
    groups: Sequence[Sequence[Record]],
    unsure: Sequence[tuple[Record, Reading]],
    author: str,
    margin: float,
) -> Basis:
    """No group is clearly the author's: every paper held, its reason starting ``NEEDS_REVIEW``."""
    if groups:
        runner_up = len(groups[1]) if len(groups) > 1 else 0
        why = (
            f"{NEEDS_REVIEW}: no co-author group is clearly the author's"
            f" (the largest holds {_papers(len(groups[0]))}, the next {runner_up};"
            f" [sync] basis_margin is {margin:g})"
        )
    else:
        why = f"{NEEDS_REVIEW}: no paper names the author beyond doubt"
    reasons = {r.arxiv_id or "": why for g in groups for r in g}
    reasons |= {r.arxiv_id or "": f"{why}; {reading.doubt(author)}" for r, reading in unsure}
    return Basis(frozenset(), reasons)


def _papers(count: int) -> str:
    return f"{count} paper{'s' if count != 1 else ''}"


def _categories(record: Record) -> tuple[str, ...]:
    primary = (record.primary_category,) if record.primary_category else ()
    return primary + tuple(record.categories)
