"""Whether a name on a paper can be a followed author: their name, only their initials, or not.

arXiv writes each author as the submitter typed them, "Forenames Keyname
Suffix", and its ``au:`` search is looser than equality: it also finds every
name whose initialised form is the query's, so ``au:"John Smith"`` brings
"Jane Smith", "Joe Smith" and "J. Smith" too (its author query matches
``full_name_initialized`` exactly).  A harvest lists every paper arXiv
changed.  So syncd reads each listed name against each followed author on one
scale, ``NameMatch``, and never takes a person for another:

* ``WRITTEN``: the first given name is written out on both sides and is the
  same, and nothing else disagrees.  A middle name or initial that one side
  leaves out is tolerated ("John A. Smith" is "John Smith" written fully);
* ``INITIALS``: nothing disagrees, but only initials say it could be the
  author ("J. Smith", "J. Q. Smith"), or only part of a name ("Jean" for
  "Jean-Pierre"), or one side has a suffix or particle the other lacks:
  anyone sharing those letters as easily;
* ``NAMESAKE``: the author's surname with a given name, suffix or particle
  that disagrees ("Jane Smith", "John Smith Sr." for "John Smith Jr."), or the
  surname inside another name ("Mary Smith-Jones"): what arXiv's search may
  answer for the author, and never theirs;
* ``NONE``: nothing of the surname.

Names are folded (accents, case, punctuation) with hyphens kept, so a
compound given name stays one name of several parts ("Jean-Pierre", "J.-P.");
written without its hyphen ("Zhida" for "Zhi-Da") it is the same name.  The
surname is the last word; particles before it ("van der Berg") and a suffix
after it ("Jr.") are compared apart.  A name of one word (a collaboration,
a mononym) is only ever the same word.  arXiv writes no name surname-first,
so "Smith John" is a namesake.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum, IntEnum
from functools import lru_cache

__all__ = [
    "NameMatch",
    "ParsedName",
    "best_match",
    "could_be",
    "index_key",
    "match_parsed",
    "name_match",
    "parse_name",
]


class NameMatch(IntEnum):
    """How far a listed name can be an author's, weakest first (see the module's doc)."""

    NONE = 0
    NAMESAKE = 1
    INITIALS = 2
    WRITTEN = 3


# Words before the surname that belong to it: "van der Berg", "de la Cruz".  Some
# are also given names or syllables of one ("Zhi Da", "Le Minh"), so they are
# particles only when written in lower case, as arXiv's authors write them.
_PARTICLES = frozenset(
    "da dal das de degli dei del della den der des di do dos du la le te ten ter van von zu".split()
)
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
# ASCII punctuation (the underscore included) but the hyphen, as a space, and
# TeX's braces gone (arXiv writes "Pl{ö}tz"): most names are ASCII, and folding
# them needs no Unicode decomposition.  A table of bytes: ``bytes.translate`` is
# a lookup per byte, ``str.translate`` a dict lookup per character (three times
# as long, for every name on every record of a harvest).
_ASCII_FOLD = bytes(
    ord(" ") if not (chr(c).isalnum() or chr(c) in "- \t\n\r\x0b\x0c") else c for c in range(256)
)
_BRACES = b"{}"


def _fold_ascii(name: str) -> str:
    """An ASCII ``name`` with its punctuation but hyphens as spaces, its braces gone."""
    return name.encode("ascii").translate(_ASCII_FOLD, _BRACES).decode("ascii")


_DASHES_AND_BRACES = str.maketrans(
    {**dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2212", "-"), "{": None, "}": None}
)
_NOT_NAME = re.compile(r"[^\w\s-]|_")
_HYPHENS = re.compile(r"\s*-[\s-]*")


def _words(name: str) -> list[str]:
    """A name's words with accents and punctuation folded but not case, hyphenated ones whole."""
    if name.isascii():
        folded = _fold_ascii(name)
    else:
        decomposed = unicodedata.normalize("NFKD", name.translate(_DASHES_AND_BRACES))
        letters = "".join(c for c in decomposed if not unicodedata.combining(c))
        folded = _NOT_NAME.sub(" ", letters)
    return _split(folded)


def _split(folded: str) -> list[str]:
    if "-" not in folded:
        return folded.split()
    words = (word.strip("-") for word in _HYPHENS.sub("-", folded).split())
    return [word for word in words if word]


def _without_suffix(words: list[str]) -> tuple[list[str], str]:
    # Two words before it at least: "Naoki Ii" is a surname, not a numeral.
    if len(words) >= 3 and words[-1].casefold() in _SUFFIXES:
        return words[:-1], words[-1].casefold()
    return words, ""


