"""arXiv's one-string author list, read into names as arXiv itself reads it.

OAI-PMH ``arXivRaw`` gives a paper's authors as the submitter typed them:
``LHCb Collaboration: R. Aaij, C.N. Pope (MIT), M. Finger, Jr. and A. Other,
et al``.  The API, the author feeds and the ``arXiv`` OAI format list the
same people one by one, as arXiv's own parser (arXiv/arxiv-base
``arxiv.authors.parse_author_affil``, run after ``tex2utf``) splits the
string, each written "Forenames Keyname Suffix".  A name read differently
here than there is a false author change when a harvest and a name query
meet the same version, so this module follows arXiv's rules, quirks
included, even where arXiv's reading is plainly odd: "Zhe (Rita) Liang"
reads "Zhe" and "Liang", a stray ";" or ":" between notes is a name, and
"Dong Liu and and Linsheng Zhu" lists "and Linsheng Zhu".

arXiv's rules, in the order they apply:

- A parenthesised note (an affiliation, ``(1,2)``, ``((1) MIT, (2) CERN)``)
  is dropped, nested ones whole, and ends the name before it; one left open
  runs to the end of the string.  After a stray ``)`` the rest is text, and
  a part starting with ``(`` or ``]`` is not a name.
- Between names: a comma, a colon, or ``and`` / ``&`` with spaces on both
  sides (case-sensitive: ``And`` is part of a name).  A semicolon is not a
  separator: ``A; B`` is one name.  A colon is also a name of its own,
  ``:``, unless it follows a collaboration that opens the list.
- ``Jr`` or ``Jr.`` after a comma stays with the name before it
  (``M. Finger, Jr.``); ``Sr.``, ``II`` and ``III`` after a comma are names
  of their own, as arXiv lists them.
- A dot followed by anything but a space gets a space (``C.N. Pope`` reads
  ``C. N. Pope``, ``J.-P.`` reads ``J. -P.``), unless it is TeX's ``\\.``.
- A name starting with "et al" is dropped.
- Collaborations that open the list (``... Collaboration``, ``... Group``,
  ``... Team``) are names of their own, written as the words that end in
  that noun, letters, digits and spaces only: "Fermi-LAT Collaboration" reads
  "LAT Collaboration", "ATLAS Collaborations" reads "ATLAS Collaboration".


Braces a converted TeX accent leaves (``Pl{ö}tz``) stay: arXiv keeps them, and
``normalize_name`` folds them away.  The text comes converted from TeX and
with single spaces (``clean_text``), as the API's text does.
"""

from __future__ import annotations

import re

__all__ = ["split_authors"]

# arXiv's "and" between names: spaces on both sides, a comma before it absorbed.
_AND_RE = re.compile(r",?\s+(?:and|&)\s")
# A dot glued to what follows, as in initials "C.N."; TeX's "\." is an accent,
# and the second dot of ".." is left alone as arXiv's own rule leaves it.
_GLUED_DOT_RE = re.compile(r"\.(?<![\\.]\.)(?=\S)")
_PARENTHESIS_RE = re.compile(r"[()]")
_ET_AL_RE = re.compile(r"et\.?\s+al", re.IGNORECASE)
_COLLABORATION_RE = re.compile(r"[a-z0-9\s]+\s+(?:collaboration|group|team)", re.IGNORECASE)
# Its noun alone: the whole pattern backtracks over every letter of a name without one.
_COLLABORATION_NOUN_RE = re.compile(r"\s(?:collaboration|group|team)", re.IGNORECASE)
_SUFFIXES = frozenset({"Jr", "Jr."})
# What a dropped note leaves: a separator of its own (XML text never holds a NUL).
_NOTE = "\x00"
# Between names; kept in the split where a suffix must know which.
_SEPARATOR_RE = re.compile(r"([,\x00])")
_ANY_SEPARATOR_RE = re.compile(r"[,\x00]")
# arXiv keeps a colon as a part of its own, so it is a name (":") unless a
# collaboration opening the list swallows it: "LHCb Collaboration: R. Aaij".
_COLON = ":"
_INNERMOST_NOTE_RE = re.compile(r"\([^()]*\)")


