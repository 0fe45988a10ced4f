"""Followed authors at run time: what a cycle syncs, and the commands that change it.

The daemon builds its authors from the database at every cycle
(``followed_authors``): ``[[authors]]`` tables reconciled at start
(``reconcile_config``), run-time authors added or removed since, and review
decisions folded into ``include_ids`` (confirmed) and ``exclude_ids`` (rejected).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from syncd.config import Settings
from syncd.config.runtime import runtime_author
from syncd.domain.author_names import name_key, repeated_names, spelled_otherwise
from syncd.domain.authors import Author, AuthorSummary
from syncd.domain.cadence import next_sync
from syncd.domain.record import split_arxiv_id
from syncd.domain.vocabulary import AuthorOrigin, Put
from syncd.errors import ConfigError
from syncd.sources.seeds import load_seeds_cached
from syncd.storage import Storage
from syncd.userfiles import UnreadableFile, read_small_file

__all__ = [
    "CSV_HEADER",
    "MAX_AUTHORS_FILE_BYTES",
    "add_authors",
    "arxiv_ids",
    "followed_authors",
    "import_authors",
    "named_author",
    "next_syncs",
    "read_authors_csv",
    "reconcile_config",
    "remove_author",
]

CSV_HEADER = ("name", "orcid", "arxiv_author_id", "query")
# A row is at most about 2.3 KB (a 200-character name, an ORCID iD, a 64-character
# arXiv author id, a 2,000-character query) and commonly under 60 bytes: 4 MiB holds
# tens of thousands of authors, and keeps a wrong path (a disk image, /dev/zero)
# from being read whole into memory.
MAX_AUTHORS_FILE_BYTES = 4 * 1024 * 1024


def reconcile_config(storage: Storage, settings: Settings) -> None:
    """Make the database's configured authors, then groups, those of the file (at start)."""
    storage.authors.reconcile(settings.configured_authors)
    storage.groups.reconcile([table.group() for table in settings.groups])


def followed_authors(storage: Storage, settings: Settings) -> list[Author]:
    """The authors a cycle syncs now, read from the database.

    A configured author keeps its file's definition (``include_ids`` and
    ``exclude_ids`` live only there); one configured by another replica's
    file, and every run-time author, is the one its row keeps.  The file's
    authors come first, in its order (batches are made in this order), then
    the others by name.
    """
    configured = {a.name: a for a in settings.configured_authors}
    order = {name: i for i, name in enumerate(configured)}
    authors = []
    found = storage.authors.followed()
    found.sort(key=lambda f: order.get(f.definition.name, len(order)))  # stable: by name
    for followed in found:
        stored = followed.definition
        author = configured.get(stored.name)
        if author is None or stored.origin != AuthorOrigin.CONFIG:
            author = stored
        include = (*author.include_ids, *followed.confirmed)
        exclude = (*author.exclude_ids, *followed.rejected)
        authors.append(
            replace(
                author,
                include_ids=tuple(dict.fromkeys(include)),
                exclude_ids=tuple(dict.fromkeys(exclude)),
            )
        )
    return authors


def add_authors(storage: Storage, settings: Settings, authors: Sequence[Author]) -> list[Put]:
    """Follow run-time authors, all or none; their seed files must parse first.

    The file's authors are reconciled first, so a configured name is refused
    even before the daemon's first start.
    """
    reconcile_config(storage, settings)
    for author in authors:
        if author.seeds:
            load_seeds_cached(author.seeds)  # a SeedError names the file and line
    return storage.authors.put(authors)


def arxiv_ids(values: Sequence[str]) -> list[str]:
    """arXiv ids as given on a command line or in a request, versions dropped."""
    found = []
    for value in values:
        try:
            found.append(split_arxiv_id(value.strip())[0])
        except ValueError:
            raise ConfigError(f"not an arXiv id: {value!r}") from None
    if not found:
        raise ConfigError("no arXiv id given")
    return found


def named_author(storage: Storage, name: str | None) -> str | None:
    """The name syncd keeps for the author a person named in any spelling (``--author``);
    None when none was named."""
    return None if name is None else storage.authors.stored_name(name)


def remove_author(storage: Storage, settings: Settings, name: str) -> None:
    """Stop following a run-time author (a configured one is refused)."""
    reconcile_config(storage, settings)
    storage.authors.remove(name)


def import_authors(storage: Storage, settings: Settings, path: Path) -> list[Put]:
    """Follow the authors of a CSV file, all or none; what each row did."""
    configured = [a.name for a in settings.configured_authors]
    authors = read_authors_csv(path, configured, storage.authors.names())
    return add_authors(storage, settings, authors)