def index_key(name: str) -> tuple[str, str] | None:
    """(surname, first initial): equal for any two names ``name_match`` reads as INITIALS or more.

    A name of one word has no initial (""); an empty name has no key.
    """
    # A harvest asks this of every name on every record: the ASCII ones fold in
    # two string methods (lower-casing commutes with the punctuation table).
    if name.isascii():
        folded = _fold_ascii(name.lower())
        words = folded.split() if "-" not in folded else _split(folded)
    else:
        words = [word.casefold() for word in _words(name)]
    count = len(words)
    if count >= 3 and words[-1] in _SUFFIXES:
        count -= 1
    if count == 0:
        return None
    return words[count - 1], words[0][0] if count > 1 else ""


@dataclass(frozen=True, slots=True)
class ParsedName:
    """A name read into its parts once, to be compared with many (``match_parsed``)."""

    given: tuple[str, ...]  # the first given name, then middle names and initials
    particles: tuple[str, ...]
    surname: str
    suffix: str
    parts: frozenset[str]  # every part of every word: where a surname may hide


@lru_cache(maxsize=1 << 14)
def _parse(name: str) -> ParsedName | None:
    words, suffix = _without_suffix(_words(name))
    if not words:
        return None
    *front, last = words
    given: list[str] = []
    particles: list[str] = []
    for index, word in enumerate(front):
        folded = word.casefold()
        # The first word is always a given name: "di Wang" has no particle.
        particle = index > 0 and word.islower() and folded in _PARTICLES
        (particles if particle else given).append(folded)
    surname = last.casefold()
    parts = frozenset(p for w in (*given, *particles, surname) for p in w.split("-"))
    return ParsedName(tuple(given), tuple(particles), surname, suffix, parts)


class _Fit(Enum):
    CLASH = "clash"  # another name: they disagree
    FITS = "fits"  # nothing disagrees, but an initial or a part stands for the rest
    SAME = "same"  # written out in full on both sides, and equal


def _spelt_out(parts: Iterable[str]) -> bool:
    return all(len(p) > 1 for p in parts)


def _word_fit(a: str, b: str) -> _Fit:
    """How one given name fits another: "john"/"john", "j"/"john", "jean-pierre"/"j-p"."""
    pa, pb = a.split("-"), b.split("-")
    if "".join(pa) == "".join(pb) and _spelt_out(pa) and _spelt_out(pb):
        return _Fit.SAME  # "zhi-da" is "zhida" written with its hyphen
    same = len(pa) == len(pb)
    for x, y in zip(pa, pb, strict=False):
        if len(x) > 1 and len(y) > 1:
            if x != y:
                return _Fit.CLASH
        elif x[0] != y[0]:
            return _Fit.CLASH
        else:
            same = False  # an initial agrees with a name, or with itself
    return _Fit.SAME if same else _Fit.FITS


def _given_fit(a: tuple[str, ...], b: tuple[str, ...]) -> _Fit:
    """The first given names decide; middle ones present on both sides must not disagree."""
    joined_a = [p for w in a for p in w.split("-")]
    joined_b = [p for w in b for p in w.split("-")]
    if "".join(joined_a) == "".join(joined_b) and _spelt_out(joined_a) and _spelt_out(joined_b):
        return _Fit.SAME  # "Zhi Da" is "Zhida" written in two words
    first = _word_fit(a[0], b[0])
    if first is _Fit.CLASH or any(
        _word_fit(x, y) is _Fit.CLASH for x, y in zip(a[1:], b[1:], strict=False)
    ):
        return _Fit.CLASH
    return first


def parse_name(name: str) -> ParsedName | None:
    """``name`` read into its parts (None when it has none); the recent ones are remembered."""
    return _parse(name)


def name_match(listed: str, author: str) -> NameMatch:
    """How far the name ``listed`` on a paper can be the followed ``author`` (see the module)."""
    return match_parsed(_parse(listed), _parse(author))


def match_parsed(a: ParsedName | None, b: ParsedName | None) -> NameMatch:
    """``name_match`` of two names already parsed (``parse_name``): a listed one, an author."""
    if a is None or b is None:
        return NameMatch.NONE
    if a.surname != b.surname:
        inside = set(b.surname.split("-")) <= a.parts
        return NameMatch.NAMESAKE if inside else NameMatch.NONE
    if not a.given or not b.given:
        alike = a.given == b.given and a.suffix == b.suffix
        return NameMatch.WRITTEN if alike else NameMatch.NAMESAKE
    fit = _given_fit(a.given, b.given)
    extras = ((a.suffix, b.suffix), (a.particles, b.particles))
    if fit is _Fit.CLASH or any(x and y and x != y for x, y in extras):
        return NameMatch.NAMESAKE
    if fit is _Fit.SAME and all(x == y for x, y in extras):
        return NameMatch.WRITTEN
    return NameMatch.INITIALS


def could_be(listed: str, author: str) -> bool:
    """Whether ``listed`` may be ``author`` at all (INITIALS or more): never their co-author."""
    return name_match(listed, author) >= NameMatch.INITIALS


def best_match(names: Iterable[str], author: str) -> NameMatch:
    """The best any of a paper's ``names`` reads as ``author``; NONE for no names."""
    return max((name_match(n, author) for n in names), default=NameMatch.NONE)
