"""Which records are the same paper, and is a new arXiv entry really the tracked author's?

Everything syncd links lives here, as pure functions of records:

* seed documents to each other (``link_seed_documents``): records of a later
  capture to the papers of earlier ones, by equal abstract first, then by
  similarity;
* seed papers to arXiv entries (``link_seeds_to_arxiv``): every revision a
  seed paper has against every version of an entry we know, so a paper
  retitled since its capture still links;
* new entries to the author (``identify``): a name found by an ``au:`` query
  is not a person, so an entry is scored for identity before it is announced
  (``syncd.domain.attribution`` weighs the score with how the name reads).

Similarity is the Jaccard index of content words.  It is blunt on purpose:
abstracts of one author's papers share a field's vocabulary, so what decides
a match is not a high score alone but a clear margin over the runner-up
(see ``assign``), and anything ambiguous is left unmatched and reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Generic, TypeVar

from syncd.domain.names import could_be
from syncd.domain.record import Record, normalize_name, normalize_text, versioned_id

__all__ = [
    "ARXIV_LINK_MARGIN",
    "ARXIV_LINK_MINIMUM",
    "SEED_DOCUMENT_MARGIN",
    "SEED_DOCUMENT_MINIMUM",
    "Assignment",
    "DocumentLinks",
    "Identity",
    "abstract_key",
    "assign",
    "coauthor_keys",
    "earlier_version_ids",
    "identify",
    "link_seed_documents",
    "link_seeds_to_arxiv",
    "record_similarity",
    "text_similarity",
]

# Across seed documents: unrelated abstracts of this author's field score
# about 0.00-0.05; the calibration paper's two rewritten abstracts score about
# 0.19.  0.15 admits a rewrite, and a 0.10 lead over the runner-up (and over
# any rival claim) keeps a close call from becoming a silent wrong link.
SEED_DOCUMENT_MINIMUM = 0.15
SEED_DOCUMENT_MARGIN = 0.10

# Seed to arXiv: a seed revision and an arXiv version of the same paper share
# a title or an abstract nearly word for word (1.0 when exact); a retitled
# version still shares most title words (FlexMARL: 0.67).  Unrelated papers
# of one author stay under 0.25, so a 0.4 floor and a 0.15 lead leave room.
ARXIV_LINK_MINIMUM = 0.4
ARXIV_LINK_MARGIN = 0.15

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
K = TypeVar("K", bound=Hashable)


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


# -- seed documents -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DocumentLinks:
    """Which records of a document are which known papers, and the close calls left apart.

    ``contested`` maps a record's index to the papers it could not be told
    from, with the similarity to each.
    """

    pairs: Mapping[int, int]
    contested: Mapping[int, tuple[tuple[int, float], ...]]


def abstract_key(record: Record) -> str | None:
    """What an exact abstract match compares: normalised text, case folded."""
    return record.abstract.casefold() if record.abstract else None


def link_seed_documents(
    papers: Sequence[Sequence[Record]], records: Sequence[Record]
) -> DocumentLinks:
    """Link each record of a new seed document to at most one known paper (its revisions).

    Equal abstracts link first, when one-to-one; the rest go through
    ``assign`` on similarity to any revision, since a rewritten paper is
    still recognised by its older text.
    """
    exact, contested = _exact_links(papers, records)
    free_items = [i for i in range(len(records)) if i not in exact and i not in contested]
    taken = set(exact.values()) | {p for candidates in contested.values() for p in candidates}
    free_papers = [p for p in range(len(papers)) if p not in taken]

    def score(item: int, paper: int) -> float:
        return max(record_similarity(known, records[item]) for known in papers[paper])

    result = assign(
        free_items,
        free_papers,
        score,
        minimum=SEED_DOCUMENT_MINIMUM,
        margin=SEED_DOCUMENT_MARGIN,
    )
    close = {**contested, **result.ambiguous}
    return DocumentLinks(
        pairs={**exact, **result.pairs},
        contested={
            item: tuple((p, score(item, p)) for p in candidates)
            for item, candidates in sorted(close.items())
        },
    )


def _exact_links(
    papers: Sequence[Sequence[Record]], records: Sequence[Record]
) -> tuple[dict[int, int], dict[int, tuple[int, ...]]]:
    """Links by equal abstract, and the records whose exact match is not one-to-one."""
    known = [{abstract_key(r) for r in revisions} - {None} for revisions in papers]
    claims: dict[int, list[int]] = {}
    contested: dict[int, tuple[int, ...]] = {}
    for index, record in enumerate(records):
        key = abstract_key(record)
        matches = tuple(p for p, keys in enumerate(known) if key is not None and key in keys)
        if len(matches) == 1:
            claims.setdefault(matches[0], []).append(index)
        elif matches:
            contested[index] = matches
    exact: dict[int, int] = {}
    for paper, claimants in claims.items():
        if len(claimants) == 1:
            exact[claimants[0]] = paper
        else:
            contested.update((index, (paper,)) for index in claimants)
    return exact, contested


# -- seed papers and arXiv entries ----------------------------------------------


def link_seeds_to_arxiv(
    seeds: Mapping[K, Sequence[Record]],
    versions: Mapping[str, Sequence[Record]],
) -> Assignment[K, str]:
    """Match seed papers (key → every revision's record) to arXiv ids (id → known versions)."""

    def score(key: K, arxiv_id: str) -> float:
        return max(
            (record_similarity(s, v) for s in seeds[key] for v in versions[arxiv_id]),
            default=0.0,
        )

    return assign(seeds, versions, score, minimum=ARXIV_LINK_MINIMUM, margin=ARXIV_LINK_MARGIN)


def earlier_version_ids(entries: Iterable[Record]) -> list[str]:
    """Versioned ids (``2606.03328v1``) of every version before each entry's current one."""
    return [
        versioned_id(entry.arxiv_id, n)
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


def coauthor_keys(names: Iterable[str], author: str) -> frozenset[str]:
    """The folded names among ``names`` that cannot be ``author``: their co-authors.

    Every form of the author's own name is left out ("J. Smith" on one of
    John Smith's papers), or it would vouch for every paper listing it.
    """
    return frozenset(normalize_name(n) for n in names if not could_be(n, author))


def identify(
    entry: Record, known_people: Collection[str], known_categories: Collection[str], author: str
) -> Identity:
    """Score ``entry`` against the known papers' co-authors (``coauthor_keys``) and categories.

    Plausible when it shares at least one co-author or one category with
    them.  No name on ``entry`` that could be the author counts as a
    co-author: every entry of an ``au:`` query has one.
    """
    coauthors = tuple(
        n for n in entry.authors if normalize_name(n) in known_people and not could_be(n, author)
    )
    categories = tuple(c for c in entry.categories if c in known_categories)
    return Identity(
        plausible=bool(coauthors or categories),
        shared_coauthors=coauthors,
        shared_categories=categories,
    )
