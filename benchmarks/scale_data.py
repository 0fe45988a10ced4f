"""Databases of syncd's own schema at scale, written fast and kept for the next run.

``sqlite(size)`` and ``postgresql(size)`` give the URL of a database holding
``size.authors`` followed authors and ``size.papers`` papers, as a long-lived
installation would: every author baselined (``author.added``) with one sync run
(one in a hundred failed), each paper held by one to three authors (tracked
mostly; candidates and removed ones too) whose shares follow a power law (the
busiest of 100,000 authors holds about 4,000 papers, most hold a few), every
paper's v1 revision, a v2 for one in four (``paper.revised``), a ``paper.added``
for one in ten, and twenty groups of 500 members.  Records are copies of the
110 real arXiv entries in tests/fixtures/arxiv-api/ (the sizes and shapes of
real titles, abstracts and author lists) under new ids, titles made distinct
by a word of their own, and the holding authors first in the author list.

Rows go straight into the migrated schema through SQLAlchemy Core
``executemany`` in chunks of ``CHUNK``.  The columns are read from
``syncd.storage.schema``: a column this module does not name is left to its
default, or filled by ``DERIVED`` (the columns kept from others, such as a
paper's latest change or its folded search text) when it exists; one it cannot
fill stops the build with its name.  An SQLite FTS5 table with external content
is rebuilt at the end.

A database is built once per schema: the key is a digest of the migrations,
``schema.py`` and ``GENERATOR_VERSION``.  SQLite files are kept under ``CACHE``
(``$SYNCD_SCALE_CACHE``, else the temporary directory), written under a
temporary name and renamed when complete; PostgreSQL databases are kept as
``syncd_scale_<key>_<authors>_<papers>``, marked complete with a comment.
``python -m benchmarks.scale_data AUTHORS PAPERS [--postgresql]`` builds one.
"""

from __future__ import annotations

import argparse
import collections
import functools
import hashlib
import itertools
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from benchmarks import common, feeds

CHUNK = 20_000
# Raised whenever the rows this module writes change: a new key, a new build.
GENERATOR_VERSION = 1
CACHE = Path(os.environ.get("SYNCD_SCALE_CACHE") or Path(tempfile.gettempdir()) / "syncd-scale")
START = datetime(2020, 1, 1, tzinfo=UTC)
GROUPS, GROUP_MEMBERS = 20, 500
_COMPLETE = "syncd scale data: complete"


@dataclass(frozen=True)
class Size:
    """How many followed authors and papers."""

    authors: int
    papers: int

    @property
    def label(self) -> str:
        return f"{self.authors}a-{self.papers}p"


def cache_key() -> str:
    """A digest of what the rows depend on: the migrations, the schema, ``GENERATOR_VERSION``."""
    import syncd  # noqa: PLC0415

    package = Path(syncd.__file__ or "").resolve().parent
    digest = hashlib.blake2b(digest_size=6)
    for path in sorted((package / "migrations").rglob("*.py")):
        digest.update(path.read_bytes())
    digest.update((package / "storage" / "schema.py").read_bytes())
    digest.update(GENERATOR_VERSION.to_bytes(4))
    return digest.hexdigest()


def sqlite(size: Size, log: Callable[[str], None] = print) -> str:
    """The URL of a cached SQLite database of ``size``, built first when missing."""
    path = CACHE / f"scale-{cache_key()}-{size.label}.sqlite3"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        started = time.perf_counter()
        build(f"sqlite:///{partial}", size, log)
        partial.rename(path)
        log(f"built {path} in {time.perf_counter() - started:.0f} s")
    return f"sqlite:///{path}"


