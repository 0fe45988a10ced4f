"""Seed pages: one captured page about an author, parsed into records.

Two page shapes are known.  They are told apart by content alone, because the
seed file names are opaque capture ids:

* the *author page*: an ``arXiv subjects`` header, the author's name, a
  description, ``N records`` and then, per record, a source+year line
  (``arXiv2026``), a title, an abstract and a category (``cs.AI↗``);
* the *author list*: the author's name and then, per record, an authors line
  (``A, B, C et al.``) and an abstract.

Fields are paragraphs: runs of non-blank lines separated by blank lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from syncd.domain.linking import abstract_key
from syncd.domain.record import Record, normalize_text
from syncd.domain.vocabulary import RevisionSource
from syncd.errors import SeedError
from syncd.userfiles import UnreadableFile, read_small_file

__all__ = [
    "MAX_SEED_BYTES",
    "SeedDocument",
    "SeedFormat",
    "SeedItem",
    "parse_seed_file",
    "read_seed_bytes",
]

SeedFormat = Literal["author-page", "author-list"]

# A seed is one captured page about one author: the bundled ones are 7 and
# 14 KB, and a page of a thousand papers is about 1.5 MB.  The cap keeps a
# wrong path (a disk image, a log) from being read whole into memory and
# bounds what a parse and the linking after it can cost.
MAX_SEED_BYTES: Final = 4 * 1024 * 1024

# Control characters never found in a captured text page (tab, LF, VT, FF and
# CR are allowed): their presence means the file is binary, not a page.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_COUNT_RE = re.compile(
    r"(?P<count>[0-9]+)\s*records?(?:\s*linked to original sources)?", re.IGNORECASE
)
_SOURCE_YEAR_RE = re.compile(r"(?P<source>[A-Za-z][A-Za-z.\-]*)\s?(?P<year>[0-9]{4})")
# arXiv categories: cs.AI, math.GT, astro-ph.CO, physics.comp-ph, hep-th; the
# page follows each with a link marker (↗) that is not part of the category.
_CATEGORY_RE = re.compile(
    r"(?P<category>[a-z]+(?:-[a-z]+)*(?:\.[A-Za-z]+(?:-[a-z]+)*)?)\s*(?P<arrow>↗)?"
)
_ET_AL_RE = re.compile(r",?\s*\bet\s+al\.?$", re.IGNORECASE)
# One person's name: one to six words, each starting with a letter (apostrophes
# straight or typographic, U+2019).
_NAME_WORD = "[^\\W\\d_][\\w.'\u2019\\-]*"
_NAME_RE = re.compile(f"{_NAME_WORD}(?: {_NAME_WORD}){{0,5}}")


@dataclass(frozen=True, slots=True)
class SeedItem:
    """One record of a seed document, with the 1-based line where it starts."""

    line: int
    record: Record
    year: int | None = None


@dataclass(frozen=True, slots=True)
class SeedDocument:
    """A parsed seed file: its format, the author it is about, and its records in order."""

    path: Path
    format: SeedFormat
    author: str | None
    items: tuple[SeedItem, ...]

    @property
    def source(self) -> str:
        """The provenance label revisions carry, e.g. ``seed:000_bae548b29664adf4.txt``."""
        return str(RevisionSource.seed(self.path.name))


@dataclass(frozen=True, slots=True)
class _Block:
    """A paragraph of the file: its first line number and its normalised text."""

    line: int
    text: str


# --------------------------------------------------------------------------- parsing


def parse_seed_file(path: Path) -> SeedDocument:
    """Parse one seed file, recognising its format by content.

    Raises ``SeedError`` (naming the file and line) for an unreadable, empty,
    binary or non-UTF-8 file, an unknown format, a truncated or duplicated
    record, or a declared record count that does not match.
    """
    path = Path(path)
    blocks = _blocks(_read_text(path))
    if not blocks:
        raise SeedError(str(path), 1, "the file is empty")
    fmt = _detect_format(blocks)
    if fmt == "author-page":
        author, items = _parse_author_page(path, blocks)
    elif fmt == "author-list":
        author, items = _parse_author_list(path, blocks)
    else:
        raise SeedError(
            str(path),
            blocks[0].line,
            "unknown seed format: neither an author page (starting 'arXiv subjects') "
            "nor an author list (a name, then 'A, B, C et al.' lines with abstracts)",
        )
    if not items:
        raise SeedError(str(path), blocks[-1].line, "the file holds no records")
    _reject_duplicates(path, items)
    return SeedDocument(path=path, format=fmt, author=author, items=tuple(items))


def _read_text(path: Path) -> str:
    """The file as text; binary or non-UTF-8 content is an error at its line."""
    data = read_seed_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        reason = f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}"
        raise SeedError(str(path), line, reason) from exc
    control = _CONTROL_RE.search(text)
    if control is not None:
        line = text.count("\n", 0, control.start()) + 1
        char = "NUL byte" if control.group() == "\x00" else f"U+{ord(control.group()):04X}"
        reason = f"binary content ({char}); expected a UTF-8 text page"
        raise SeedError(str(path), line, reason)
    return text.removeprefix("\ufeff")


def read_seed_bytes(path: Path) -> bytes:
    """The file's bytes: a regular file of at most ``MAX_SEED_BYTES``, else ``SeedError``."""
    try:
        return read_small_file(path, MAX_SEED_BYTES, what="a seed file")
    except UnreadableFile as exc:
        raise SeedError(str(path), None, exc.reason) from exc


