"""The canonical paper record every source is turned into before comparison.

A seed document, an arXiv Atom entry (and later OAI-PMH) all become a
``Record``.  Text is normalised here once so that a re-wrap by arXiv's old
backend, or a stray non-NFC character, is never mistaken for a change.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Any

from syncd.withdrawal import WithdrawnBy, detect_withdrawal

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
    """Whether a version's comment or abstract announces a withdrawal (``syncd.withdrawal``)."""
    return detect_withdrawal(abstract, comment).withdrawn


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
    # "author" or "admin" when withdrawn and the notice says (syncd.withdrawal).
    # Rows stored before this field existed lack it and read as None.
    withdrawn_by: WithdrawnBy | None = None

    @property
    def is_seed(self) -> bool:
        """A record observed in a seed document rather than on arXiv."""
        return self.version is None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; tuples become lists.

        Spelled out rather than ``dataclasses.asdict``, which deep-copies and
        costs several times more on every revision of a busy cycle.
        """
        return {
            "arxiv_id": self.arxiv_id,
            "version": self.version,
            "title": self.title,
            "abstract": self.abstract,
            "authors": list(self.authors),
            "authors_complete": self.authors_complete,
            "primary_category": self.primary_category,
            "categories": list(self.categories),
            "comment": self.comment,
            "journal_ref": self.journal_ref,
            "doi": self.doi,
            "published": self.published,
            "updated": self.updated,
            "withdrawn": self.withdrawn,
            "withdrawn_by": self.withdrawn_by,
        }

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
        for name in (*COMPARED_FIELDS, "arxiv_id", "version", "published", "updated"):
            value = getattr(newer, name)
            if value not in (None, ()):
                updates[name] = value
        if newer.authors:
            updates["authors_complete"] = newer.authors_complete
        # Who withdrew goes with whether: a newer "not withdrawn" clears it.
        updates["withdrawn_by"] = newer.withdrawn_by if newer.withdrawn else None
        return replace(self, **updates)


# The fields whose change is a change of the paper.  published/updated follow
# the version and feed-level metadata is never part of a record at all.
COMPARED_FIELDS: tuple[str, ...] = (
    "title",
    "abstract",
    "authors",
    "primary_category",
    "categories",
    "comment",
    "journal_ref",
    "doi",
    "withdrawn",
    "withdrawn_by",
)


def content_hash(record: Record) -> str:
    """A digest of what a diff compares: equal hashes mean no change to report.

    Categories are hashed as a sorted set, as the diff compares them.  Fields
    are joined with NUL and list items with RS, characters XML 1.0 cannot
    carry, so the encoding is unambiguous; normalised text is never empty,
    so "" stands for a missing field.  This runs for every entry of every
    page, hence no JSON.

    ``withdrawn_by`` is hashed only when set, so every record without it
    hashes as it did before the field existed: stored hashes stay valid.
    """
    parts: tuple[str, ...] = (
        record.arxiv_id or "",
        str(record.version),
        record.title or "",
        record.abstract or "",
        "\x1e".join(record.authors),
        "1" if record.authors_complete else "0",
        record.primary_category or "",
        "\x1e".join(sorted(record.categories)),
        record.comment or "",
        record.journal_ref or "",
        record.doi or "",
        "1" if record.withdrawn else "0",
    )
    if record.withdrawn_by is not None:
        parts += (record.withdrawn_by,)
    return hashlib.blake2b("\x00".join(parts).encode(), digest_size=16).hexdigest()
