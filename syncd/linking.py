"""Which paper is an arXiv entry, and is a new entry really the tracked author's?

Pure functions of records.  Seed papers are matched on every revision they
have against every version of an entry we know, so a paper retitled since
its seed capture still links.  A new entry found by an ``au:`` name query is
scored for identity before it is announced, because a name is not a person.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from syncd.matching import Assignment, assign, record_similarity
from syncd.record import Record, normalize_name

__all__ = [
    "LINK_MARGIN",
    "LINK_MINIMUM",
    "Identity",
    "earlier_version_ids",
    "identify",
    "link_seed_papers",
    "name_matches",
]

# A seed revision and an arXiv version of the same paper share a title or an
# abstract nearly word for word (1.0 when exact); a retitled version still
# shares most title words (FlexMARL: 0.67).  Unrelated papers of one author
# stay under 0.25, so a 0.4 floor and a 0.15 lead over the runner-up leave room.
LINK_MINIMUM = 0.4
LINK_MARGIN = 0.15

K = TypeVar("K", bound=Hashable)


def link_seed_papers(
    seeds: Mapping[K, Sequence[Record]],
    versions: Mapping[str, Sequence[Record]],
) -> Assignment[K, str]:
    """Match seed papers (key → every revision's record) to arXiv ids (id → known versions)."""

    def score(key: K, arxiv_id: str) -> float:
        return max(
            (record_similarity(s, v) for s in seeds[key] for v in versions[arxiv_id]),
            default=0.0,
        )

    return assign(seeds, versions, score, minimum=LINK_MINIMUM, margin=LINK_MARGIN)


def earlier_version_ids(entries: Iterable[Record]) -> list[str]:
    """Versioned ids (``2606.03328v1``) of every version before each entry's current one."""
    return [
        f"{entry.arxiv_id}v{n}"
        for entry in entries
        if entry.arxiv_id is not None and entry.version is not None
        for n in range(1, entry.version)
    ]


@dataclass(frozen=True, slots=True)
class Identity:
    """Why a new entry is, or is not, taken to be the tracked author's paper."""

    plausible: bool
    shared_coauthors: tuple[str, ...]
    shared_categories: tuple[str, ...]


def identify(
    entry: Record, known_names: Collection[str], known_categories: Collection[str], author: str
) -> Identity:
    """Score ``entry`` against the names and categories of the author's known papers.

    Plausible when it shares at least one co-author or one category with
    them.  The author's own name is not a co-author: every entry of an
    ``au:`` query has it.
    """
    me = normalize_name(author)
    known_people = {normalize_name(n) for n in known_names} - {me}
    coauthors = tuple(n for n in entry.authors if normalize_name(n) in known_people)
    categories = tuple(c for c in entry.categories if c in known_categories)
    return Identity(
        plausible=bool(coauthors or categories),
        shared_coauthors=coauthors,
        shared_categories=categories,
    )


def name_matches(listed: str, author: str) -> bool:
    """Whether a name on a paper can be ``author``: equal when folded, or same surname and initial.

    Used to give the entries of a batched ``au:"A" OR au:"B"`` query back to
    their authors; arXiv's own ``au:`` matching is looser than equality
    (``Z. Jiang`` is found by ``au:"Zhida Jiang"``).
    """
    a, b = normalize_name(listed).split(), normalize_name(author).split()
    if not a or not b:
        return False
    if a == b:
        return True
    return a[-1] == b[-1] and a[0][0] == b[0][0]