def postgresql(size: Size, log: Callable[[str], None] = print) -> str:
    """The URL of a kept PostgreSQL database of ``size``, built first when missing."""
    name = f"syncd_scale_{cache_key()}_{size.label.replace('-', '_')}"
    admin = sa.create_engine(common.POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            comment = conn.scalar(
                sa.text(
                    "SELECT shobj_description(oid, 'pg_database') FROM pg_database"
                    " WHERE datname = :name"
                ),
                {"name": name},
            )
            url = admin.url.set(database=name).render_as_string(hide_password=False)
            if comment == _COMPLETE:
                return url
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        started = time.perf_counter()
        build(url, size, log)
        with admin.connect() as conn:
            conn.execute(sa.text(f"COMMENT ON DATABASE \"{name}\" IS '{_COMPLETE}'"))
        log(f"built {name} in {time.perf_counter() - started:.0f} s")
        return url
    finally:
        admin.dispose()


def drop_postgresql_caches() -> list[str]:
    """Drop every kept scale database (any key); their names."""
    admin = sa.create_engine(common.POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            query = "SELECT datname FROM pg_database WHERE datname LIKE 'syncd\\_scale\\_%'"
            names = list(conn.scalars(sa.text(query)))
            for name in names:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        return names
    finally:
        admin.dispose()


# -- the build ---------------------------------------------------------------------------


def build(url: str, size: Size, log: Callable[[str], None] = print) -> None:
    """Migrate the empty database at ``url`` and fill it with ``size``'s rows."""
    from syncd.storage import schema  # noqa: PLC0415
    from syncd.storage.migrate import upgrade  # noqa: PLC0415

    engine = sa.create_engine(url)
    if engine.dialect.name == "sqlite":
        sa.event.listen(engine, "connect", _fast_sqlite)
    try:
        upgrade(engine)
        world = World(size)
        steps: list[tuple[sa.Table, Callable[[], Iterator[dict[str, Any]]]]] = [
            (schema.authors_table, world.authors),
            (schema.sync_runs_table, world.sync_runs),
            (schema.papers_table, world.papers),
            (schema.paper_authors_table, world.paper_authors),
            (schema.revisions_table, world.revisions),
            (schema.events_table, world.events),
            (schema.groups_table, world.groups),
            (schema.group_members_table, world.group_members),
        ]
        for table, rows in steps:
            started = time.perf_counter()
            count = _insert(engine, table, rows())
            log(f"  {table.name}: {count:,} rows in {time.perf_counter() - started:.1f} s")
        _finish(engine)
    finally:
        engine.dispose()


def _fast_sqlite(dbapi_connection: Any, _record: Any) -> None:
    """A build that fails is thrown away, so it need not survive a crash."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA synchronous = OFF")
    cursor.execute("PRAGMA cache_size = -200000")
    cursor.close()


def _insert(engine: sa.Engine, table: sa.Table, rows: Iterator[dict[str, Any]]) -> int:
    """Every row, ``CHUNK`` to an ``executemany``, one transaction per chunk."""
    fill = row_filler(table)
    count = 0
    while chunk := [fill(row) for row in itertools.islice(rows, CHUNK)]:
        with engine.begin() as conn:
            conn.execute(table.insert(), chunk)
        count += len(chunk)
    return count


def row_filler(table: sa.Table) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The function completing a row of ``table``: ``DERIVED`` columns the schema has, computed
    from the row; a required column neither given nor defaulted is an error, named."""
    derived = {
        c.name: DERIVED[(table.name, c.name)] for c in table.c if (table.name, c.name) in DERIVED
    }

    def fill(row: dict[str, Any]) -> dict[str, Any]:
        extra = row.pop("_derive", {})
        for name, compute in derived.items():
            row[name] = compute(extra)
        return row

    missing = [
        c.name
        for c in table.c
        if not (c.nullable or c.default is not None or c.server_default is not None)
        and not c.primary_key
        and c.name not in derived
    ]
    if missing:
        given = set(_sample_row(table))
        unknown = [name for name in missing if name not in given]
        if unknown:
            raise RuntimeError(
                f"the scale generator cannot fill {table.name}.{', '.join(unknown)}:"
                " add it to benchmarks/scale_data.py's rows or DERIVED"
            )
    return fill


def _sample_row(table: sa.Table) -> dict[str, Any]:
    world = World(Size(authors=3, papers=3))
    rows = {
        "authors": world.authors,
        "sync_runs": world.sync_runs,
        "papers": world.papers,
        "paper_authors": world.paper_authors,
        "revisions": world.revisions,
        "events": world.events,
        "groups": world.groups,
        "group_members": world.group_members,
    }
    return next(iter(rows[table.name]()), {}) if table.name in rows else {}


def _finish(engine: sa.Engine) -> None:
    """Fill SQLite's FTS5 tables (an external-content one rebuilt, a plain one over papers
    filled from the columns of the same names, rowid = paper id); statistics (PostgreSQL)."""
    with engine.begin() as conn:
        if engine.dialect.name == "sqlite":
            query = "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE '%fts5%'"
            for name, sql in list(conn.execute(sa.text(query))):
                arguments = [
                    a.strip() for a in sql[sql.index("(") + 1 : sql.rindex(")")].split(",")
                ]
                if any(a.replace(" ", "").lower().startswith("content=") for a in arguments):
                    conn.execute(sa.text(f'INSERT INTO "{name}"("{name}") VALUES (\'rebuild\')'))
                elif name.startswith("papers"):
                    columns = ", ".join(a for a in arguments if "=" not in a)
                    fill = (
                        f'INSERT INTO "{name}"(rowid, {columns}) SELECT id, {columns} FROM papers'
                    )
                    conn.execute(sa.text(fill))
        else:
            conn.execute(sa.text("ANALYZE"))
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            conn.execute(sa.text("PRAGMA wal_checkpoint(TRUNCATE)"))


def _searched_text(record: dict[str, Any], key: str, names: list[str]) -> str:
    """A paper's folded search text: syncd's own function when it has one
    (``syncd.storage.paper_index.searched_text``), else the same words folded alike."""
    return str(_search_text_function()(record, key, key, names))


@functools.cache
def _search_text_function() -> Callable[[dict[str, Any], str, str, list[str]], str]:
    try:
        from syncd.storage.paper_index import searched_text  # type: ignore[import-not-found]  # noqa: PLC0415
    except ImportError:
        from syncd.domain.record import normalize_name  # noqa: PLC0415

        def searched_text(record: dict[str, Any], key: str, arxiv_id: str, names: list[str]) -> str:
            words = [record.get("title") or "", arxiv_id, key, *names, *record.get("authors", ())]
            return normalize_name(" ".join(words))

    return searched_text  # type: ignore[no-any-return]


# Columns other parts keep in step with a paper's rows (issue 34): filled here from what the
# paper's row knows (``_derive``).  A name absent from the schema is skipped.
DERIVED: dict[tuple[str, str], Callable[[dict[str, Any]], Any]] = {
    ("papers", "changed_at"): lambda extra: extra["changed_at"],
    ("papers", "search_text"): lambda extra: extra["search_text"],
}


# -- the rows ----------------------------------------------------------------------------


class World:
    """The rows of one database, drawn from a fixed seed: the same ``size``, the same rows."""

    def __init__(self, size: Size) -> None:
        self.size = size
        self.names = _names(size.authors)
        self.templates = _templates()
        rng = random.Random(34)
        # Who holds each paper: 1 to 3 distinct authors, the first drawn with weight
        # falling as a power law (u**2), so a few authors hold thousands of papers.
        self.holders: list[tuple[int, ...]] = []
        for _ in range(size.papers):
            count = 1 + (rng.random() < 0.25) + (rng.random() < 0.05)
            chosen = {int(size.authors * rng.random() ** 2) + 1 for _ in range(count)}
            self.holders.append(tuple(sorted(chosen)))
        # Each author's first paper, which hosts their ``author.added``.
        self.first_paper: dict[int, int] = {}
        for p, holders in enumerate(self.holders):
            for a in holders:
                self.first_paper.setdefault(a, p)
        self.hosts = set(self.first_paper.values())
        self.revised = [rng.random() < 0.25 for _ in range(size.papers)]
        self.added = [rng.random() < 0.10 for _ in range(size.papers)]
        self.statuses = [rng.choices(_STATUSES, _STATUS_WEIGHTS)[0] for _ in range(64)]

    def arxiv_id(self, paper: int) -> str:
        """Ids in arXiv's order: 5,000 a month from 2007-04 on (2501.00001-style numbers)."""
        month, number = divmod(paper, 5_000)
        year, month = divmod(month + 3, 12)
        return f"{7 + year:02d}{month + 1:02d}.{number + 1:05d}"

    def when(self, paper: int) -> datetime:
        """When paper ``paper`` (0-based) was first stored: in id order, over six years."""
        return START + timedelta(seconds=paper * 6 * 365 * 86_400 // max(1, self.size.papers))

    def record(self, paper: int, version: int) -> Any:
        template = self.templates[paper % len(self.templates)]
        holders = [self.names[a - 1] for a in self.holders[paper]]
        others = [n for n in template.authors if n not in holders]
        published = self.when(paper).strftime("%Y-%m-%dT%H:%M:%SZ")
        return replace(
            template,
            arxiv_id=self.arxiv_id(paper),
            version=version,
            title=f"{template.title} ({_WORDS[paper % len(_WORDS)]} {paper})",
            abstract=template.abstract if version == 1 else f"{template.abstract} Revised.",
            authors=(*holders, *others[:7]),
            published=published,
            updated=published,
        )

    def authors(self) -> Iterator[dict[str, Any]]:
        from syncd.domain.author_names import name_key  # noqa: PLC0415

        for a, name in enumerate(self.names, start=1):
            yield {
                "id": a, "name": name, "name_key": name_key(name), "created_at": START,
                "orcid": f"0000-0002-{a // 10_000:04d}-{a % 10_000:04d}" if a % 3 == 0 else None,
                "seeds": [], "origin": "runtime", "baseline_at": START, "write_seq": 1,
            }  # fmt: skip

    def sync_runs(self) -> Iterator[dict[str, Any]]:
        finished = START + timedelta(days=6 * 365)
        for a in range(1, self.size.authors + 1):
            failed = a % 100 == 7
            yield {
                "id": a, "author_id": a, "started_at": finished - timedelta(seconds=a % 3600),
                "finished_at": finished, "status": "failed" if failed else "ok",
                "error": "HTTP 503 from export.arxiv.org" if failed else None,
                "requests": 1, "entries": 10, "events": 0,
            }  # fmt: skip

    def papers(self) -> Iterator[dict[str, Any]]:
        for p in range(self.size.papers):
            record = self.record(p, 2 if self.revised[p] else 1).to_dict()
            arxiv_id = self.arxiv_id(p)
            revised = self.when(p) + timedelta(days=30 if self.revised[p] else 0)
            names = sorted(self.names[a - 1] for a in self.holders[p])
            yield {
                "id": p + 1, "key": arxiv_id, "arxiv_id": arxiv_id, "record": record,
                "record_hash": f"{p:032x}", "created_at": self.when(p), "updated_at": revised,
                "_derive": {
                    "changed_at": self.changed_at(p),
                    "search_text": _searched_text(record, arxiv_id, names),
                },
            }  # fmt: skip

    def changed_at(self, paper: int) -> datetime:
        """The paper's latest change as syncd keeps it: its last event's time, else its last
        revision's (``events`` below writes them)."""
        if self.revised[paper]:
            return self.when(paper) + timedelta(days=30)
        if self.added[paper]:
            return self.when(paper)
        return START if paper in self.hosts else self.when(paper)

    def paper_authors(self) -> Iterator[dict[str, Any]]:
        for p, holders in enumerate(self.holders):
            for a in holders:
                status = self.statuses[(p + a) % len(self.statuses)]
                yield {
                    "paper_id": p + 1, "author_id": a, "status": status, "origin": "arxiv",
                    "absent_syncs": 0, "claimed": a % 3 == 0 and status == "tracked",
                    "candidate_reason": "no co-author in common" if status == "candidate" else None,
                    "created_at": self.when(p), "updated_at": self.when(p),
                }  # fmt: skip

    def revisions(self) -> Iterator[dict[str, Any]]:
        revision = itertools.count(1)
        for p in range(self.size.papers):
            for version in (1, 2) if self.revised[p] else (1,):
                record = self.record(p, version)
                yield {
                    "id": next(revision), "paper_id": p + 1, "seq": version,
                    "observed_at": self.when(p) + timedelta(days=30 * (version - 1)),
                    "source": "arxiv", "version": version,
                    "version_date": self.when(p) + timedelta(days=30 * (version - 1)),
                    "kinds": [] if version == 1 else ["abstract"],
                    "changes": {} if version == 1 else _ABSTRACT_CHANGE,
                    "record": record.to_dict(), "record_hash": f"{p:030x}{version:02x}",
                }  # fmt: skip

    def events(self) -> Iterator[dict[str, Any]]:
        """The baselines (``author.added``), then papers' events in the order they happened."""
        seq = itertools.count(1)
        held = collections.Counter(a for holders in self.holders for a in holders)
        for a, p in sorted(self.first_paper.items()):
            changes = {"author": {"name": self.names[a - 1], "papers": held[a], "candidates": 0}}
            yield self._event(next(seq), "author.added", p, a, when=START, changes=changes)
        revision = 0
        for p in range(self.size.papers):
            revision += 1
            if self.added[p]:
                yield self._event(
                    next(seq), "paper.added", p, self.holders[p][0], when=None, changes={}
                )
            if self.revised[p]:
                revision += 1
                when = self.when(p) + timedelta(days=30)
                row = self._event(
                    next(seq), "paper.revised", p, self.holders[p][0], when=when,
                    changes=_ABSTRACT_CHANGE,
                )  # fmt: skip
                yield row | {"revision_id": revision, "kinds": ["abstract"]}

    def _event(
        self, seq: int, kind: str, paper: int, author: int, *, when: datetime | None, changes: Any
    ) -> dict[str, Any]:
        return {
            "seq": seq, "id": f"evt_{seq:032x}", "type": kind,
            "created_at": when or self.when(paper), "author_id": author, "paper_id": paper + 1,
            "revision_id": None, "kinds": [], "changes": changes,
            "authors": [self.names[a - 1] for a in self.holders[paper]],
        }  # fmt: skip

    def groups(self) -> Iterator[dict[str, Any]]:
        for g in range(1, min(GROUPS, self.size.authors) + 1):
            yield {"id": g, "name": f"group-{g:02d}", "origin": "runtime", "created_at": START}

    def group_members(self) -> Iterator[dict[str, Any]]:
        for g in range(1, min(GROUPS, self.size.authors) + 1):
            for m in range(min(GROUP_MEMBERS, self.size.authors)):
                yield {"group_id": g, "author_id": (g * 7_919 + m * 13) % self.size.authors + 1}


_STATUSES = ("tracked", "candidate", "removed")
_STATUS_WEIGHTS = (90, 8, 2)
_ABSTRACT_CHANGE = {"abstract": {"added": ["Revised."], "removed": []}}
_WORDS = ("quantum", "lattice", "neural", "spectral", "galactic", "entropy", "manifold", "plasma")


@functools.cache
def _templates() -> list[Any]:
    """The distinct real entries of the recorded arXiv answers, as records."""
    from syncd.sources.arxiv import parse_feed  # noqa: PLC0415

    found: dict[str, Any] = {}
    for path in sorted(feeds.FIXTURES.glob("query_all-testing_*.xml")):
        for record in parse_feed(path.read_bytes()).records:
            found.setdefault(record.arxiv_id or "", record)
    return list(found.values())


@functools.cache
def _names(count: int) -> list[str]:
    """``count`` distinct people: first and last names of the recorded entries' authors,
    crossed (accents and all), with a middle initial when the pairs run out."""
    firsts: dict[str, None] = {}
    lasts: dict[str, None] = {}
    for record in _templates():
        for name in record.authors:
            parts = name.split()
            if len(parts) >= 2:
                firsts.setdefault(parts[0], None)
                lasts.setdefault(parts[-1], None)
    pairs = itertools.product(lasts, firsts)
    initials = itertools.product("ABCDEFGHJKLMNPRSTVW", lasts, firsts)
    names = [f"{first} {last}" for last, first in pairs]
    names += [f"{first} {i}. {last}" for i, last, first in initials]
    if len(names) < count:
        raise ValueError(f"at most {len(names):,} distinct names")
    random.Random(7).shuffle(names)
    seen: set[str] = set()
    from syncd.domain.author_names import name_key  # noqa: PLC0415

    out = []
    for name in names:
        key = name_key(name)
        if key not in seen:
            seen.add(key)
            out.append(name)
            if len(out) == count:
                break
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale_data", description=__doc__)
    parser.add_argument("authors", type=int)
    parser.add_argument("papers", type=int)
    parser.add_argument("--postgresql", action="store_true", help="PostgreSQL, not SQLite")
    args = parser.parse_args(argv)
    size = Size(args.authors, args.papers)
    print((postgresql if args.postgresql else sqlite)(size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