def _blocks(text: str) -> list[_Block]:
    """Split text into paragraphs; a line that normalises to nothing is blank."""
    blocks: list[_Block] = []
    current: list[str] = []
    start = 0
    # Only "\n" ends a line, so numbers agree with editors and with the byte
    # offsets used for decoding errors; a stray "\r" is just whitespace.
    for number, raw in enumerate(text.split("\n"), start=1):
        line = normalize_text(raw)
        if line is None:
            if current:
                blocks.append(_Block(start, " ".join(current)))
                current = []
            continue
        if not current:
            start = number
        current.append(line)
    if current:
        blocks.append(_Block(start, " ".join(current)))
    return blocks


def _detect_format(blocks: list[_Block]) -> SeedFormat | None:
    """Which page this is, from its first paragraphs."""
    if blocks[0].text.casefold() == "arxiv subjects":
        return "author-page"
    header = _parse_authors(blocks[0].text)
    single_name = header is not None and len(header[0]) == 1 and header[1]
    if single_name and len(blocks) > 1 and _parse_authors(blocks[1].text) is not None:
        return "author-list"
    return None


def _parse_author_page(path: Path, blocks: list[_Block]) -> tuple[str | None, list[SeedItem]]:
    """Header (name, description, ``N records``) then records of four paragraphs."""
    counts = [(i, _COUNT_RE.fullmatch(block.text)) for i, block in enumerate(blocks[1:5], 1)]
    found = [(i, match) for i, match in counts if match is not None]
    if not found:
        raise SeedError(
            str(path), blocks[0].line, "author page header has no 'N records' line after its name"
        )
    count_at, count_match = found[0]
    count_block = blocks[count_at]
    declared = int(count_match["count"])
    body = blocks[count_at + 1 :]
    items = [_page_record(path, body[i : i + 4]) for i in range(0, len(body), 4)]
    if len(items) != declared:
        raise SeedError(
            str(path),
            count_block.line,
            f"the page declares {declared} records but holds {len(items)}",
        )
    author = blocks[1].text if count_at > 1 else None
    return author, items


