"""How much a work another source found looks like a preprint: the bibliographic score.

A work that no link names (a Crossref search's answer, an OpenAlex work
kept apart from the preprint) may still be the paper's published version.
``score_work`` weighs it against the paper's arXiv record on three things,
each kept in the ``Evidence`` so a person can see why:

- **title similarity** ``s`` in [0, 1]: both titles normalised (markup such
  as ``<i>``/``<sub>``/MathML and TeX leftovers dropped, accents folded,
  case and punctuation ignored), then compared with their words in
  alphabetical order (the Indel similarity: the share of characters the two
  have in common in order; rapidfuzz's ``token_sort_ratio`` / 100).  A
  title is also compared by its parts around a colon (the part before, the
  part after, each of at least three words): a prefix added or dropped
  ("ChemCrow: Augmenting ..." published as "Augmenting ..."), or a subtitle
  changed, leaves a part that is the same.  ``s`` is the best of these.
- **author share** ``a`` in [0, 1]: the authors in common, as twice their
  number over the number of names on both lists (the Dice coefficient).  Two
  names are the same author when their family names and first initials are:
  accents, case, hyphens, "Given Family" or "Family, Given" and a "Jr." aside.
- **year gap** ``g``: the work's year minus the year of the preprint's first
  version.  Journals publish from a year before (a preprint posted after
  acceptance) to a few years after.

The score::

    score = 0                        if g < -1 or g > 4
    score = t * (0.6 + 0.4 * a)      otherwise (also when a year is unknown)
    where   t = max(0, 2 * s - 1)

``t`` is the title's similarity above chance: two unrelated titles in
English share about half their characters in order (``s`` ≈ 0.5), which
counts nothing; identical titles count 1.  The authors weigh the title: a
title alone, with no author in common, scores at most 0.6, the lowest
``review_score`` by default, so it is never announced; the same title with
three quarters of the authors in common scores 0.9.  Rounded to three
places, as events carry it.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence

from rapidfuzz import fuzz

from syncd.domain.names import index_key
from syncd.domain.publications import Evidence, MatchLevel, Work
from syncd.domain.record import Record, parse_arxiv_time
from syncd.domain.tex import tex_to_utf8

__all__ = [
    "YEAR_WINDOW",
    "author_share",
    "normalize_title",
    "score_work",
    "title_similarity",
    "year_gap",
]

# The publication's year minus the preprint's first version's, inclusive.
YEAR_WINDOW = (-1, 4)
# A title's weight when no author is in common; the authors bring the rest.
_TITLE_ALONE = 0.6
# A part of a title around a colon counts only when it is at least this many words:
# "BERT" or "Gemini" before a colon names a series, not a paper.
_PART_WORDS = 3

# HTML, JATS and MathML tags, kept from their text; a "<" that opens no tag is a sign
_TAG = re.compile(r"</?[a-zA-Z][^<>]{0,200}>")
_TEX_COMMAND = re.compile(r"\\[a-zA-Z]+\*?")  # \mathrm, \emph, \textit: the name goes
_TEX_MARKS = str.maketrans("", "", "${}^_")  # math shifts, groups, sub/superscripts
_NOT_WORD = re.compile(r"[\W_]+")
# Latin letters Unicode does not decompose into a letter and an accent, as sources
# without them write them: "Łukasz Wójcik" is "Lukasz Wojcik" elsewhere.
_UNDECOMPOSED = str.maketrans(
    {"Ł": "L", "ł": "l", "Ø": "O", "ø": "o", "Đ": "D", "đ": "d", "Ð": "D", "ð": "d", "\u0131": "i"}
    | {"Æ": "Ae", "æ": "ae", "Œ": "Oe", "œ": "oe", "Þ": "Th", "þ": "th", "ß": "ss"}
)


def normalize_title(title: str) -> str:
    """A title as compared: words of letters and digits, lower case, without accents.

    Markup a source leaves (``<i>In situ</i> RuCl<sub>3</sub>``, ``&amp;``)
    and TeX arXiv leaves (``\\emph{In situ} RuCl$_3$``) both read ``in situ
    rucl3``; hyphens and other punctuation separate words.
    """
    return _folded(_unmarked(title))


def _unmarked(title: str) -> str:
    """A title without the markup a source leaves in it: tags and character references."""
    return _TAG.sub("", html.unescape(title))


def _folded(text: str) -> str:
    """Unmarked text as compared: TeX leftovers, accents, case and punctuation folded."""
    text = _TEX_COMMAND.sub(" ", tex_to_utf8(text)).translate(_TEX_MARKS).translate(_UNDECOMPOSED)
    decomposed = unicodedata.normalize("NFKD", text)
    letters = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(_NOT_WORD.sub(" ", letters.casefold()).split())


def _variants(title: str) -> list[str]:
    """The normalised title, and its parts around its first colon that are long enough.

    The colon is looked for once the markup is gone: MathML's tags have colons.
    """
    unmarked = _unmarked(title)
    whole = _folded(unmarked)
    variants = [whole] if whole else []
    before, colon, after = unmarked.partition(":")
    if colon:
        for part in (_folded(before), _folded(after)):
            if len(part.split()) >= _PART_WORDS:
                variants.append(part)
    return variants


def title_similarity(first: str, second: str) -> float:
    """How alike two titles are, in [0, 1]: the best of their wholes and parts (module doc)."""
    return max(
        (
            fuzz.token_sort_ratio(one, other) / 100
            for one in _variants(first)
            for other in _variants(second)
        ),
        default=0.0,
    )


def _name_keys(name: str) -> frozenset[tuple[str, str]]:
    """(family name, first initial) pairs a name may be known by; none for an empty name.

    "Family, Given" is read as "Given Family".  A hyphenated family name
    ("García-Pérez") is also its last part ("Pérez"), which is where another
    source that writes it with a space ("José García Pérez") puts it.
    """
    written = name.translate(_UNDECOMPOSED)
    family, comma, given = written.partition(",")
    key = index_key(f"{given} {family}" if comma and given.strip() else written)
    if key is None:
        return frozenset()
    surname, initial = key
    return frozenset({(surname.replace("-", ""), initial), (surname.rsplit("-", 1)[-1], initial)})


def _same_author(first: frozenset[tuple[str, str]], second: frozenset[tuple[str, str]]) -> bool:
    """Whether two names' keys meet: a family name in common, and the same first initial
    where both have one (a source may give a family name alone)."""
    return any(
        surname == other_surname and (initial == other_initial or not initial or not other_initial)
        for surname, initial in first
        for other_surname, other_initial in second
    )


def author_share(first: Sequence[str], second: Sequence[str]) -> float:
    """The Dice coefficient of two author lists: twice the authors in common over all names.

    Each name counts once: an author is paired with at most one name of
    the other list, in the order given.  0.0 when either list is empty.
    """
    ours = [keys for keys in map(_name_keys, first) if keys]
    theirs = [keys for keys in map(_name_keys, second) if keys]
    if not ours or not theirs:
        return 0.0
    unpaired = list(theirs)
    common = 0
    for keys in ours:
        paired = next((other for other in unpaired if _same_author(keys, other)), None)
        if paired is not None:
            unpaired.remove(paired)
            common += 1
    return 2 * common / (len(ours) + len(theirs))


def year_gap(record: Record, work: Work) -> int | None:
    """The work's year minus the year of the preprint's first version; None if either is unknown."""
    first_version = parse_arxiv_time(record.published)
    if first_version is None or work.year is None:
        return None
    return work.year - first_version.year


def score_work(record: Record, work: Work) -> Evidence:
    """The bibliographic evidence that ``work`` is ``record``'s published version (module doc)."""
    similarity = round(title_similarity(record.title or "", work.title), 3)
    share = round(author_share(record.authors, work.authors), 3)
    gap = year_gap(record, work)
    if gap is not None and not YEAR_WINDOW[0] <= gap <= YEAR_WINDOW[1]:
        score = 0.0
    else:
        above_chance = max(0.0, 2 * similarity - 1)
        score = above_chance * (_TITLE_ALONE + (1 - _TITLE_ALONE) * share)
    return Evidence(
        level=MatchLevel.BIBLIOGRAPHIC,
        source=work.source,
        how=f"{work.source.value}-search",
        score=round(score, 3),
        title_similarity=similarity,
        author_share=share,
        year_gap=gap,
    )
