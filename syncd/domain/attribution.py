"""Which followed authors a harvested record may be by: an index of folded names.

A harvest reads every paper arXiv changed, not the answer to one author's
query, so each record must be given to the followed authors whose name it
lists.  ``name_matches`` decides that for one pair (folded names equal, or
same surname and first initial); the index finds the candidate pairs by the
key that rule needs, (surname, first initial), so a record costs one lookup
per name on it, however many authors are followed.  The identity rules
(``syncd.domain.linking.identify``, through the planner) then decide, per
author, whether the paper is theirs or a namesake's candidate, exactly as for
a name query's result.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from syncd.domain.linking import identify, name_matches
from syncd.domain.record import Record, normalize_name

__all__ = ["Attribution", "IdentityFacts", "NameIndex", "attribute"]

_NOTHING_SHARED = "shares no co-author or category with the known papers"


@dataclass(frozen=True, slots=True)
class IdentityFacts:
    """What tells an author's papers from a namesake's: everything ``attribute`` weighs.

    ``names`` and ``categories`` are those of the author's known papers
    (seeded, linked, tracked); ``include_ids`` the papers configured as theirs.
    """

    author: str
    include_ids: Collection[str] = ()
    names: Collection[str] = ()
    categories: Collection[str] = ()
    claimed: Collection[str] = ()  # in the author's own arXiv feed: theirs by their claim
    # A name-only author's baseline: the basis's verdict (syncd.domain.basis), by arXiv id
    # of each paper it holds; a paper not in it is the author's.
    basis_reasons: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Attribution:
    """Whether a paper that lists the author's name is theirs; ``reason`` when it is not."""

    theirs: bool
    reason: str | None = None


def attribute(record: Record, facts: IdentityFacts) -> Attribution:
    """The identity rules, one paper against one author's facts.

    The one place a name query's result and a harvested record are judged:
    configured and claimed ids are the author's; during a name-only author's
    baseline the co-author basis decides; otherwise the paper must share a
    co-author or a category with the known papers, or it is held as a
    candidate with the reason.
    """
    if record.arxiv_id in facts.include_ids or record.arxiv_id in facts.claimed:
        return Attribution(theirs=True)
    if facts.basis_reasons is not None:
        reason = facts.basis_reasons.get(record.arxiv_id or "")
        return Attribution(reason is None, reason)
    identity = identify(record, facts.names, facts.categories, facts.author)
    return Attribution(True) if identity.plausible else Attribution(False, _NOTHING_SHARED)


# ASCII punctuation as ``normalize_name`` folds it: TeX's braces go, the rest is
# a space (``\w`` keeps "_").
_ASCII_FOLD = str.maketrans(
    {
        c: "" if c in "{}" else " "
        for c in map(chr, range(128))
        if not (c.isalnum() or c in "_ \t\n\r\x0b\x0c")
    }
)


def _key(name: str) -> tuple[str, str] | None:
    """(surname, first initial) of a folded name: equal for every pair ``name_matches`` accepts.

    Most names are ASCII, whose folding is a lower-casing and a translation
    (``normalize_name`` pays for Unicode decomposition and a regex).
    """
    folded = name.lower().translate(_ASCII_FOLD) if name.isascii() else normalize_name(name)
    words = folded.split()
    return (words[-1], words[0][0]) if words else None


class NameIndex:
    """The followed authors' names, found from a record's listed names."""

    def __init__(self, authors: Iterable[str]) -> None:
        self._by_key: dict[tuple[str, str], list[str]] = {}
        for author in authors:
            key = _key(author)
            if key is not None:
                self._by_key.setdefault(key, []).append(author)

    def authors_of(self, names: Iterable[str]) -> set[str]:
        """The followed authors a paper listing ``names`` names, as ``name_matches`` accepts."""
        found: set[str] = set()
        for listed in names:
            key = _key(listed)
            for author in self._by_key.get(key, ()) if key is not None else ():
                if author not in found and name_matches(listed, author):
                    found.add(author)
        return found
