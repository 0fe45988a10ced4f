"""Whose paper is it: the followed authors a record names, and the identity verdict for one.

An ``au:`` query, a batch of them, an author feed or a harvest gives syncd
papers that list names; which followed author a paper is by is decided here,
the same way whatever brought it.  A person is never guessed:

* a name reads as an author on the scale of ``syncd.domain.names`` (the name
  written out, only initials, or someone else): a record goes to the followed
  authors it can name at all (``NameIndex``), and to no one whose name it
  only resembles;
* a name that could as well be another followed author ("J. Smith" when John
  and Jane Smith are both followed) is contested (``read``): a category
  proves nothing between two people of one field, so only a claim, a seed,
  ``include_ids`` (or a confirmation) or a co-author shared with the author's
  known papers makes it theirs; otherwise it is each one's candidate, and the
  reason names the rivals;
* a name that is only initials, uncontested, needs the same corroboration as
  a written-out one: a co-author or a category shared with the known papers;
* the author's own name, in any form that could be theirs, is never one of
  their co-authors: "J. Smith" on one of John's papers vouches for no other.

A name-only author's baseline is the co-author basis's (``syncd.domain.basis``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from syncd.domain.linking import Identity, coauthor_keys, identify
from syncd.domain.names import (
    NameMatch,
    ParsedName,
    best_match,
    index_key,
    match_parsed,
    name_match,
    parse_name,
)
from syncd.domain.record import Record

__all__ = [
    "Attribution",
    "IdentityFacts",
    "NameIndex",
    "Reading",
    "attribute",
    "read",
    "split_batch",
]

_NOTHING_SHARED = "shares no co-author or category with the known papers"
_UNCORROBORATED = "no claim, seed or co-author of the known papers says which"


class NameIndex:
    """The followed authors' names, found from a record's listed names.

    Keyed by (surname, first initial), the only pairs that can read as the
    same person: a record costs one lookup per name on it, however many
    authors are followed.
    """

    def __init__(self, authors: Iterable[str]) -> None:
        self._by_key: dict[tuple[str, str], list[str]] = {}
        for author in authors:
            key = index_key(author)
            if key is not None:
                self._by_key.setdefault(key, []).append(author)
        # Each author read once, when a name first finds them: ``name_match`` would read
        # them again whenever its cache of recent names (16,384) is smaller than those followed.
        self._parsed: dict[str, ParsedName | None] = {}

    def _parsed_author(self, author: str) -> ParsedName | None:
        parsed = self._parsed.get(author)
        if parsed is None and author not in self._parsed:
            parsed = self._parsed[author] = parse_name(author)
        return parsed

    def sharing_key(self, listed: str) -> Sequence[str]:
        """The followed authors ``listed`` might be: those of its surname and first initial."""
        key = index_key(listed)
        return self._by_key.get(key, ()) if key is not None else ()

    def authors_of(self, names: Iterable[str]) -> set[str]:
        """The followed authors a paper listing ``names`` may be by (``names.could_be``)."""
        found: set[str] = set()
        for listed in names:
            key = index_key(listed)
            sharing = self._by_key.get(key) if key is not None else None
            if not sharing:
                continue  # nearly every name of a harvest: one lookup, nothing parsed
            parsed = parse_name(listed)
            for author in sharing:
                if author in found:
                    continue
                if match_parsed(parsed, self._parsed_author(author)) >= NameMatch.INITIALS:
                    found.add(author)
        return found


def split_batch(
    records: Sequence[Record], authors: Sequence[str]
) -> tuple[dict[str, list[Record]], list[Record]]:
    """A batched ``au:"A" OR au:"B"`` answer by author, and the records it cannot explain.

    Each record goes to the authors it may be by (``NameIndex.authors_of``),
    never to one whose name it only resembles: arXiv answers ``au:"John
    Smith"`` with Jane Smith's papers too.  A namesake's paper is that loose
    matching, no one's; a record naming none of the authors, not even as a
    namesake, means the answer was misread.
    """
    index = NameIndex(authors)
    shares: dict[str, list[Record]] = {}
    orphans: list[Record] = []
    for record in records:
        owners = index.authors_of(record.authors)
        for owner in owners:
            shares.setdefault(owner, []).append(record)
        if not owners and all(best_match(record.authors, a) is NameMatch.NONE for a in authors):
            orphans.append(record)
    return shares, orphans


@dataclass(frozen=True, slots=True)
class Reading:
    """How a paper's author list names one followed author.

    ``listed`` is the name on the paper that reads best as the author (None
    when none can be them), at ``level``; ``rivals`` the other followed
    authors that name reads as at least as well, none of whom the paper
    names elsewhere.
    """

    level: NameMatch
    listed: str | None = None
    rivals: tuple[str, ...] = ()

    def doubt(self, author: str) -> str:
        """Why the name alone does not make the paper the author's, as a reviewer reads it."""
        if self.rivals:
            return f"ambiguous: {self.listed} could be {' or '.join((author, *self.rivals))}"
        return f"{self.listed} may be {author}, but only initials (or part of the name) agree"


