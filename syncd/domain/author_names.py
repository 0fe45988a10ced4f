"""Author names as data: their one written form, the key that tells two names apart, and
the only place a name becomes part of an arXiv ``search_query``.

A name enters from an ``[[authors]]`` table, ``syncd authors add``, a CSV
file or the admin API; each passes it through ``check_name``, which returns
its normal form (Unicode NFC, every run of spaces one space, no space at
either end) or refuses it saying why.  Two names are one author when their
``name_key`` agree: "Jane Smith", "jane smith" and "JANE  SMITH" are one.

``author_term`` builds ``au:"<name>"``.  The arXiv API user manual (section
5.1, "Details of Query Construction") gives meaning to a few characters and
words in a ``search_query``, and documents no way to escape any of them:

- double quotes group words into a phrase (``%22``): a quote in a name
  would end the phrase, and what follows would be read as query;
- parentheses group Boolean expressions (``%28 %29``);
- ``prefix:`` makes a word a field (``ti: au: abs: co: jr: cat: rn: id:
  all:``, and ``submittedDate:``), whose range is written in brackets
  (``[202301010600+TO+202401010600]``);
- ``AND``, ``OR`` and ``ANDNOT`` combine terms.

Inside ``au:"..."`` only the closing quote is certain to act; whether a
parenthesis, a colon or an operator word inside a phrase is literal the
manual does not say, and a name that guessed wrong would widen a query
(``OR cat:cs.LG`` pages through a category) or fail every author batched
with it.  No person's name needs any of them, so each is refused with its
reason rather than escaped on a guess.  A backslash, the escape of many
query parsers, is refused too: the manual documents none, so its effect on
the quote after it is unknown.  The operator words are refused only as
they are written in the manual, in capitals and whole: "Ann Or" and "Ann
or" are names; "Ann OR" is refused, and loses nothing, since an author
search ignores case (the manual's ``au:del_maestro`` finds Adrian Del
Maestro).

A custom ``query`` is the operator's own expression, not a name: it is
checked only for being whole (``check_query``), and it is always sent alone.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

__all__ = [
    "MAX_NAME_CHARS",
    "MAX_QUERY_CHARS",
    "author_term",
    "check_name",
    "check_query",
    "name_key",
    "repeated_names",
    "spelled_otherwise",
]

MAX_NAME_CHARS = 200  # authors.name; the longest names arXiv lists are far shorter
MAX_QUERY_CHARS = 2000  # authors.query

# Characters the manual's query syntax gives a meaning to, and why each is refused.
_QUERY_SYNTAX = {
    '"': 'a double quote would end the phrase au:"..." and the rest would be arXiv query',
    "\\": "a backslash may escape the quote after it, and the arXiv API documents no escapes",
    "(": "parentheses group Boolean expressions in an arXiv query",
    ")": "parentheses group Boolean expressions in an arXiv query",
    "[": "brackets hold a date range in an arXiv query (submittedDate:[... TO ...])",
    "]": "brackets hold a date range in an arXiv query (submittedDate:[... TO ...])",
    ":": "a colon makes the word before it a field prefix in an arXiv query (ti:, cat:, ...)",
}
_OPERATOR = re.compile(r"\b(ANDNOT|AND|OR)\b")
# Every "other" category: controls (Cc: line breaks and tabs among them),
# format characters (Cf: zero-width spaces and joiners, U+2060, U+FEFF, the
# bidi controls), surrogates, private use and unassigned code points; and
# the line and paragraph separators (Zl, Zp).  None is part of a name, and
# most are invisible: two names that look alike would be two authors.
_REFUSED_CATEGORIES = ("C", "Zl", "Zp")


def _refused_character(text: str) -> str | None:
    """The first character of a refused category in ``text``, described; None if there is none."""
    # str.isprintable() is false for every "other" and separator character
    # but the space: most names are settled without a look at each character.
    if text.isprintable():
        return None
    for char in text:
        if unicodedata.category(char).startswith(_REFUSED_CATEGORIES):
            name = unicodedata.name(char, "")
            return f"U+{ord(char):04X}" + (f" {name}" if name else "")
    return None


def check_name(raw: str) -> str:
    """``raw`` in its normal form, or ``ValueError`` saying why no author can have it.

    The normal form is NFC with whitespace runs collapsed to one space and
    stripped; invisible and control characters, the query syntax above, a
    name without a letter and one over ``MAX_NAME_CHARS`` characters are
    refused.
    """
    text = unicodedata.normalize("NFC", raw)
    refused = _refused_character(text)
    if refused is not None:
        raise ValueError(
            f"contains {refused}: line breaks, control and invisible characters"
            " are not part of a name"
        )
    name = " ".join(text.split())
    if not name:
        raise ValueError("must not be empty")
    if not any(char.isalpha() for char in name):
        raise ValueError(f"{name!r} has no letter: a name has at least one")
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"at most {MAX_NAME_CHARS} characters (this one has {len(name)})")
    for char, reason in _QUERY_SYNTAX.items():
        if char in name:
            raise ValueError(f"{name!r} contains {char!r}: {reason}")
    operator = _OPERATOR.search(name)
    if operator is not None:
        word = operator.group()
        raise ValueError(
            f"{name!r} contains the word {word}, an operator of arXiv queries;"
            f" write it {word.capitalize()!r}: arXiv's author search ignores case"
        )
    return name


def name_key(name: str) -> str:
    """What every spelling of one name has in common: NFC, case folded, spaces collapsed.

    Normalised before and after folding, as Unicode's canonical caseless
    match is (D145); folding, not lower-casing, makes "STRAUSS" and
    "Strauß" one key as well as "JANE SMITH" and "jane smith".
    """
    folded = unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())
    return " ".join(folded.split())


def repeated_names(names: Sequence[str]) -> list[tuple[int, int]]:
    """``(later, first)`` for each name that is one already listed at index ``first``."""
    first: dict[str, int] = {}
    return [
        (index, first[key])
        for index, name in enumerate(names)
        if first.setdefault(key := name_key(name), index) != index
    ]


def spelled_otherwise(given: str, known: str) -> str:
    """Why ``given`` is refused beside ``known``, an author of the same ``name_key``."""
    return (
        f"{given!r} is the author {known!r}: names are compared without regard to case;"
        f" use {known!r}"
    )


def author_term(name: str) -> str:
    """The ``search_query`` term of an author's name, ``au:"<name>"``.

    ``ValueError`` for a name ``check_name`` refuses: nothing but a checked
    name is ever put between the quotes.
    """
    checked = check_name(name)
    if checked != name:
        raise ValueError(f"{name!r} is not in its normal form {checked!r}")
    return f'au:"{name}"'


def check_query(query: str) -> str | None:
    """A custom ``search_query``, stripped, when it is whole; else ``ValueError`` saying why.

    Whole: at most ``MAX_QUERY_CHARS`` characters, no control or invisible
    character, its double quotes paired and its parentheses (outside
    quotes) balanced, as the manual's grammar needs.  A blank one is none
    (``None``): the author is searched by name.  Its meaning is the
    operator's: it is sent alone, never ORed with another author's.
    """
    text = query.strip()
    if not text:
        return None
    if len(text) > MAX_QUERY_CHARS:
        raise ValueError(f"at most {MAX_QUERY_CHARS} characters (this one has {len(text)})")
    refused = _refused_character(text)
    if refused is not None:
        raise ValueError(f"contains {refused}, a control or invisible character")
    depth = 0
    quote_at = None
    for position, char in enumerate(text, start=1):
        if char == '"':
            quote_at = None if quote_at is not None else position
        elif quote_at is None and char in "()":
            depth += 1 if char == "(" else -1
            if depth < 0:
                raise ValueError(
                    f"character {position} is a closing parenthesis without its opening one"
                )
    if quote_at is not None:
        raise ValueError(f"the double quote at character {quote_at} is never closed")
    if depth:
        raise ValueError("a parenthesis is opened and never closed")
    return text
