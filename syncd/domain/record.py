"""The canonical paper record every source is turned into before comparison.

A seed document, an arXiv Atom entry (and later OAI-PMH) all become a
``Record``.  Text is normalised here once so that a re-wrap by arXiv's old
backend, or a stray non-NFC character, is never mistaken for a change.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import Any

from syncd.domain.vocabulary import RECORD_FIELDS, FieldShape
from syncd.domain.withdrawal import WithdrawnBy

__all__ = [
    "COMPARED_FIELDS",
    "MAX_VERSION",
    "ArxivIdError",
    "Record",
    "content_hash",
    "normalize_name",
    "normalize_text",
    "parse_arxiv_time",
    "pasted_arxiv_id",
    "split_arxiv_id",
    "versioned_id",
]

# arXiv ids: new style 2212.09483 (4.4 or 4.5 digits), old style astro-ph/0601001
# or math.GT/0309136; each optionally followed by a version suffix vN.  The
# pattern takes the shape; _id_problem then checks the dates, numbers and
# archives arXiv's identifier scheme allows (arxiv.org/help/arxiv_identifier).
_ID_RE = re.compile(
    r"(?P<id>(?P<yymm>[0-9]{4})\.(?P<number>[0-9]{4,5})"
    r"|(?P<archive>[a-z][a-z\-]*)(?:\.[A-Z]{2})?/(?P<old_yymm>[0-9]{4})[0-9]{3})"
    r"(?:v(?P<version>[0-9]+))?"
)
# The ids arXiv issues today (YYMM.NNNNN since January 2015) with a version
# up to MAX_VERSION, in full: one match settles nearly every id of a page, and
# only other text takes _ID_RE and _id_problem's checks.
_CURRENT_ID_RE = re.compile(
    r"(?P<id>(?:1[5-9]|[2-9][0-9])(?:0[1-9]|1[0-2])\.[0-9]{5})"
    r"(?:v(?P<version>[1-9][0-9]{0,2}|1000))?"
)
# The highest version accepted (_CURRENT_ID_RE spells it out too).  arXiv's
# most revised papers have a few dozen versions; the cap keeps a hostile number
# far inside the 32-bit INTEGER column PostgreSQL stores it in (and SQLite's).
MAX_VERSION = 1000
# New style: YYMM.NNNN from April 2007 to December 2014, YYMM.NNNNN from January 2015.
_FIRST_NEW, _LAST_FOUR_DIGIT, _FIRST_FIVE_DIGIT = "0704", "1412", "1501"
# Old style ran from August 1991 (hep-th/9108001) to March 2007, in these archives
# only; the list is closed, since no archive has issued such numbers since.
_FIRST_OLD, _LAST_OLD = "9108", "0703"
_OLD_ARCHIVES = frozenset(
    {
        *("acc-phys", "adap-org", "alg-geom", "ao-sci", "astro-ph", "atom-ph", "bayes-an"),
        *("chao-dyn", "chem-ph", "cmp-lg", "comp-gas", "cond-mat", "cs", "dg-ga", "funct-an"),
        *("gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th", "math", "math-ph", "mtrl-th"),
        *("nlin", "nucl-ex", "nucl-th", "patt-sol", "physics", "plasm-ph", "q-alg", "q-bio"),
        *("quant-ph", "solv-int", "supr-con"),
    }
)
_SHAPE = "not YYMM.NNNNN or archive/YYMMNNN, with an optional version vN"
_TEX_BRACES = str.maketrans("", "", "{}")


def normalize_text(value: str | None) -> str | None:
    """Collapse all whitespace runs to one space, strip, and apply Unicode NFC.

    ``None`` and text that is empty after collapsing both become ``None``.
    """
    if value is None:
        return None
    collapsed = " ".join(unicodedata.normalize("NFC", value).split())
    return collapsed or None


def normalize_name(name: str) -> str:
    """A comparison key for a person's name: accents, case and punctuation folded.

    TeX's grouping braces go without a trace: arXiv keeps them around a
    converted accent (``Pl{\\"o}tz`` reads ``Pl{ö}tz``), and the same person
    is ``Plötz`` elsewhere.
    """
    decomposed = unicodedata.normalize("NFKD", name.translate(_TEX_BRACES))
    letters = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^\w\s]", " ", letters.casefold()).split())


class ArxivIdError(ValueError):
    """Text that is not an arXiv identifier; ``reason`` says what is wrong with it."""

    def __init__(self, raw: str, reason: str) -> None:
        shown = raw if len(raw) <= 80 else raw[:77] + "..."
        super().__init__(f"not an arXiv identifier: {shown!r} ({reason})")
        self.reason = reason


def versioned_id(arxiv_id: str, version: int) -> str:
    """``2602.09578`` and 1 as arXiv's versioned id, ``2602.09578v1``."""
    return f"{arxiv_id}v{version}"


def split_arxiv_id(raw: str) -> tuple[str, int | None]:
    """Split ``http://arxiv.org/abs/2212.09483v2`` or ``2212.09483v2`` into id and version.

    Raises ``ArxivIdError`` (a ``ValueError``) when the text holds no arXiv
    identifier, or one that names no possible paper or version: every id that
    reaches the database or a webhook has passed here.
    """
    tail = raw.strip()
    if "/abs/" in tail:
        tail = tail.split("/abs/", 1)[1]
    match = _CURRENT_ID_RE.fullmatch(tail)
    if match is None:
        match = _ID_RE.fullmatch(tail)
        if match is None:
            raise ArxivIdError(raw, _SHAPE)
        problem = _id_problem(match)
        if problem is not None:
            raise ArxivIdError(raw, problem)
    version = match.group("version")
    return match.group("id"), int(version) if version else None


# How people paste a paper: arXiv's own citation form (arXiv:2611.01002), or the address
# of its abstract, PDF or HTML page, with or without the scheme (browsers drop it, and
# some proxies fold the double slash of one written into a path).
_CITED = re.compile(r"arxiv:\s*", re.IGNORECASE)
_PAGE_URL = re.compile(
    r"(?:https?:/+)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/(?P<ref>.+?)(?:\.pdf)?/?",
    re.IGNORECASE,
)


def pasted_arxiv_id(text: str) -> str | None:
    """The arXiv id (without version) ``text`` names as people paste it: ``2611.01002``,
    ``2611.01002v2``, ``arXiv:2611.01002``, ``https://arxiv.org/abs/2611.01002v2``,
    ``arxiv.org/pdf/2611.01002v2.pdf``; None when it names none."""
    ref = text.strip()
    if page := _PAGE_URL.fullmatch(ref):
        ref = page.group("ref")
    elif cited := _CITED.match(ref):
        ref = ref[cited.end() :]
    try:
        return split_arxiv_id(ref)[0]
    except ArxivIdError:
        return None


def _id_problem(match: re.Match[str]) -> str | None:
    """What makes a well-shaped id impossible: its month, date, archive or version; else None."""
    yymm = match.group("yymm")
    if yymm is not None:
        problem = _new_style_problem(yymm, match.group("number"))
    else:
        problem = _old_style_problem(match.group("archive"), match.group("old_yymm"))
    if problem is not None:
        return problem
    version = match.group("version")
    # Measured as text first: a hostile version may have more digits than int() takes.
    significant = (version or "").lstrip("0")
    if version is not None and (
        len(significant) > len(str(MAX_VERSION)) or not 1 <= int(significant or 0) <= MAX_VERSION
    ):
        return f"version {version[:24]} is not between 1 and {MAX_VERSION}"
    return None


def _new_style_problem(yymm: str, number: str) -> str | None:
    if not "01" <= yymm[2:] <= "12":
        return f"{yymm} has no month {yymm[2:]}"
    # YYMM compares as text, and every new-style YYMM is at least 0704.
    if len(number) == 4 and not _FIRST_NEW <= yymm <= _LAST_FOUR_DIGIT:
        return f"4-digit numbers are from {_FIRST_NEW} to {_LAST_FOUR_DIGIT}, not {yymm}"
    if len(number) == 5 and yymm < _FIRST_FIVE_DIGIT:
        return f"5-digit numbers are from {_FIRST_FIVE_DIGIT} on, not {yymm}"
    return None


def _old_style_problem(archive: str, yymm: str) -> str | None:
    if archive not in _OLD_ARCHIVES:
        return f"{archive[:40]!r} is not an arXiv archive of old-style ids"
    if not "01" <= yymm[2:] <= "12":
        return f"{yymm} has no month {yymm[2:]}"
    if _LAST_OLD < yymm < _FIRST_OLD:
        return f"old-style ids are from {_FIRST_OLD} to {_LAST_OLD}, not {yymm}"
    return None


def parse_arxiv_time(text: str | None) -> datetime | None:
    """An Atom date as arXiv writes it (``2026-03-01T09:00:00Z``, or ``-04:00`` on its old
    backend) as an aware datetime; None when absent or unreadable."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Record:
    """One observation of a paper, in the shape DESIGN.md names "the canonical record".

    ``authors_complete`` is false when the source truncated the list
    (``A, B, C et al.``) or did not carry authors at all; the diff then compares
    the known names as a prefix.  ``version is None`` marks a seed observation,
    whose empty fields mean "not known" rather than "absent".
    """

    arxiv_id: str | None = None
    version: int | None = None
    title: str | None = None
    abstract: str | None = None
    authors: tuple[str, ...] = ()
    authors_complete: bool = False
    primary_category: str | None = None
    categories: tuple[str, ...] = ()
    comment: str | None = None
    journal_ref: str | None = None
    doi: str | None = None
    published: str | None = None
    updated: str | None = None
    withdrawn: bool = field(default=False)
    # "author" or "admin" when withdrawn and the notice says (syncd.domain.withdrawal).
    # Rows stored before this field existed lack it and read as None.
    withdrawn_by: WithdrawnBy | None = None

    @property
    def is_seed(self) -> bool:
        """A record observed in a seed document rather than on arXiv."""
        return self.version is None

    @property
    def version_date(self) -> datetime | None:
        """arXiv's date for this version: when it was submitted, None when unknown.

        An entry's ``<updated>`` is the date of the version it carries, and
        ``<published>`` always v1's (arXiv API manual, 3.3.2.1 and 5.2).
        """
        return None if self.is_seed else parse_arxiv_time(self.updated)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict in ``RECORD_FIELDS`` order; tuples become lists."""
        return _record_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        """Rebuild a record from ``to_dict`` output (as stored in the database).

        Keys this syncd does not know (written by a newer one) are left out.
        """
        values = {name: value for name, value in data.items() if name in _FIELD_NAMES}
        values["authors"] = tuple(values.get("authors") or ())
        values["categories"] = tuple(values.get("categories") or ())
        return cls(**values)

    def merged_with(self, newer: Record) -> Record:
        """This record with every field that ``newer`` knows taken from ``newer``."""
        updates: dict[str, Any] = {}
        for name in _FIELD_NAMES:
            if name == "authors_complete":
                continue  # follows the authors, below
            value = getattr(newer, name)
            if value not in (None, ()):
                updates[name] = value
        if newer.authors:
            updates["authors_complete"] = newer.authors_complete
        # Who withdrew goes with whether: a newer "not withdrawn" clears it.
        updates["withdrawn_by"] = newer.withdrawn_by if newer.withdrawn else None
        return replace(self, **updates)


_FIELD_NAMES = tuple(f.name for f in RECORD_FIELDS)

# The fields whose change is a change of the paper's content (the version
# is compared too, but says which paper this is rather than what it says).
COMPARED_FIELDS: tuple[str, ...] = tuple(
    f.name for f in RECORD_FIELDS if f.kind is not None and f.name != "version"
)


# A record field read as the text content_hash joins, by the field's shape.
# Normalised text is never empty, so "" stands for a missing field; list items
# are joined with RS; categories are a set, sorted as the diff compares them.
_HASH_EXPRESSIONS: dict[FieldShape, str] = {
    "text": '(r.{0} or "")',
    "number": "str(r.{0})",
    "names": '"\\x1e".join(r.{0})',
    "set": '"\\x1e".join(sorted(r.{0}))',
    "flag": '("1" if r.{0} else "0")',
}


def _compiled(source: str, name: str) -> Callable[..., Any]:
    """A function built from ``source``, which the field table wrote.

    These run for every entry of every page; spelled out, they cost a
    fraction of a loop over the table (measured: to_dict 0.6 against 2.9 µs),
    so they are generated once, at import, as ``dataclasses`` generates
    ``__init__``.  The table stays the one list of fields.
    """
    namespace: dict[str, Any] = {"blake2b": hashlib.blake2b}
    # The slots' own setters: what a frozen dataclass's __init__ reaches
    # through object.__setattr__, one lookup and call per field.
    namespace |= {f"set_{f.name}": getattr(Record, f.name).__set__ for f in RECORD_FIELDS}
    exec(source, namespace)  # the source is built from RECORD_FIELDS alone
    function: Callable[..., Any] = namespace[name]
    return function


def _record_init_source() -> str:
    """``Record.__init__`` as dataclasses writes it (same parameters, defaults and order),
    each field stored by its slot's setter: half the time of a frozen dataclass's."""
    defaults = {f.name: f.default for f in fields(Record)}
    if any(value is MISSING for value in defaults.values()):
        raise TypeError("every Record field has a default: the generated __init__ relies on it")
    parameters = ", ".join(f"{name}={value!r}" for name, value in defaults.items())
    body = "".join(f"    set_{name}(self, {name})\n" for name in defaults)
    return f"def __init__(self, {parameters}):\n{body}"


def _record_dict_source() -> str:
    items = [
        f'"{f.name}": list(r.{f.name})'
        if f.shape in ("names", "set")
        else f'"{f.name}": r.{f.name}'
        for f in RECORD_FIELDS
    ]
    return "def record_dict(r):\n    return {" + ", ".join(items) + "}\n"


def _content_hash_source() -> str:
    always = [
        _HASH_EXPRESSIONS[f.shape].format(f.name) for f in RECORD_FIELDS if f.hashed == "always"
    ]
    lines = ["def content_hash(r):", f"    parts = [{', '.join(always)}]"]
    for f in RECORD_FIELDS:
        if f.hashed == "when_set":
            lines += [
                f"    if r.{f.name} is not None:",
                f"        parts.append({_HASH_EXPRESSIONS[f.shape].format(f.name)})",
            ]
    lines.append('    return blake2b("\\x00".join(parts).encode(), digest_size=16).hexdigest()')
    return "\n".join(lines) + "\n"


setattr(Record, "__init__", _compiled(_record_init_source(), "__init__"))  # noqa: B010 (mypy)
_record_dict: Callable[[Record], dict[str, Any]] = _compiled(_record_dict_source(), "record_dict")
_content_hash: Callable[[Record], str] = _compiled(_content_hash_source(), "content_hash")


def content_hash(record: Record) -> str:
    """A digest of what a diff compares: equal hashes mean no change to report.

    The ``hashed`` fields of ``RECORD_FIELDS``, in order; "when_set" ones
    only when set, so every record without them hashes as it did before
    they existed and stored hashes stay valid.  Fields are joined with NUL
    and list items with RS, characters XML 1.0 cannot carry, so the encoding
    is unambiguous.  This runs for every entry of every page, hence no JSON.
    """
    return _content_hash(record)