def split_authors(text: str) -> tuple[str, ...]:
    """arXivRaw's one author string as the API's list of names.

    ``text`` is converted from TeX and has single spaces; the module's
    docstring gives the rules.
    """
    if "(" in text:
        text = _without_notes(text)
    spaced = _spaced(text)
    if "Jr" in spaced:
        parts = _parts(spaced)  # a suffix joins two parts
    elif _NOTE in spaced:
        parts = _ANY_SEPARATOR_RE.split(spaced)
    else:  # the common case, "A. B, C. D and E. F"
        parts = spaced.split(",")
    # A capital other than the E of "Et al." starts a name: most parts are done there.
    names = [
        part
        for part in map(str.strip, parts)
        if part and ((part[0].isupper() and part[0] != "E") or _is_name(part))
    ]
    if names and _collaboration(names[0]):
        return _collaborations_first(names)
    return tuple(names)


def _without_notes(text: str) -> str:
    """The text with each top-level parenthesised note, nested ones inside it, as ``_NOTE``."""
    flat, found = text, 1
    while found and "(" in flat:  # innermost first, each pass in C
        flat, found = _INNERMOST_NOTE_RE.subn(_NOTE, flat)
    if "(" not in flat and ")" not in flat:
        return flat
    # A parenthesis without its pair: count depths, as arXiv does.
    kept: list[str] = []
    depth = start = 0
    for match in _PARENTHESIS_RE.finditer(text):
        at = match.start()
        if text[at] == "(":
            depth += 1
            if depth == 1:
                kept.append(text[start:at])
        else:
            depth -= 1
            if depth == 0:
                start = at + 1
    # A note left open runs to the end; after a stray ")" the rest is text.
    kept.append("" if depth > 0 else text[start:])
    return _NOTE.join(kept)


def _spaced(text: str) -> str:
    """The names with each "and" turned into a comma and initials spaced."""
    if "&" in text:
        text = _AND_RE.sub(",", text)
    else:  # the same, in single-spaced text, at a third of the cost
        text = text.replace(", and ", ",").replace(" and ", ",")
    if _COLON in text:
        text = text.replace(_COLON, f",{_COLON},")
    return _GLUED_DOT_RE.sub(". ", text) if "." in text else text


def _parts(spaced: str) -> list[str]:
    """The names, ``Jr.`` after a comma joined to the name before it."""
    pieces = _SEPARATOR_RE.split(spaced)
    names = [pieces[0].strip()]
    # Each separator with the name after it; an empty name stands for a
    # separator that follows another, as in "A,, Jr." or "A (1), B".
    for separator, piece in zip(pieces[1::2], map(str.strip, pieces[2::2]), strict=True):
        before = names[-1]
        if piece in _SUFFIXES and separator == "," and before != _COLON:
            # arXiv joins it to whatever came before the comma: a note or a
            # separator swallows it.
            names[-1] = _with_suffix(before, piece) if before else ""
        else:
            names.append(piece)
    return names


def _with_suffix(name: str, suffix: str) -> str:
    """``M. Finger`` and ``Jr.`` as arXiv joins them: ``M. Finger, Jr.``.

    arXiv spaces glued dots after the join, so a name ending in a dot gets a
    space before the comma: ``Sr., Jr.`` reads ``Sr. , Jr.``.
    """
    return f"{name} , {suffix}" if name.endswith(".") else f"{name}, {suffix}"


def _is_name(part: str) -> bool:
    """Whether a part is a name: not "(..." or "]...", not "et al" (arXiv keeps a lone ";")."""
    return part[0] not in "(]" and _ET_AL_RE.match(part) is None


def _collaboration(name: str) -> str | None:
    """The collaboration a name is, cut to its noun phrase; ``None`` for a person."""
    if _COLLABORATION_NOUN_RE.search(name) is None:
        return None
    match = _COLLABORATION_RE.search(name)
    return match.group().lstrip() if match else None  # the API strips what it writes


def _collaborations_first(names: list[str]) -> tuple[str, ...]:
    """The names, with the collaborations that open the list cut to their noun phrase,
    each swallowing a colon right after it."""
    leading: list[str] = []
    at = 0
    while at < len(names) and (collaboration := _collaboration(names[at])) is not None:
        leading.append(collaboration)
        at += 2 if names[at + 1 : at + 2] == [_COLON] else 1
    return (*leading, *names[at:])
