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
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any

from syncd.vocabulary import RECORD_FIELDS, FieldShape

__all__ = [
    "COMPARED_FIELDS",
    "Record",
    "content_hash",
    "is_withdrawal",
    "normalize_name",
    "normalize_text",
    "split_arxiv_id",
]

# arXiv ids: new style 2212.09483 (4.4 or 4.5 digits), old style astro-ph/0601001
# or math.GT/0309136; each optionally followed by a version suffix vN.
_ID_RE = re.compile(
    r"(?P<id>[0-9]{4}\.[0-9]{4,5}|[a-z][a-z\-]*(?:\.[A-Z]{2})?/[0-9]{7})(?:v(?P<version>[0-9]+))?"
)

# arXiv marks a withdrawal by a new version whose comment (and usually the
# replaced abstract) says so; see docs/arxiv/official_help_withdraw.md.
_WITHDRAWN_RE = re.compile(r"\b(?:has been |is )?withdrawn\b", re.IGNORECASE)


def normalize_text(value: str | None) -> str | None:
    """Collapse all whitespace runs to one space, strip, and apply Unicode NFC.

    ``None`` and text that is empty after collapsing both become ``None``.
    """
    if value is None:
        return None
    collapsed = " ".join(unicodedata.normalize("NFC", value).split())
    return collapsed or None


def normalize_name(name: str) -> str:
    """A comparison key for a person's name: accents, case and punctuation folded."""
    decomposed = unicodedata.normalize("NFKD", name)
    letters = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^\w\s]", " ", letters.casefold()).split())


def split_arxiv_id(raw: str) -> tuple[str, int | None]:
    """Split ``http://arxiv.org/abs/2212.09483v2`` or ``2212.09483v2`` into id and version.

    Raises ``ValueError`` when the text holds no arXiv identifier.
    """
    tail = raw.strip()
    if "/abs/" in tail:
        tail = tail.split("/abs/", 1)[1]
    match = _ID_RE.fullmatch(tail)
    if match is None:
        raise ValueError(f"not an arXiv identifier: {raw!r}")
    version = match.group("version")
    return match.group("id"), int(version) if version else None


def is_withdrawal(comment: str | None, abstract: str | None) -> bool:
    """Whether a version's comment or abstract announces a withdrawal."""
    # Cheap tests first: this runs for every entry of every page.
    if comment and "withdraw" in comment.lower() and _WITHDRAWN_RE.search(comment):
        return True
    return bool(abstract and abstract[:32].lower().startswith("this paper has been withdrawn"))


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

    @property
    def is_seed(self) -> bool:
        """A record observed in a seed document rather than on arXiv."""
        return self.version is None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict in ``RECORD_FIELDS`` order; tuples become lists.

        One ``attrgetter`` call rather than ``dataclasses.asdict``, which
        deep-copies and costs several times more on every revision of a busy cycle.
        """
        data = dict(zip(_FIELD_NAMES, _get_fields(self), strict=True))
        for name in _TUPLE_FIELDS:
            data[name] = list(data[name])
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        """Rebuild a record from ``to_dict`` output (as stored in the database)."""
        values = dict(data)
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
        return replace(self, **updates)


_FIELD_NAMES = tuple(f.name for f in RECORD_FIELDS)
_get_fields = attrgetter(*_FIELD_NAMES)
_TUPLE_FIELDS = tuple(f.name for f in RECORD_FIELDS if f.shape in ("names", "set"))

# The fields whose change is a change of the paper's content (the version
# is compared too, but says which paper this is rather than what it says).
COMPARED_FIELDS: tuple[str, ...] = tuple(
    f.name for f in RECORD_FIELDS if f.kind is not None and f.name != "version"
)


def _text(value: str | None) -> str:
    # Normalised text is never empty, so "" stands for a missing field.
    return value or ""


def _names(value: tuple[str, ...]) -> str:
    return "\x1e".join(value)


def _set(value: tuple[str, ...]) -> str:
    return "\x1e".join(sorted(value))


def _flag(value: bool) -> str:
    return "1" if value else "0"


_HASH_ENCODERS: dict[FieldShape, Callable[[Any], str]] = {
    "text": _text,
    "number": str,
    "names": _names,
    "set": _set,
    "flag": _flag,
}
_HASHED = tuple(f for f in RECORD_FIELDS if f.hashed)
_get_hashed = attrgetter(*(f.name for f in _HASHED))
_hash_encoders = tuple(_HASH_ENCODERS[f.shape] for f in _HASHED)


def content_hash(record: Record) -> str:
    """A digest of what a diff compares: equal hashes mean no change to report.

    The ``hashed`` fields of ``RECORD_FIELDS``, in order.  Categories are
    hashed as a sorted set, as the diff compares them.  Fields are joined
    with NUL and list items with RS, characters XML 1.0 cannot carry, so the
    encoding is unambiguous.  This runs for every entry of every page, hence
    no JSON.
    """
    parts = [encode(v) for encode, v in zip(_hash_encoders, _get_hashed(record), strict=True)]
    return hashlib.blake2b("\x00".join(parts).encode(), digest_size=16).hexdigest()
