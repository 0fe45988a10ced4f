"""The identifiers of an author's own arXiv feed: ORCID iDs and arXiv author ids.

arXiv serves a feed of the papers an author claimed at
``https://arxiv.org/a/<id>.atom``, where ``<id>`` is either identifier
(arXiv help, "Author Identifiers").  Both are checked when read, so a typo
is a configuration error at load, not a failed read every cycle.  ORCID
writes an iD as a URL (``https://orcid.org/0000-0002-1825-0097``, its
recommended display form), which people paste: that form is taken too, and
kept as the bare iD the feed's address needs.
"""

from __future__ import annotations

import re

__all__ = ["check_arxiv_author_id", "check_orcid", "orcid_check_digit", "unknown_id_advice"]

# Four groups of four: fifteen digits and a check character (0-9 or X).
_ORCID_RE = re.compile(r"[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{3}[0-9X]")
# The iD as ORCID's own URL, any scheme and case of the host, a trailing slash allowed.
_ORCID_URL_RE = re.compile(r"(?:https?://)?(?:www\.)?orcid\.org/(?P<id>[^/]*)/?", re.IGNORECASE)
# arXiv author ids are a surname, the first initial and a number (``warner_s_1``),
# in lower case; names with more parts keep their underscores (``de_la_cruz_j_1``).
_ARXIV_AUTHOR_ID_RE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*_[a-z]_[0-9]+")


def orcid_check_digit(base_digits: str) -> str:
    """The ISO 7064 mod 11-2 check character of an ORCID iD's first fifteen digits."""
    total = 0
    for digit in base_digits:
        total = (total + int(digit)) * 2
    result = (12 - total % 11) % 11
    return "X" if result == 10 else str(result)


def check_orcid(value: str) -> str:
    """The ORCID iD ``value`` is, bare (``0000-0002-7970-7855``), or ``ValueError`` saying why.

    ``value`` is the iD, or ORCID's URL of it (``https://orcid.org/0000-0002-7970-7855``).
    """
    text = value.strip()
    url = _ORCID_URL_RE.fullmatch(text)
    if url is not None:
        text = url.group("id")
    if not _ORCID_RE.fullmatch(text):
        raise ValueError(
            f"{value!r} is not an ORCID iD: four groups of four digits joined by hyphens,"
            " the last character a digit or X (0000-0002-7970-7855)"
        )
    digits = text.replace("-", "")
    expected = orcid_check_digit(digits[:15])
    if digits[15] != expected:
        raise ValueError(
            f"{value!r} is not an ORCID iD: its check digit is {digits[15]},"
            f" the ISO 7064 mod 11-2 checksum of the others says {expected} (a typo?)"
        )
    return text


def check_arxiv_author_id(value: str) -> str:
    """``value`` when it is an arXiv author id (``warner_s_1``); else ``ValueError`` saying why."""
    text = value.strip()
    if not _ARXIV_AUTHOR_ID_RE.fullmatch(text):
        raise ValueError(
            f"{value!r} is not an arXiv author id: lower-case surname, first initial and"
            " a number joined by underscores (warner_s_1)"
        )
    return text


def unknown_id_advice(feed_id: str) -> str:
    """What a person reads about an author whose feed's id arXiv knows no author by.

    An ORCID iD is valid (its check digit is) but linked to no arXiv
    account; an arXiv author id names nobody, so it is wrong.
    """
    fix = (
        "link the ORCID iD to an arXiv account"
        if _ORCID_RE.fullmatch(feed_id)
        else "correct the arXiv author id"
    )
    return f"arXiv knows no author {feed_id}: {fix}, or remove it"