def read_authors_csv(
    path: Path, configured: Collection[str] = (), known: Collection[str] = ()
) -> list[Author]:
    """The authors of a CSV file (header ``name,orcid,arxiv_author_id,query``).

    Every bad row is named with its line number and reason in one
    ``ConfigError``, so a file is taken whole or not at all: a configured
    author's name among them (those change in the file), and a name that is
    one already on an earlier line or ``known`` spelled otherwise ("jane
    smith" beside "Jane Smith": names are compared without regard to case).
    """
    reader = csv.reader(io.StringIO(_read_text(path), newline=""))
    header = _next_row(path, reader)
    if header is None or tuple(h.strip() for h in header) != CSV_HEADER:
        raise ConfigError(f"{path}:1: the header must be {','.join(CSV_HEADER)}")
    rows: list[tuple[int, Author]] = []
    problems: list[tuple[int, str]] = []
    while (row := _next_row(path, reader)) is not None:
        line = reader.line_num
        if not row:
            continue  # a blank line
        if len(row) != len(CSV_HEADER):
            problems.append((line, f"{len(row)} fields, expected {len(CSV_HEADER)}"))
            continue
        name, orcid, author_id, query = row
        try:
            author = runtime_author(name, orcid=orcid, arxiv_author_id=author_id, query=query)
            rows.append((line, author))
        except ConfigError as exc:
            problems.append((line, str(exc)))
    problems += _name_clashes(rows, configured, known)
    if problems:
        lines = (f"{path}:{line}: {problem}" for line, problem in sorted(problems))
        raise ConfigError("nothing imported:\n  " + "\n  ".join(lines))
    return [author for _, author in rows]


def _read_text(path: Path) -> str:
    """The file as text: a regular file of at most ``MAX_AUTHORS_FILE_BYTES`` in UTF-8."""
    try:
        data = read_small_file(path, MAX_AUTHORS_FILE_BYTES, what="an authors file")
    except UnreadableFile as exc:
        raise ConfigError(f"{path}: {exc.reason}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        reason = f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}"
        raise ConfigError(f"{path}:{line}: {reason}") from None


def _next_row(path: Path, reader: Any) -> list[str] | None:
    """The reader's next row (None at the end); what ``csv`` cannot read is an error at its line."""
    try:
        return next(reader, None)
    except csv.Error as exc:
        # A field over csv.field_size_limit() (128 KiB) among them: far longer than any
        # name, identifier or query may be.
        raise ConfigError(f"{path}:{reader.line_num}: not CSV syncd can read: {exc}") from None


def _name_clashes(
    rows: Sequence[tuple[int, Author]], configured: Collection[str], known: Collection[str]
) -> list[tuple[int, str]]:
    """The rows whose name is one (without regard to case) that the file or syncd has already."""
    configured_keys = {name_key(name): name for name in configured}
    known_keys = {name_key(name): name for name in known}
    repeated = dict(repeated_names([author.name for _, author in rows]))
    clashes = []
    for index, (line, author) in enumerate(rows):
        name, key = author.name, name_key(author.name)
        if key in configured_keys:
            same = configured_keys[key]
            spelled = "" if same == name else f" as {same!r}"
            clashes.append((line, f"{name!r} is configured in the config file{spelled}"))
        elif index in repeated:
            first, spelling = rows[repeated[index]][0], rows[repeated[index]][1].name
            spelled = "" if spelling == name else f" as {spelling!r}"
            clashes.append((line, f"{name!r} is already on line {first}{spelled}"))
        elif known_keys.get(key, name) != name:
            clashes.append((line, spelled_otherwise(name, known_keys[key])))
    return clashes


def next_syncs(
    storage: Storage, settings: Settings, summaries: Sequence[AuthorSummary], now: datetime
) -> dict[str, datetime | None]:
    """When the scheduler's cycles next sync each of ``summaries``, by name (None once no
    longer followed): ``syncd.domain.cadence.next_sync`` of its latest claiming cycle."""
    claims = storage.runs.last_claims([s.name for s in summaries if s.removed_at is None])
    phase = storage.installation.phase()
    found: dict[str, datetime | None] = {}
    for summary in summaries:
        claim = claims.get(summary.name)
        found[summary.name] = (
            None
            if summary.removed_at is not None
            else next_sync(
                settings.schedule,
                now,
                author=summary.name,
                last_claim=claim.started_at if claim is not None else None,
                sweep_interval=settings.harvest.sweeps,
                phase=phase,
            )
        )
    return found
