"""What a reliability run checks: database snapshots and their comparison with the
reference run, integrity of what syncd stored, and tallies of what was delivered.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from syncd.storage.schema import (
    deliveries_table,
    events_table,
    metadata,
    paper_authors_table,
    papers_table,
    revisions_table,
    sync_runs_table,
)
from tests.receiver import Received
from tests.reliability.harness import connect

__all__ = [
    "Comparison",
    "DeliveryTally",
    "EventKey",
    "Snapshot",
    "compare",
    "integrity_problems",
    "snapshot",
    "tally_deliveries",
]


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
        t = paper_authors_table
        held = sa.select(p.c.key, p.c.arxiv_id, t.c.status, p.c.record_hash, t.c.absent_syncs)
        papers = {
            row.key: (row.arxiv_id, row.status, row.record_hash, row.absent_syncs)
            for row in conn.execute(held.join(t, t.c.paper_id == p.c.id))
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
