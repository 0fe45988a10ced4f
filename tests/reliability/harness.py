"""What the reliability runs share: the upstream script, the config syncd runs with,
scratch databases, database snapshots and their comparison, integrity checks,
delivery tallies and the results table.

``make reliability`` runs the full versions and prints the table;
``tests/reliability/test_reliability.py`` runs short ones in CI.
"""

from __future__ import annotations

import json
import math
import os
import random
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from syncd.storage.schema import (
    deliveries_table,
    endpoints_table,
    events_table,
    metadata,
    papers_table,
    revisions_table,
    sync_runs_table,
)
from tests import fakearxiv as fa
from tests import scenario
from tests.helpers import ROOT, WEBHOOK_SECRET
from tests.receiver import Received

__all__ = [
    "AUTHOR",
    "POSTGRES_ADMIN_URL",
    "Change",
    "Comparison",
    "DeliveryTally",
    "Snapshot",
    "UpstreamScript",
    "compare",
    "format_table",
    "integrity_problems",
    "scratch_database",
    "snapshot",
    "stock",
    "tally_deliveries",
    "write_config",
    "write_result",
]

AUTHOR = scenario.AUTHOR
SEEDS = (
    scenario.SEEDS / "000_bae548b29664adf4.txt",
    scenario.SEEDS / "001_486f742ac3512806.txt",
)
POSTGRES_ADMIN_URL = os.environ.get(
    "SYNCD_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)

# -- configuration ---------------------------------------------------------------------


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def write_config(
    path: Path,
    *,
    api_url: str,
    database_url: str,
    hook_url: str,
    sections: Mapping[str, Mapping[str, object]],
    more_hooks: Mapping[str, Mapping[str, object]] | None = None,
) -> Path:
    """Write a syncd config for the seeded author with one webhook; ``sections`` adds keys,
    ``more_hooks`` more ``[[webhooks]]`` (name -> keys)."""
    lines: list[str] = []
    merged: dict[str, dict[str, object]] = {
        "arxiv": {"api_url": api_url},
        "database": {"url": database_url, "key_file": str(path.parent / "url.key")},
        "log": {"level": "info", "format": "json"},
    }
    for name, values in sections.items():
        merged.setdefault(name, {}).update(values)
    for name, values in merged.items():
        lines.append(f"[{name}]")
        lines += [f"{key} = {_toml(value)}" for key, value in values.items()]
        lines.append("")
    lines += [
        "[[authors]]",
        f"name = {_toml(AUTHOR)}",
        f"seeds = {_toml([str(s) for s in SEEDS])}",
        "",
        "[[webhooks]]",
        'name = "reliability"',
        f"url = {_toml(hook_url)}",
        f"secret = {_toml(WEBHOOK_SECRET)}",
        "timeout = 5.0",
        "",
    ]
    for name, values in (more_hooks or {}).items():
        lines += ["[[webhooks]]", f"name = {_toml(name)}"]
        lines += [f"{key} = {_toml(value)}" for key, value in values.items()]
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


# -- the scripted upstream ---------------------------------------------------------------


def stock(fake: fa.FakeArxiv) -> None:
    """Publish the seeded author's papers, as the integration tests' fake arXiv does."""
    for record in scenario.upstream_versions():
        fake.publish(record)


@dataclass(frozen=True, slots=True)
class Change:
    """One scripted upstream change; ``apply`` reads the fake's state, so replays agree."""

    kind: str  # version, amend, new, candidate, withdraw, remove
    arxiv_id: str
    detail: str = ""  # version: the field changed; amend: field=value

    @property
    def publishes_event(self) -> bool:
        """Whether the next good cycle publishes an event for it (a removal takes longer)."""
        return self.kind in ("version", "amend", "new", "withdraw")

    def apply(self, fake: fa.FakeArxiv) -> None:
        """Make the change on ``fake``."""
        if self.kind in ("new", "candidate"):
            number = int(self.arxiv_id.split(".")[1]) - 10000
            if self.kind == "new":  # shares a co-author: tracked, paper.added
                record = fa.make_record(
                    self.arxiv_id,
                    authors=(AUTHOR, "Zhaolong Xing", f"Reliability Coauthor{number}"),
                )
            else:  # shares nothing with the known papers: held as a candidate, no event
                record = fa.make_record(
                    self.arxiv_id,
                    authors=(AUTHOR, f"Stranger Number{number}"),
                    primary_category="astro-ph.CO",
                    categories=("astro-ph.CO",),
                )
            fake.publish(record)
        elif self.kind == "version":
            current = fake.current(self.arxiv_id)
            version = (current.version or 1) + 1
            if self.detail == "title":
                base = (current.title or "").split(" [rev ")[0]
                changed = replace(current, title=f"{base} [rev {version}]")
            else:
                base = (current.abstract or "").split(" Revision ")[0]
                changed = replace(current, abstract=f"{base} Revision {version} adds results.")
            fake.publish(replace(changed, version=version, updated=None))
        elif self.kind == "amend":
            name, _, value = self.detail.partition("=")
            fake.amend(self.arxiv_id, **{name: value})
        elif self.kind == "withdraw":
            fake.withdraw(self.arxiv_id)
        elif self.kind == "remove":
            fake.remove(self.arxiv_id)
        else:
            raise ValueError(f"unknown change {self.kind}")


_WEIGHTS = {"version": 4, "amend": 4, "new": 2, "candidate": 1, "withdraw": 1, "remove": 2}


class UpstreamScript:
    """A seeded, replayable list of steps, each one to three upstream changes.

    Every step has at least one change that publishes an event, and step 1
    removes a paper.  Changes in a step touch distinct papers; removed and
    withdrawn papers are left alone afterwards, so a removal is final and the
    comparison needs no timing.  New papers never arrive past version 1, so no
    cycle needs the ``id_list`` fetch of earlier versions (see
    docs/RELIABILITY.md).
    """

    def __init__(
        self, seed: int, *, max_papers: int = 20, max_removals: int = 2, max_withdrawals: int = 3
    ) -> None:
        self._rng = random.Random(seed)
        self._live = list(dict.fromkeys(r.arxiv_id or "" for r in scenario.upstream_versions()))
        self._max_papers = max_papers
        self._left = {"remove": max_removals, "withdraw": max_withdrawals}
        self._next = 10001
        self._amends = 0
        self._steps: list[tuple[Change, ...]] = []

    def step(self, index: int) -> tuple[Change, ...]:
        """The changes of step ``index`` (generated on first use, then remembered)."""
        while len(self._steps) <= index:
            self._steps.append(self._generate())
        return self._steps[index]

    def _generate(self) -> tuple[Change, ...]:
        rng = self._rng
        touched: set[str] = set()
        changes: list[Change] = []
        added: list[str] = []
        for position in range(rng.choice((1, 1, 2, 3))):
            kinds = list(_WEIGHTS)
            if position == 0:
                kinds = [k for k in kinds if k not in ("candidate", "remove")]
            kind = rng.choices(kinds, [_WEIGHTS[k] for k in kinds])[0]
            candidates = [p for p in self._live if p not in touched]
            if kind in ("new", "candidate") and len(self._live) + len(added) >= self._max_papers:
                kind = "version"
            if kind in self._left and (not self._left[kind] or len(self._live) < 6):
                kind = "amend"
            if kind not in ("new", "candidate") and not candidates:
                kind = "new"
            change = self._change(kind, candidates)
            changes.append(change)
            touched.add(change.arxiv_id)
            if kind == "new":
                added.append(change.arxiv_id)
            if kind in self._left:
                self._live.remove(change.arxiv_id)
                self._left[kind] -= 1
        spare = [p for p in self._live if p not in touched]
        if len(self._steps) == 1 and self._left["remove"] and spare:
            # An early removal, so short runs see paper.removed too.
            changes.append(Change("remove", rng.choice(spare)))
            self._live.remove(changes[-1].arxiv_id)
            self._left["remove"] -= 1
        self._live += added
        return tuple(changes)

    def _change(self, kind: str, candidates: Sequence[str]) -> Change:
        rng = self._rng
        if kind in ("new", "candidate"):
            arxiv_id = f"2607.{self._next:05d}"
            self._next += 1
            return Change(kind, arxiv_id)
        arxiv_id = rng.choice(candidates)
        if kind == "version":
            return Change(kind, arxiv_id, rng.choice(("title", "abstract")))
        if kind == "amend":
            self._amends += 1
            name = rng.choice(("journal_ref", "doi", "comment"))
            value = {
                "journal_ref": f"J. Reliab. Eng. {self._amends} (2026)",
                "doi": f"10.5555/reliability.{self._amends}",
                "comment": f"{self._amends + 8} pages, camera-ready",
            }[name]
            return Change(kind, arxiv_id, f"{name}={value}")
        return Change(kind, arxiv_id)


def author_pages(fake: fa.FakeArxiv, page_size: int) -> int:
    """How many search pages the author's query takes on ``fake`` now."""
    count = sum(1 for history in fake.papers.values() if AUTHOR in history[-1].authors)
    return max(1, math.ceil(count / page_size))


# -- databases ---------------------------------------------------------------------------


@contextmanager
def scratch_database(kind: str, directory: Path, name: str) -> Iterator[str]:
    """A new empty database of ``kind`` (``sqlite`` or ``postgresql``), dropped afterwards."""
    if kind == "sqlite":
        yield f"sqlite:///{directory / f'{name}.sqlite3'}"
        return
    if kind != "postgresql":
        raise ValueError(f"unknown database kind {kind!r}")
    admin = sa.create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    database = f"syncd_rel_{name}_{uuid.uuid4().hex[:8]}"
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{database}"'))
        yield admin.url.set(database=database).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def connect(url: str) -> Iterator[sa.Connection]:
    """A short-lived connection that leaves no pool behind."""
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            yield conn
    finally:
        engine.dispose()


# (paper key, event type, kinds, record hash of the event's revision or None)
EventKey = tuple[str, str, tuple[str, ...], str | None]


@dataclass(frozen=True)
class Snapshot:
    """What a database holds, in terms that do not depend on ids or times."""

    papers: dict[str, tuple[str | None, str, str, int]]  # key -> arxiv id, status, hash, absent
    revisions: dict[str, list[tuple[int, str, tuple[str, ...], str]]]  # key -> seq, hash, kinds
    events: dict[str, EventKey]  # event id -> key
    outbox: Counter[str]  # delivery status -> count
    runs: Counter[str]  # sync run status -> count


def snapshot(url: str) -> Snapshot:
    """Read papers, revisions, events, the outbox and the runs of the database at ``url``."""
    p, r, e = papers_table, revisions_table, events_table
    with connect(url) as conn:
        papers = {
            row.key: (row.arxiv_id, row.status, row.record_hash, row.absent_syncs)
            for row in conn.execute(sa.select(p))
        }
        revisions: dict[str, list[tuple[int, str, tuple[str, ...], str]]] = {}
        query = (
            sa.select(p.c.key, r.c.seq, r.c.record_hash, r.c.kinds, r.c.source)
            .join(p, p.c.id == r.c.paper_id)
            .order_by(p.c.key, r.c.seq)
        )
        for row in conn.execute(query):
            revisions.setdefault(row.key, []).append(
                (row.seq, row.record_hash, tuple(row.kinds), row.source)
            )
        query = (
            sa.select(e.c.id, e.c.type, e.c.kinds, p.c.key, r.c.record_hash)
            .join(p, p.c.id == e.c.paper_id)
            .outerjoin(r, r.c.id == e.c.revision_id)
            .order_by(e.c.seq)
        )
        events = {
            row.id: (row.key, row.type, tuple(row.kinds), row.record_hash)
            for row in conn.execute(query)
        }
        outbox = _count_by(conn, deliveries_table.c.status)
        runs = _count_by(conn, sync_runs_table.c.status)
    return Snapshot(papers, revisions, events, outbox, runs)


def _count_by(conn: sa.Connection, column: sa.Column[Any]) -> Counter[str]:
    query = sa.select(column, sa.func.count()).group_by(column)
    return Counter({str(value): int(count) for value, count in conn.execute(query)})


@dataclass
class Comparison:
    """How a run's database differs from the reference's."""

    expected: int
    published: int
    lost: list[EventKey] = field(default_factory=list)  # in the reference, not here
    duplicated: list[EventKey] = field(default_factory=list)  # here more often, new ids
    false: list[EventKey] = field(default_factory=list)  # here, never in the reference
    revision_diffs: list[str] = field(default_factory=list)
    paper_diffs: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No event lost, doubled or false, and the same revisions and papers."""
        return not (
            self.lost or self.duplicated or self.false or self.revision_diffs or self.paper_diffs
        )


def compare(reference: Snapshot, got: Snapshot) -> Comparison:
    """Compare ``got`` with ``reference``: event multisets, revision lists, paper states."""
    want, have = Counter(reference.events.values()), Counter(got.events.values())
    result = Comparison(expected=sum(want.values()), published=sum(have.values()))
    result.lost = sorted((want - have).elements(), key=repr)
    for extra in sorted((have - want).elements(), key=repr):
        (result.duplicated if extra in want else result.false).append(extra)
    for paper in sorted(set(reference.revisions) | set(got.revisions)):
        a, b = reference.revisions.get(paper), got.revisions.get(paper)
        if a != b:
            result.revision_diffs.append(f"{paper}: reference {a} != {b}")
    for paper in sorted(set(reference.papers) | set(got.papers)):
        c, d = reference.papers.get(paper), got.papers.get(paper)
        if c != d:
            result.paper_diffs.append(f"{paper}: reference {c} != {d}")
    return result


@dataclass
class DeliveryTally:
    """What a verifying receiver saw, against the events the database holds."""

    delivered: int  # distinct event ids received verified with a 2xx
    undelivered: list[str]  # event ids never received so
    redelivered: int  # further 2xx receipts of an id already received (at least once)
    unknown: list[str]  # webhook-ids that name no event (a false delivery)
    mismatched: int  # receipts whose webhook-id differs from the body's event id
    unverified: int  # POSTs whose signature did not verify


def tally_deliveries(events: Mapping[str, EventKey], received: Sequence[Received]) -> DeliveryTally:
    """Tally the receiver's POSTs against the database's events."""
    good = [r for r in received if r.verified and 200 <= r.status_sent < 300]
    ids = Counter(r.msg_id or "" for r in good)
    mismatched = sum(
        1 for r in good if r.json is None or (r.json.get("data") or {}).get("id") != r.msg_id
    )
    return DeliveryTally(
        delivered=sum(1 for i in ids if i in events),
        undelivered=sorted(i for i in events if i not in ids),
        redelivered=sum(ids.values()) - len(ids),
        unknown=sorted(i for i in ids if i not in events),
        mismatched=mismatched,
        unverified=sum(1 for r in received if not r.verified),
    )


_LOGICAL_CHECKS = {
    "duplicate (paper_id, seq) in revisions": """
        SELECT paper_id FROM revisions GROUP BY paper_id, seq HAVING count(*) > 1""",
    "revision seqs not 1..n": """
        SELECT paper_id FROM revisions GROUP BY paper_id
        HAVING min(seq) <> 1 OR max(seq) <> count(*)""",
    "paper without revisions": """
        SELECT p.key FROM papers p
        WHERE NOT EXISTS (SELECT 1 FROM revisions r WHERE r.paper_id = p.id)""",
    # Backfilled versions (source arxiv:vN) are stored later but are the past.
    "paper record_hash differs from its latest revision": """
        SELECT p.key FROM papers p JOIN revisions r ON r.paper_id = p.id
        WHERE r.seq = (
            SELECT max(seq) FROM revisions x
            WHERE x.paper_id = p.id AND x.source NOT LIKE 'arxiv:v%')
          AND r.record_hash <> p.record_hash""",
    "backfilled version the history already held": """
        SELECT b.paper_id FROM revisions b JOIN revisions o
          ON o.paper_id = b.paper_id AND o.version = b.version AND o.id <> b.id
        WHERE b.source LIKE 'arxiv:v%'""",
    "event attached to another paper's revision": """
        SELECT e.id FROM events e JOIN revisions r ON r.id = e.revision_id
        WHERE r.paper_id <> e.paper_id""",
    "event without a delivery row for an endpoint": """
        SELECT e.id FROM events e CROSS JOIN endpoints n
        WHERE NOT EXISTS (
            SELECT 1 FROM deliveries d
            WHERE d.event_seq = e.seq AND d.endpoint_id = n.id AND d.digest_id IS NULL)
          AND NOT EXISTS (
            SELECT 1 FROM digest_events c JOIN deliveries d ON d.id = c.delivery_id
            WHERE c.event_seq = e.seq AND d.endpoint_id = n.id)""",
    "duplicate (event, endpoint) delivery rows": """
        SELECT event_seq FROM deliveries GROUP BY event_seq, endpoint_id HAVING count(*) > 1""",
    "event in two digests to one endpoint": """
        SELECT c.event_seq FROM digest_events c JOIN deliveries d ON d.id = c.delivery_id
        GROUP BY c.event_seq, d.endpoint_id HAVING count(*) > 1""",
    "event both in a digest and a delivery of its own to one endpoint": """
        SELECT c.event_seq FROM digest_events c JOIN deliveries d ON d.id = c.delivery_id
        JOIN deliveries o ON o.event_seq = c.event_seq AND o.endpoint_id = d.endpoint_id
        WHERE o.digest_id IS NULL""",
    "digest not standing at its first event": """
        SELECT d.digest_id FROM deliveries d
        WHERE d.digest_id IS NOT NULL AND d.event_seq <> (
            SELECT min(c.event_seq) FROM digest_events c WHERE c.delivery_id = d.id)""",
    "delivery whose paper is not its event's": """
        SELECT d.id FROM deliveries d JOIN events e ON e.seq = d.event_seq
        WHERE d.paper_id <> e.paper_id""",
    "revision of a run not marked ok": """
        SELECT r.id FROM revisions r JOIN sync_runs s ON s.id = r.sync_run_id
        WHERE s.status <> 'ok'""",
    "event of a run not marked ok": """
        SELECT e.id FROM events e JOIN sync_runs s ON s.id = e.sync_run_id
        WHERE s.status <> 'ok'""",
    "ok run whose event count is wrong": """
        SELECT s.id FROM sync_runs s WHERE s.status = 'ok'
          AND s.events <> (SELECT count(*) FROM events e WHERE e.sync_run_id = s.id)""",
    "delivered row without delivered_at": """
        SELECT id FROM deliveries WHERE status = 'delivered' AND delivered_at IS NULL""",
}


def integrity_problems(url: str) -> list[str]:
    """Everything wrong with the database at ``url``; an empty list when it is sound.

    SQLite: ``PRAGMA integrity_check`` and ``PRAGMA foreign_key_check``.
    PostgreSQL: amcheck's ``verify_heapam`` on every table and
    ``bt_index_check(heapallindexed)`` on every index.  Both: every foreign
    key resolves, and the logical invariants of ``_LOGICAL_CHECKS``.
    """
    problems: list[str] = []
    with connect(url) as conn:
        if conn.dialect.name == "sqlite":
            verdict = [row[0] for row in conn.exec_driver_sql("PRAGMA integrity_check")]
            if verdict != ["ok"]:
                problems.append(f"PRAGMA integrity_check: {verdict[:5]}")
            dangling = list(conn.exec_driver_sql("PRAGMA foreign_key_check"))
            if dangling:
                problems.append(f"PRAGMA foreign_key_check: {dangling[:5]}")
        else:
            problems += _postgres_physical(conn)
        problems += _dangling_keys(conn)
        for name, query in _LOGICAL_CHECKS.items():
            rows = list(conn.execute(sa.text(query)))
            if rows:
                problems.append(f"{name}: {[tuple(r) for r in rows[:5]]}")
        conn.rollback()
    return problems


def _postgres_physical(conn: sa.Connection) -> list[str]:
    problems: list[str] = []
    conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS amcheck"))
    conn.commit()
    tables = [t.name for t in metadata.sorted_tables]
    for table in tables:
        rows = list(conn.execute(sa.text("SELECT * FROM verify_heapam(:t)"), {"t": table}))
        if rows:
            problems.append(f"verify_heapam({table}): {[tuple(r) for r in rows[:3]]}")
    indexes = conn.scalars(
        sa.text(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_class t ON t.oid = i.indrelid JOIN pg_am a ON a.oid = c.relam "
            "WHERE a.amname = 'btree' AND t.relname = ANY(:tables)"
        ),
        {"tables": tables},
    ).all()
    for index in indexes:
        try:
            conn.execute(sa.text("SELECT bt_index_check(CAST(:i AS regclass), true)"), {"i": index})
        except sa.exc.DBAPIError as exc:
            conn.rollback()
            problems.append(f"bt_index_check({index}): {str(exc.orig).splitlines()[0]}")
    if not indexes:
        problems.append("amcheck found no index to check")
    return problems


def _dangling_keys(conn: sa.Connection) -> list[str]:
    problems = []
    for table in metadata.sorted_tables:
        for key in table.foreign_keys:
            parent = key.column.table.alias("parent")
            column, target = key.parent, parent.c[key.column.name]
            query = (
                sa.select(sa.func.count())
                .select_from(table.outerjoin(parent, column == target))
                .where(column.is_not(None), target.is_(None))
            )
            count = conn.scalar(query)
            if count:
                problems.append(f"{count} rows of {table.name}.{column.name} reference nothing")
    return problems


def pending_deliveries(url: str) -> int:
    """How many deliveries are still pending."""
    d = deliveries_table
    with connect(url) as conn:
        return int(conn.scalar(sa.select(sa.func.count()).where(d.c.status == "pending")) or 0)


def endpoint_count(url: str) -> int:
    """How many webhook endpoints the database knows."""
    with connect(url) as conn:
        return int(conn.scalar(sa.select(sa.func.count()).select_from(endpoints_table)) or 0)


# -- results -----------------------------------------------------------------------------

COLUMNS = (
    ("family", "family"),
    ("database", "database"),
    ("trials", "trials"),
    ("faults injected", "faults"),
    ("events expected", "expected"),
    ("delivered", "delivered"),
    ("lost", "lost"),
    ("duplicated (distinct ids)", "duplicated"),
    ("false", "false"),
    ("redelivered (same id)", "redelivered"),
    ("time (s)", "seconds"),
)


def format_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The results as a Markdown table, one row per family and database."""
    lines = [
        "| " + " | ".join(title for title, _ in COLUMNS) + " |",
        "|" + "|".join("---" for _ in COLUMNS) + "|",
    ]
    for row in rows:
        cells = [str(row.get("row", row).get(key, "")) for _, key in COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_result(directory: Path, result: Mapping[str, Any]) -> Path:
    """Write one run's result as JSON under ``directory``; return the file."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{result['row']['family']}-{result['row']['database']}.json"
    path.write_text(json.dumps(result, indent=2, sort_keys=True, default=str) + "\n")
    return path


def load_results(directory: Path) -> list[dict[str, Any]]:
    """Every result JSON under ``directory``, torture first."""
    results = [json.loads(p.read_text()) for p in sorted(directory.glob("*.json"))]
    return sorted(results, key=lambda r: (r["row"]["family"] != "torture", r["row"]["database"]))


def print_results(directory: str | Path = ROOT / "build" / "reliability") -> None:
    """Print the table of every result under ``directory``."""
    print(format_table(load_results(Path(directory))))
