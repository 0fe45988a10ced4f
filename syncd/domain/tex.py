# ruff: noqa: RUF001, RUF002 -- Greek and other non-Latin letters are what this module writes
"""TeX in arXiv's text, turned into Unicode exactly as arXiv's own services turn it.

What submitters write is TeX (``Pl\\"otz``, ``Jos{\\'e}``, ``$\\alpha$``).
OAI-PMH's ``arXivRaw`` and the author feeds carry it as written; the API and
the ``arXiv`` OAI format carry it converted by arXiv's ``tex2utf``
(arXiv/arxiv-base ``arxiv/util/tex2utf.py``): accents and a few letters,
Greek letters (inside math too: the API writes ``$α$``) and a few symbols
become Unicode, and every other command stays TeX (``$\\varepsilon$``,
``\\sqrt{s}``).  One version read from any of them must be one record, so
every source's text goes through ``tex_to_utf8``, which converts what arXiv
converts and nothing else.

Why not a library: over the 200 records of ``tests/fixtures/arxiv-real``
(both formats), titles and abstracts left as written differ from arXiv's in
38 texts; pylatexenc's ``LatexNodes2Text`` (math verbatim) in 63 and
latexcodec in 67, since both convert far more than arXiv does (``--``,
``\\%``, ``\\emph``).  This module differs in none.

arXiv's rules, with their quirks kept on purpose (a difference is a false
event): an accent on a letter it has no precomposed character for keeps the
bare letter (``\\'g`` reads ``g``), but one of the letter-named accents keeps
its letter too (``\\v{y}`` reads ``vy``); ``\\upsilon`` stays TeX (arXiv's
table spells it ``upsion``); ``\\phi`` is ϕ and ``\\varphi`` φ.  The text is
converted in arXiv's order, one kind of command at a time.  One rule of
arXiv's is left out: meant to write ``\\'{\\i}`` as í, it fires only after a
"/" (a stray delimiter) and then writes ``\\'\\{i\\}``; no text of the
corpus has it, and here ``\\'{\\i}`` reads ``\\'ı`` wherever it stands, as
arXiv reads it without the slash.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

__all__ = ["tex_to_utf8"]

# Accent commands, the combining mark each stands for, and the letters arXiv
# composes it with (each pair NFC-composes to one precomposed character).
_ACCENTS: dict[str, tuple[str, str]] = {
    "'": ("\u0301", "ACEILNORSUYZaceilnorsuyz"),  # acute
    '"': ("\u0308", "AEIOUYaeiouy"),  # diaeresis
    ".": ("\u0307", "ACEGIOZacegoz"),  # dot above
    "=": ("\u0304", "AEIOUYaeiouy"),  # macron
    "^": ("\u0302", "ACEGHIJOSUWYaceghijosuwy"),  # circumflex
    "`": ("\u0300", "AEIOUaeiou"),  # grave
    "~": ("\u0303", "AINOUainou"),  # tilde
    "H": ("\u030b", "OUou"),  # double acute
    "c": ("\u0327", "CEGKLNRSTcegklnrst"),  # cedilla
    "k": ("\u0328", "AEIOUaeiou"),  # ogonek
    "r": ("\u030a", "AUau"),  # ring above
    "u": ("\u0306", "AEGIOUaegiou"),  # breve
    "v": ("\u030c", "ACDEGHIKLNORSTUZacdeghiklnorstuz"),  # caron
}
_ACCENTED: dict[str, str] = {
    command + letter: unicodedata.normalize("NFC", letter + mark)
    for command, (mark, letters) in _ACCENTS.items()
    for letter in letters
}

# Letters TeX writes as commands: \ss, {\o}, \AA.
_LETTERS: dict[str, str] = {
    "AA": "Å", "AE": "Æ", "DH": "Ð", "DJ": "Đ", "ETH": "Ð", "L": "Ł", "NG": "Ŋ", "O": "Ø",
    "OE": "Œ", "TH": "Þ", "aa": "å", "ae": "æ", "dh": "ð", "dj": "đ", "eth": "ð", "i": "ı",
    "l": "ł", "ng": "ŋ", "o": "ø", "oe": "œ", "ss": "ß", "th": "þ",
}  # fmt: skip
_GREEK: dict[str, str] = {
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π",
    "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "omicron": "ο", "pi": "π", "rho": "ρ", "varsigma": "ς", "sigma": "σ",
    "tau": "τ", "upsion": "υ", "varphi": "φ", "phi": "ϕ", "chi": "χ", "psi": "ψ", "omega": "ω",
}  # fmt: skip
_SYMBOLS: dict[str, str] = {
    "P": "¶", "S": "§", "copyright": "©", "guillemotleft": "«", "guillemotright": "»",
    "pounds": "£", "dag": "†", "ddag": "‡", "div": "÷", "deg": "°",
}  # fmt: skip


def _named_commands(names: Mapping[str, str]) -> re.Pattern[str]:
    r"""``\name`` or ``{\name}``, the name ending where letters and digits do.

    Unbraced, the command also takes what TeX lets end a command name: a
    following space, ``{}``, or the ``\`` of a control space (``\o\ rsted``).
    """
    alternatives = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    return re.compile(
        rf"(?P<brace>\{{)?\\(?P<name>{alternatives})(?![^\W_])"
        r"(?(brace)\}|(?:\\(?=\ )|\ |\{\}|)?)"
    )


_LETTER_RE = _named_commands(_LETTERS)
_GREEK_RE = _named_commands(_GREEK)
_SYMBOL_RE = _named_commands(_SYMBOLS)
_DOTLESS_J_RE = re.compile(r"\{\\j\}|\\j\s")
_DOUBLE_BRACES_RE = re.compile(r"\{\{([^}]*)\}\}")
# \'e, then \'{e}, then the letter-named accents, which need braces: \c{c}.
_SYMBOL_ACCENT_RE = re.compile(r"""\\([\'`^"~=.])([a-zA-Z])""")
_BRACED_SYMBOL_ACCENT_RE = re.compile(r"""\\([\'`^"~=.])\{([a-zA-Z])\}""")
_LETTER_ACCENT_RE = re.compile(r"\\([Hckoruv])\{([a-zA-Z])\}")
_TIE_RE = re.compile(r"\\t\{([^}])\}")
# Where any pattern above could match: a command it names, an accent, "{{".
# Text with none of them (the API's math: \sqrt, \mathcal) is returned after
# one search instead of ten substitutions, unchanged, as they would leave it.
_NAMES = sorted({*_LETTERS, *_GREEK, *_SYMBOLS}, key=len, reverse=True)
_CONVERTIBLE_RE = re.compile(
    r"\{\{|\\(?:[\'`^\"~=.]|[Hckoruvt]\{|j[}\s]|(?:"
    + "|".join(map(re.escape, _NAMES))
    + r")(?![^\W_]))"
)


def tex_to_utf8(text: str) -> str:
    """``text`` with the TeX that arXiv converts written in Unicode; the rest untouched."""
    if ("\\" not in text and "{{" not in text) or _CONVERTIBLE_RE.search(text) is None:
        return text  # nearly every text: nothing arXiv would convert
    return _converted(text)


def _converted(text: str) -> str:
    """Every substitution of arXiv's, in its order."""
    text = _LETTER_RE.sub(lambda m: _LETTERS[m["name"]], text)
    text = _GREEK_RE.sub(lambda m: _GREEK[m["name"]], text)
    text = _SYMBOL_RE.sub(lambda m: _SYMBOLS[m["name"]], text)
    text = _DOTLESS_J_RE.sub("j", text)
    while _DOUBLE_BRACES_RE.search(text):
        text = _DOUBLE_BRACES_RE.sub(r"{\1}", text)
    text = _SYMBOL_ACCENT_RE.sub(_accented, text)
    text = _BRACED_SYMBOL_ACCENT_RE.sub(_accented, text)
    text = _LETTER_ACCENT_RE.sub(_accented, text)
    return _TIE_RE.sub(r"\1", text)


def _accented(match: re.Match[str]) -> str:
    command, letter = match[1], match[2]
    found = _ACCENTED.get(command + letter)
    if found is not None:
        return found
    # arXiv drops what is not a letter of the pair: \'g reads "g", \v{y} "vy".
    return command + letter if command.isalpha() else letter
