# ruff: noqa: RUF001 -- Greek letters are what this module writes as TeX
"""What arXiv records, written back from what its API serves: for the fakes' arXivRaw and feeds.

The fake arXiv holds records as the API serves them.  arXivRaw and the
author feeds carry what arXiv records instead (``tests/fixtures/arxiv-real``),
so the fakes write those formats through this module, and every test that
harvests or reads a feed meets what syncd must read back:

* ``as_tex``: text as a submitter types it, accents and Greek in TeX.  Only
  what arXiv's conversion turns back into the same character is written as
  TeX (checked with ``tex_to_utf8`` itself); anything else stays UTF-8, as a
  submitter may type it.
* ``with_aliases``: categories as arXiv files them, each of an alias pair
  with its alias after it (``cs.IT math.IT``), where the API names one.
"""

from __future__ import annotations

import unicodedata

from syncd.domain.tex import tex_to_utf8

__all__ = ["as_tex", "with_aliases"]

# The canonical names of arXiv's alias pairs, each with its alias.
_ALIASES = {
    "math-ph": "math.MP",
    "math.ST": "stat.TH",
    "cs.IT": "math.IT",
    "econ.GN": "q-fin.EC",
    "eess.SY": "cs.SY",
    "math.NA": "cs.NA",
}

# The accents whose command is a symbol (\'e) and those named by a letter (\v{s}).
_SYMBOL_ACCENTS = {
    "\u0301": "'",
    "\u0300": "`",
    "\u0302": "^",
    "\u0308": '"',
    "\u0303": "~",
    "\u0304": "=",
    "\u0307": ".",
}
_LETTER_ACCENTS = {
    "\u0327": "c",
    "\u030c": "v",
    "\u030b": "H",
    "\u0306": "u",
    "\u030a": "r",
    "\u0328": "k",
}
_COMMANDS = {
    "ß": "ss", "ø": "o", "Ø": "O", "å": "aa", "Å": "AA", "æ": "ae", "Æ": "AE",
    "œ": "oe", "Œ": "OE", "ł": "l", "Ł": "L",
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "λ": "lambda",
    "μ": "mu", "π": "pi", "σ": "sigma", "τ": "tau", "ω": "omega", "Δ": "Delta", "Ω": "Omega",
}  # fmt: skip


def as_tex(text: str | None) -> str | None:
    """``text`` with the characters TeX spells as commands written as a submitter writes them."""
    if text is None or text.isascii():
        return text
    written = [_written(char, text[index + 1 : index + 2]) for index, char in enumerate(text)]
    return "".join(written)


def _written(char: str, following: str) -> str:
    """One character as TeX, or as it is when arXiv would not read the TeX back as it."""
    candidate = char
    command = _COMMANDS.get(char)
    if command is not None:
        # A command ends at a non-letter; braced, a letter or a space may follow.
        unbraced = not following or not (following.isalnum() or following.isspace())
        candidate = f"\\{command}" if unbraced else f"{{\\{command}}}"
    else:
        decomposed = unicodedata.normalize("NFD", char)
        base, mark = decomposed[0], decomposed[1:]
        if mark in _SYMBOL_ACCENTS:
            candidate = f"\\{_SYMBOL_ACCENTS[mark]}{base}"
        elif mark in _LETTER_ACCENTS:
            candidate = f"\\{_LETTER_ACCENTS[mark]}{{{base}}}"
    return candidate if tex_to_utf8(candidate) == char else char


def with_aliases(categories: tuple[str, ...]) -> tuple[str, ...]:
    """``categories`` as arXiv files them: an alias pair's alias after its canonical name."""
    filed = [name for category in categories for name in (category, _ALIASES.get(category)) if name]
    return tuple(dict.fromkeys(filed))
