"""Reading the seeded snapshot: captured pages about the author, folded into papers.

Two page shapes are known.  They are told apart by content alone, because the
seed file names are opaque capture ids:

* the *author page*: an ``arXiv subjects`` header, the author's name, a
  description, ``N records`` and then, per record, a source+year line
  (``arXiv2026``), a title, an abstract and a category (``cs.AI↗``);
* the *author list*: the author's name and then, per record, an authors line
  (``A, B, C et al.``) and an abstract.

Fields are paragraphs: runs of non-blank lines separated by blank lines.

``load_seeds`` parses every file before linking anything, so one bad file
fails the whole import and nothing partial is returned.  It then applies the
documents in file-name order, linking each record to a paper already known:
an exact abstract match first, then ``matching.assign`` on title/abstract
similarity, which leaves close calls unlinked (and says so in the log) rather
than guessing.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, Literal

import structlog

from syncd.errors import SeedError
from syncd.matching import assign, record_similarity
from syncd.record import COMPARED_FIELDS, Record, normalize_name, normalize_text

__all__ = [
    "LINK_MARGIN",
    "LINK_MINIMUM",
    "MAX_SEED_BYTES",
    "SeedDocument",
    "SeedFormat",
    "SeedItem",
    "SeedPaper",
    "SeedRevision",
    "load_seeds",
    "load_seeds_cached",
    "parse_seed_file",
]

_log = structlog.get_logger(__name__)

# Similarity thresholds for linking across documents (content-word Jaccard,
# see syncd.matching).  Unrelated abstracts of this author's field score about
# 0.00-0.05; the calibration paper's two rewritten abstracts score about 0.19.
# 0.15 admits a rewrite, and a 0.10 lead over the runner-up (and over any rival
# claim) keeps a close call from becoming a silent wrong link.
LINK_MINIMUM: Final = 0.15
LINK_MARGIN: Final = 0.10

SeedFormat = Literal["author-page", "author-list"]

# A seed is one captured page about one author: the bundled ones are 7 and
# 14 KB, and a page of a thousand papers is about 1.5 MB.  The cap keeps a
# wrong path (a disk image, a log) from being read whole into memory and
# bounds what a parse and the linking after it can cost.
MAX_SEED_BYTES: Final = 4 * 1024 * 1024

# Keys are slugs of at most this many words and characters.
_SLUG_WORDS: Final = 6
_SLUG_CHARS: Final = 48

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
        return f"seed:{self.path.name}"


@dataclass(frozen=True, slots=True)
class SeedRevision:
    """One version of a paper as the seeds show it; ``record`` is merged up to this point."""

    source: str
    line: int
    record: Record


@dataclass(frozen=True, slots=True)
class SeedPaper:
    """A paper of the seeded snapshot: a stable key and its revisions, oldest first."""

    key: str
    revisions: tuple[SeedRevision, ...]

    @property
    def record(self) -> Record:
        """The paper as of its last revision."""
        return self.revisions[-1].record


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
    data = _read_bytes(path)
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


def _read_bytes(path: Path) -> bytes:
    """The file's bytes: a regular file of at most ``MAX_SEED_BYTES``, else ``SeedError``."""
    try:
        # Non-blocking, so that opening a FIFO returns at once instead of
        # waiting for a writer; fstat on the open file then refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise SeedError(str(path), None, f"cannot read the file: {exc.strerror or exc}") from exc
    except ValueError as exc:  # a NUL in the path: open() refuses it before any system call
        raise SeedError(str(path), None, f"cannot read the file: {exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            reason = f"not a regular file ({_file_kind(info.st_mode)}); a seed is a saved text page"
            raise SeedError(str(path), None, reason)
        _check_size(path, info.st_size)
        # One byte over the cap tells a file that grew since fstat.
        with open(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_SEED_BYTES + 1)
    except OSError as exc:
        raise SeedError(str(path), None, f"cannot read the file: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    _check_size(path, len(data))
    return data


def _check_size(path: Path, size: int) -> None:
    if size > MAX_SEED_BYTES:
        reason = (
            f"the file is larger than the {MAX_SEED_BYTES // (1024 * 1024)} MiB "
            f"({MAX_SEED_BYTES} bytes) a seed file may have"
        )
        raise SeedError(str(path), None, reason)


def _file_kind(mode: int) -> str:
    kinds = {
        stat.S_ISDIR: "a directory",
        stat.S_ISFIFO: "a FIFO",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISSOCK: "a socket",
    }
    return next((kind for test, kind in kinds.items() if test(mode)), "a special file")


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
        key = _abstract_key(item.record)
        if key is None:
            continue
        if key in seen:
            raise SeedError(
                str(path),
                item.line,
                f"duplicated record: same abstract as the record at line {seen[key]}",
            )
        seen[key] = item.line


def _abstract_key(record: Record) -> str | None:
    """What an exact abstract match compares: normalised text, case folded."""
    return record.abstract.casefold() if record.abstract else None


def _quote(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


# --------------------------------------------------------------------------- linking


def load_seeds(paths: Sequence[Path]) -> list[SeedPaper]:
    """Parse every seed file, then fold their records into papers.

    Documents are applied in file-name order.  Each record links to at most
    one paper already known from earlier documents (exact abstract first,
    then similarity through ``matching.assign``); an ambiguous record stays a
    paper of its own and ``seed_link_ambiguous`` is logged.

    A linked record that changes a known field (another title or abstract)
    becomes a new revision.  One that only fills unknown fields (authors for a
    paper seen without them) is merged into the last revision, which keeps its
    own source and line: a revision is named after where its text first
    appeared.  Papers are returned in the order they were first seen.
    """
    ordered = _ordered(paths)
    documents = [parse_seed_file(path) for path in ordered]
    papers: list[list[SeedRevision]] = []
    for document in documents:
        _apply_document(papers, document)
    return _with_keys(papers)


def _ordered(paths: Sequence[Path]) -> list[Path]:
    return sorted((Path(p) for p in paths), key=lambda p: (p.name, str(p)))


# Seed sets loaded by this process: ordered paths -> (their contents' digests,
# the papers).  Every cycle of `syncd run` seeds every author, and parsing and
# linking a large page costs seconds, reading and hashing it (at most
# MAX_SEED_BYTES) milliseconds; so a set is parsed again only when its bytes
# change.  Digests rather than (size, mtime_ns): timestamps tick coarsely, so
# a same-size rewrite within one tick would pass for unchanged.  The papers are
# cached, not the import: importing is idempotent and costs one query, and a
# process may seed more than one database (the tests do).  One entry per
# configured set, replaced when it changes: as small as the config.  Cycles of
# one process never overlap, and a lost race would only parse once more.
_loaded: dict[tuple[str, ...], tuple[tuple[bytes, ...], list[SeedPaper]]] = {}


def load_seeds_cached(paths: Sequence[Path]) -> list[SeedPaper]:
    """``load_seeds``, parsing again only when a file's bytes changed since the last load.

    Each call still reads every file (refusing what ``parse_seed_file`` would
    refuse to read), so a seed set that turned bad fails as before.
    """
    ordered = _ordered(paths)
    key = tuple(str(p) for p in ordered)
    digests = tuple(hashlib.blake2b(_read_bytes(p)).digest() for p in ordered)
    cached = _loaded.get(key)
    if cached is not None and cached[0] == digests:
        return list(cached[1])
    papers = load_seeds(ordered)
    _loaded[key] = (digests, papers)
    return list(papers)


def _apply_document(papers: list[list[SeedRevision]], document: SeedDocument) -> None:
    """Link the document against the papers known before it, then fold or add each record."""
    links = _link(papers, document)
    for index, item in enumerate(document.items):
        revision = SeedRevision(source=document.source, line=item.line, record=item.record)
        target = links.get(index)
        if target is None:
            papers.append([revision])
        else:
            _fold(papers[target], revision)


def _link(papers: list[list[SeedRevision]], document: SeedDocument) -> dict[int, int]:
    """Item index -> paper index for every record that links with confidence."""
    exact, contested = _exact_links(papers, document)
    free_items = [i for i in range(len(document.items)) if i not in exact and i not in contested]
    taken = set(exact.values()) | {p for candidates in contested.values() for p in candidates}
    free_papers = [p for p in range(len(papers)) if p not in taken]

    def score(item: int, paper: int) -> float:
        record = document.items[item].record
        # Any revision counts: a rewritten paper is still recognised by its older text.
        return max(record_similarity(rev.record, record) for rev in papers[paper])

    result = assign(free_items, free_papers, score, minimum=LINK_MINIMUM, margin=LINK_MARGIN)
    for item, candidates in result.ambiguous.items():
        contested[item] = candidates
    for item, candidates in sorted(contested.items()):
        _log.warning(
            "seed_link_ambiguous",
            source=document.source,
            line=document.items[item].line,
            candidates=[_describe(papers[p]) for p in candidates],
            scores=[round(score(item, p), 3) for p in candidates],
            outcome="kept as a separate paper",
        )
    return {**exact, **result.pairs}


def _exact_links(
    papers: list[list[SeedRevision]], document: SeedDocument
) -> tuple[dict[int, int], dict[int, tuple[int, ...]]]:
    """Links by equal abstract, and the items whose exact match is not one-to-one."""
    claims: dict[int, list[int]] = {}
    contested: dict[int, tuple[int, ...]] = {}
    for index, item in enumerate(document.items):
        key = _abstract_key(item.record)
        matches = tuple(
            p
            for p, revisions in enumerate(papers)
            if key is not None and key in {_abstract_key(rev.record) for rev in revisions}
        )
        if len(matches) == 1:
            claims.setdefault(matches[0], []).append(index)
        elif matches:
            contested[index] = matches
    exact: dict[int, int] = {}
    for paper, claimants in claims.items():
        if len(claimants) == 1:
            exact[claimants[0]] = paper
        else:
            contested.update((index, (paper,)) for index in claimants)
    return exact, contested


def _describe(revisions: list[SeedRevision]) -> str:
    first = revisions[0]
    return f"{first.source}:{first.line}"


# --------------------------------------------------------------------------- folding


def _fold(revisions: list[SeedRevision], incoming: SeedRevision) -> None:
    """Merge a linked record into a paper: a new revision only if it changes known text."""
    last = revisions[-1]
    merged = _merge(last.record, incoming.record)
    if _changes_known_field(last.record, incoming.record):
        revisions.append(replace(incoming, record=merged))
    else:
        revisions[-1] = replace(last, record=merged)


def _merge(old: Record, new: Record) -> Record:
    """``old.merged_with(new)`` without losing what ``old`` knew better.

    ``merged_with`` takes the newer author and category lists wholesale; a
    shorter truncation of the same authors, or a subset of the categories,
    would otherwise replace a fuller list.
    """
    merged = old.merged_with(new)
    if _authors_compatible(old, new) and _knows_more_authors(old, new):
        merged = replace(merged, authors=old.authors, authors_complete=old.authors_complete)
    if set(new.categories) < set(old.categories):
        merged = replace(merged, categories=old.categories)
    return merged


def _changes_known_field(old: Record, new: Record) -> bool:
    """Whether ``new`` contradicts a field ``old`` already knows (rather than filling gaps)."""
    for name in COMPARED_FIELDS:
        before, after = getattr(old, name), getattr(new, name)
        if not (_known(before) and _known(after)):
            continue
        if name == "authors":
            conflict = not _authors_compatible(old, new)
        elif name == "categories":
            conflict = not (set(before) <= set(after) or set(after) <= set(before))
        else:
            conflict = before != after
        if conflict:
            return True
    return False


def _known(value: Any) -> bool:
    # A seed's empty tuple, None or False means "not known", as in Record.merged_with.
    return value not in (None, (), False)


def _authors_compatible(old: Record, new: Record) -> bool:
    """Whether one author list extends the other (truncated lists compare as prefixes)."""
    a = [normalize_name(name) for name in old.authors]
    b = [normalize_name(name) for name in new.authors]
    (short, short_complete), (long, _) = sorted(
        ((a, old.authors_complete), (b, new.authors_complete)), key=lambda pair: len(pair[0])
    )
    if long[: len(short)] != short:
        return False
    # A complete list cannot be extended by another.
    return len(short) == len(long) or not short_complete


def _knows_more_authors(old: Record, new: Record) -> bool:
    if len(old.authors) != len(new.authors):
        return len(old.authors) > len(new.authors)
    return old.authors_complete and not new.authors_complete


# --------------------------------------------------------------------------- keys


def _with_keys(papers: list[list[SeedRevision]]) -> list[SeedPaper]:
    """Give each paper a unique slug key; collisions take -2, -3 in paper order."""
    taken: set[str] = set()
    result: list[SeedPaper] = []
    for revisions in papers:
        base = _slug(_key_text(revisions))
        key, suffix = base, 1
        while key in taken:
            suffix += 1
            key = f"{base}-{suffix}"
        taken.add(key)
        result.append(SeedPaper(key=key, revisions=tuple(revisions)))
    return result


def _key_text(revisions: list[SeedRevision]) -> str:
    """The earliest title of the paper, else its earliest abstract.

    The earliest rather than the latest, so a later seed that retitles the
    paper does not rename it.
    """
    for field in ("title", "abstract"):
        for revision in revisions:
            value: str | None = getattr(revision.record, field)
            if value:
                return value
    return ""


def _slug(text: str) -> str:
    """Lowercase ASCII words joined by '-', at most six words and 48 characters."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    words = re.findall(r"[a-z0-9]+", ascii_text)
    kept: list[str] = []
    for word in words[:_SLUG_WORDS]:
        if len("-".join([*kept, word])) > _SLUG_CHARS:
            break
        kept.append(word)
    if not kept and words:
        kept = [words[0][:_SLUG_CHARS]]
    if not kept:
        # Nothing ASCII to show (e.g. a title in another script): a stable digest.
        digest = hashlib.blake2b(text.encode(), digest_size=4).hexdigest()
        return f"paper-{digest}"
    return "-".join(kept)