def read(names: Sequence[str], author: str, followed: NameIndex | None = None) -> Reading:
    """How the paper listing ``names`` names ``author``, against every ``followed`` author.

    The best level wins; among names of one level, one no other followed
    author could be; then the first listed.
    """
    levels = [name_match(listed, author) for listed in names]
    own = [(i, level) for i, level in enumerate(levels) if level >= NameMatch.INITIALS]
    if not own:
        return Reading(max(levels, default=NameMatch.NONE))
    options = [(level, _rivals(names, i, level, author, followed), i) for i, level in own]
    level, rivals, index = min(options, key=lambda o: (-o[0], len(o[1]), o[2]))
    return Reading(level, names[index], rivals)


def _rivals(
    names: Sequence[str], index: int, level: NameMatch, author: str, followed: NameIndex | None
) -> tuple[str, ...]:
    """The other followed authors ``names[index]`` reads as at ``level`` or better.

    One the paper lists by their written-out name elsewhere is on it already:
    "J. Smith" beside "Jane Smith" is not Jane.
    """
    if followed is None:
        return ()
    listed = names[index]
    elsewhere = [n for i, n in enumerate(names) if i != index]
    return tuple(
        sorted(
            rival
            for rival in followed.sharing_key(listed)
            if rival != author
            and name_match(listed, rival) >= level
            and all(name_match(n, rival) < NameMatch.WRITTEN for n in elsewhere)
        )
    )


@dataclass(frozen=True, slots=True)
class IdentityFacts:
    """What tells an author's papers from a namesake's: everything ``attribute`` weighs.

    ``names`` and ``categories`` are those of the author's known papers
    (seeded, linked, tracked); ``include_ids`` the papers configured or
    confirmed as theirs; ``followed`` every followed author's name, so a name
    that could be someone else followed is known to be contested.
    """

    author: str
    include_ids: Collection[str] = ()
    names: Collection[str] = ()
    categories: Collection[str] = ()
    claimed: Collection[str] = ()  # in the author's own arXiv feed: theirs by their claim
    # A name-only author's baseline: the basis's verdict (syncd.domain.basis), by arXiv id
    # of each paper it holds; a paper not in it is the author's.
    basis_reasons: Mapping[str, str] | None = None
    followed: NameIndex | None = None
    # The known papers' co-authors, folded, the author's own forms left out: once, not per paper.
    people: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "people", coauthor_keys(self.names, self.author))


@dataclass(frozen=True, slots=True)
class Attribution:
    """Whether a paper that lists the author's name is theirs; ``reason`` when it is not."""

    theirs: bool
    reason: str | None = None


def attribute(record: Record, facts: IdentityFacts) -> Attribution:
    """The identity rules, one paper against one author's facts (see the module's doc).

    Configured, confirmed and claimed ids are the author's; a paper no name
    of which can be them is not; during a name-only author's baseline the
    co-author basis decides; otherwise the name's reading and what the paper
    shares with the known papers do, or it is held with the reason.
    """
    author = facts.author
    if record.arxiv_id in facts.include_ids or record.arxiv_id in facts.claimed:
        return Attribution(theirs=True)
    reading = read(record.authors, author, facts.followed)
    if reading.level < NameMatch.INITIALS:
        return Attribution(False, f"no name on the paper can be {author}")
    if facts.basis_reasons is not None:
        reason = facts.basis_reasons.get(record.arxiv_id or "")
        return Attribution(reason is None, reason)
    return _weighed(reading, identify(record, facts.people, facts.categories, author), author)


def _weighed(reading: Reading, identity: Identity, author: str) -> Attribution:
    """The verdict on a name's reading and what the paper shares with the known papers."""
    if reading.rivals:
        # Two people of one field share its categories: only a co-author tells them apart.
        if identity.shared_coauthors:
            return Attribution(True)
        return Attribution(False, f"{reading.doubt(author)}; {_UNCORROBORATED}")
    if identity.plausible:
        return Attribution(True)
    if reading.level == NameMatch.WRITTEN:
        return Attribution(False, _NOTHING_SHARED)
    return Attribution(False, f"{reading.doubt(author)}; the paper {_NOTHING_SHARED}")
