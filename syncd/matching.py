"""Text similarity and one-to-one assignment, shared by seed import and arXiv linking.

Similarity is the Jaccard index of content words.  It is blunt on purpose:
abstracts of one author's papers share a field's vocabulary, so what decides
a match is not a high score alone but a clear margin over the runner-up
(see ``assign``), and anything ambiguous is left unmatched and reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Generic, TypeVar

from syncd.record import Record, normalize_text

__all__ = ["Assignment", "assign", "record_similarity", "text_similarity"]

# Function words carry no identity; dropping them lets two unrelated abstracts
# of one field score near zero instead of near 0.1.
_STOPWORDS = frozenset(
    """the and for with that this from are was were has have not but its their our
    these those into over under than then also can which while when where what who
    how all any each both such only own same other some most more very via per
    between across within without using based""".split()
)
_WORD_RE = re.compile(r"[^\W_]+")

L = TypeVar("L", bound=Hashable)
R = TypeVar("R", bound=Hashable)


@lru_cache(maxsize=4096)
def _content_words(text: str) -> frozenset[str]:
    words = _WORD_RE.findall(text.casefold())
    return frozenset(w for w in words if len(w) >= 3 and w not in _STOPWORDS)


def text_similarity(a: str | None, b: str | None) -> float:
    """1.0 for equal text, else the Jaccard index of content words; 0.0 if one is missing."""
    na, nb = normalize_text(a), normalize_text(b)
    if na is None or nb is None:
        return 0.0
    if na.casefold() == nb.casefold():
        return 1.0
    wa, wb = _content_words(na), _content_words(nb)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def record_similarity(a: Record, b: Record) -> float:
    """The better of the title and abstract similarities of two records."""
    return max(text_similarity(a.title, b.title), text_similarity(a.abstract, b.abstract))


@dataclass(frozen=True, slots=True)
class Assignment(Generic[L, R]):
    """What ``assign`` decided: confident pairs, and left items that were ambiguous."""

    pairs: Mapping[L, R]
    scores: Mapping[L, float]
    ambiguous: Mapping[L, tuple[R, ...]]


def assign(
    lefts: Iterable[L],
    rights: Iterable[R],
    score: Callable[[L, R], float],
    *,
    minimum: float,
    margin: float,
) -> Assignment[L, R]:
    """Pair each left item with at most one right item, never guessing.

    Exact matches (score 1.0) are settled first and leave the pool, so they
    are not runners-up for anything else.  Every other left item takes its
    best remaining right item only when the score reaches ``minimum`` and
    beats both its own runner-up and every other left item's claim on that
    right item by ``margin``.  Close calls are returned as ``ambiguous``.
    """
    left_items, right_items = list(lefts), list(rights)
    table = {(lf, rt): score(lf, rt) for lf in left_items for rt in right_items}
    pairs: dict[L, R] = {}
    scores: dict[L, float] = {}
    for lf in left_items:
        exact = [rt for rt in right_items if table[lf, rt] >= 1.0 and rt not in pairs.values()]
        if len(exact) == 1:
            pairs[lf], scores[lf] = exact[0], 1.0
    free_lefts = [lf for lf in left_items if lf not in pairs]
    free_rights = [rt for rt in right_items if rt not in pairs.values()]
    ambiguous: dict[L, tuple[R, ...]] = {}
    for lf in free_lefts:
        ranked = sorted(free_rights, key=lambda rt: table[lf, rt], reverse=True)
        if not ranked or table[lf, ranked[0]] < minimum:
            continue
        best = ranked[0]
        runner_up = table[lf, ranked[1]] if len(ranked) > 1 else 0.0
        rivals = [table[other, best] for other in free_lefts if other != lf]
        rival = max(rivals, default=0.0)
        top = table[lf, best]
        if top - runner_up >= margin and top - rival >= margin:
            pairs[lf], scores[lf] = best, top
        else:
            close = tuple(rt for rt in ranked if top - table[lf, rt] < margin)
            ambiguous[lf] = close
    return Assignment(pairs=pairs, scores=scores, ambiguous=ambiguous)
