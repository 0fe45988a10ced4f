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

from collections.abc import Iterable

from syncd.domain.linking import name_matches
from syncd.domain.record import Record, normalize_name

__all__ = ["NameIndex"]


def _key(name: str) -> tuple[str, str] | None:
    """(surname, first initial) of a folded name: equal for every pair ``name_matches`` accepts."""
    words = normalize_name(name).split()
    return (words[-1], words[0][0]) if words else None


class NameIndex:
    """The followed authors' names, found from a record's listed names."""

    def __init__(self, authors: Iterable[str]) -> None:
        self._by_key: dict[tuple[str, str], list[str]] = {}
        for author in authors:
            key = _key(author)
            if key is not None:
                self._by_key.setdefault(key, []).append(author)

    def authors_of(self, record: Record) -> set[str]:
        """The followed authors ``record`` lists by a name ``name_matches`` accepts."""
        found: set[str] = set()
        for listed in record.authors:
            key = _key(listed)
            for author in self._by_key.get(key, ()) if key is not None else ():
                if author not in found and name_matches(listed, author):
                    found.add(author)
        return found