def _page_record(path: Path, chunk: list[_Block]) -> SeedItem:
    """Source+year, title, abstract, category; any slot out of shape means truncation."""
    start = chunk[0]
    source_year = _SOURCE_YEAR_RE.fullmatch(start.text)
    if source_year is None:
        raise SeedError(
            str(path),
            start.line,
            "expected a record's source and year line like 'arXiv2026', "
            f"found {_quote(start.text)}",
        )
    slots = ("title", "abstract", "category")
    if len(chunk) < 4:
        missing = slots[len(chunk) - 1]
        raise SeedError(str(path), start.line, f"truncated record: it has no {missing} line")
    title, abstract, category_block = chunk[1:]
    for slot, block in (("title", title), ("abstract", abstract)):
        if _is_structural(block.text):
            raise SeedError(
                str(path),
                block.line,
                f"truncated record starting at line {start.line}: "
                f"expected its {slot}, found {_quote(block.text)}",
            )
    category = _category(category_block.text)
    if category is None:
        raise SeedError(
            str(path),
            category_block.line,
            f"truncated record starting at line {start.line}: "
            f"expected its category line like 'cs.AI↗', found {_quote(category_block.text)}",
        )
    record = Record(
        title=title.text,
        abstract=abstract.text,
        primary_category=category,
        categories=(category,),
    )
    return SeedItem(line=start.line, record=record, year=int(source_year["year"]))


def _parse_author_list(path: Path, blocks: list[_Block]) -> tuple[str | None, list[SeedItem]]:
    """The author's name, then records of two paragraphs: authors line and abstract."""
    body = blocks[1:]
    items = [_list_record(path, body[i : i + 2]) for i in range(0, len(body), 2)]
    return blocks[0].text, items


def _list_record(path: Path, chunk: list[_Block]) -> SeedItem:
    """An authors line and its abstract; a second authors line instead means truncation."""
    start = chunk[0]
    authors = _parse_authors(start.text)
    if authors is None:
        raise SeedError(
            str(path),
            start.line,
            f"expected an authors line like 'A, B, C et al.', found {_quote(start.text)}",
        )
    if len(chunk) < 2:
        raise SeedError(str(path), start.line, "truncated record: it has no abstract line")
    abstract = chunk[1]
    if _parse_authors(abstract.text) is not None:
        raise SeedError(
            str(path),
            abstract.line,
            f"truncated record starting at line {start.line}: "
            f"expected its abstract, found another authors line {_quote(abstract.text)}",
        )
    names, complete = authors
    record = Record(abstract=abstract.text, authors=names, authors_complete=complete)
    return SeedItem(line=start.line, record=record)


def _parse_authors(text: str) -> tuple[tuple[str, ...], bool] | None:
    """``A, B, C et al.`` as names and whether the list is complete; None if not such a line."""
    et_al = _ET_AL_RE.search(text)
    names = tuple(part.strip() for part in text[: et_al.start() if et_al else None].split(","))
    if not all(_NAME_RE.fullmatch(name) and _has_name_case(name) for name in names):
        return None
    return names, et_al is None


def _has_name_case(name: str) -> bool:
    """Whether some word starts like a name: a capital, or a letter without case (CJK).

    This keeps a short all-lowercase abstract from passing for an author, while
    particles such as "van der Berg" still pass with their capitalised word.
    """
    return any(not word[0].islower() for word in name.split())


def _category(text: str) -> str | None:
    """The category of a category line, link marker stripped; None if not one.

    A bare lowercase word would also fit the pattern, so without the marker a
    category must look like one (``cs.AI``, ``hep-th``).
    """
    match = _CATEGORY_RE.fullmatch(text)
    if match is None:
        return None
    category = match["category"]
    if match["arrow"] or "." in category or "-" in category:
        return category
    return None


def _is_structural(text: str) -> bool:
    """Whether a paragraph is a page's framing line rather than a title or abstract."""
    return bool(
        _SOURCE_YEAR_RE.fullmatch(text) or _COUNT_RE.fullmatch(text) or _category(text) is not None
    )


def _reject_duplicates(path: Path, items: list[SeedItem]) -> None:
    """The same abstract twice in one page is a capture error, not two papers."""
    seen: dict[str, int] = {}
    for item in items:
        key = abstract_key(item.record)
        if key is None:
            continue
        if key in seen:
            raise SeedError(
                str(path),
                item.line,
                f"duplicated record: same abstract as the record at line {seen[key]}",
            )
        seen[key] = item.line


def _quote(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
