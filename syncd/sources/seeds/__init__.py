"""Reading the seeded snapshot: captured pages about the author, folded into papers.

``load_seeds`` parses every file (``syncd.sources.seeds.pages``) before linking
anything, so one bad file fails the whole import and nothing partial is
returned.  It then applies the documents in file-name order, linking each
record to a paper already known: an exact abstract match first, then
``syncd.domain.linking`` on title/abstract similarity, which leaves close calls
unlinked (and says so in the log) rather than guessing.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

import structlog

from syncd.domain.linking import link_seed_documents
from syncd.domain.model import SeedPaper, SeedRevision
from syncd.domain.record import COMPARED_FIELDS, Record, normalize_name
from syncd.sources.seeds.pages import (
    MAX_SEED_BYTES,
    SeedDocument,
    SeedFormat,
    SeedItem,
    parse_seed_file,
    read_seed_bytes,
)

__all__ = [
    "MAX_SEED_BYTES",
    "SeedDocument",
    "SeedFormat",
    "SeedItem",
    "load_seeds",
    "load_seeds_cached",
    "parse_seed_file",
]

_log = structlog.get_logger(__name__)

# Keys are slugs of at most this many words and characters.
_SLUG_WORDS: Final = 6
_SLUG_CHARS: Final = 48


# --------------------------------------------------------------------------- linking


def load_seeds(paths: Sequence[Path]) -> list[SeedPaper]:
    """Parse every seed file, then fold their records into papers.

    Documents are applied in file-name order.  Each record links to at most
    one paper already known from earlier documents (exact abstract first,
    then similarity, see ``syncd.domain.linking.link_seed_documents``); an ambiguous record stays a
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
    digests = tuple(hashlib.blake2b(read_seed_bytes(p)).digest() for p in ordered)
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
    links = link_seed_documents(
        [[rev.record for rev in revisions] for revisions in papers],
        [item.record for item in document.items],
    )
    for item, candidates in links.contested.items():
        _log.warning(
            "seed_link_ambiguous",
            source=document.source,
            line=document.items[item].line,
            candidates=[_describe(papers[p]) for p, _ in candidates],
            scores=[round(score, 3) for _, score in candidates],
            outcome="kept as a separate paper",
        )
    return dict(links.pairs)


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
