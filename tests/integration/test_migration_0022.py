"""0021 → 0022: papers duplicated across authors merge into one story, nothing lost or re-sent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from syncd.domain.record import Record, content_hash
from syncd.storage import Storage
from syncd.storage.migrate import schema_drift, upgrade
from syncd.storage.schema import (
    authors_table,
    deliveries_table,
    digest_events_table,
    endpoints_table,
    events_table,
    paper_authors_table,
    papers_table,
    revisions_table,
)
from tests.conftest import BOTH_DATABASES, database_for
from tests.integration.rewind import downgrade, papers_before_0022

pytestmark = pytest.mark.empty_database

_T0 = datetime(2026, 3, 1, tzinfo=UTC)
ADA, GRACE = "Ada Lovelace", "Grace Hopper"
SHARED, SEED, ALONE = "2603.00001", "seed-engines", "2603.00002"


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    return database_for(request)


def _record(arxiv_id: str | None, version: int | None, title: str) -> dict[str, Any]:
    return Record.from_dict(
        {"arxiv_id": arxiv_id, "version": version, "title": title, "authors": [ADA, GRACE]}
    ).to_dict()


_V1 = _record(SHARED, 1, "Engines")
_V2 = _record(SHARED, 2, "Analytical engines")
_SEED = _record(None, None, "Engines (notes)")
_ALONE = _record(ALONE, 1, "Compilers")

# (id, author, key, arxiv id, status, claimed, its record)
_PAPERS = [
    (1, 1, SHARED, SHARED, "tracked", False, _V1),
    (2, 2, SHARED, SHARED, "candidate", True, _V2),  # Grace's row saw v2 first
    (3, 1, SEED, None, "unlinked", False, _SEED),
    (4, 2, SEED, None, "unlinked", False, _SEED),
    (5, 2, ALONE, ALONE, "tracked", False, _ALONE),
]
# (id, paper, seq, record, hours after _T0 it was observed)
_REVISIONS = [
    (10, 1, 1, _V1, 1),
    (20, 2, 1, _V1, 2),  # the same record as 10: folded into it
    (21, 2, 2, _V2, 3),  # new to the story: moved over
    (30, 3, 1, _SEED, 0),
    (40, 4, 1, _SEED, 0),  # folded into 30
    (50, 5, 1, _ALONE, 4),
]
# (seq, author, paper, revision, type)
_EVENTS = [
    (1, 1, 1, 10, "paper.added"),
    (2, 2, 2, 20, "paper.added"),
    (3, 2, 2, 21, "paper.revised"),
    (4, 2, 5, 50, "paper.added"),
]


def _store_at_0021(engine: sa.Engine) -> None:
    """Two authors holding one paper each in a row of their own, as 0021 stored them."""
    with engine.begin() as conn:
        conn.execute(
            authors_table.insert(),
            [
                {"id": 1, "name": ADA, "created_at": _T0},
                {"id": 2, "name": GRACE, "created_at": _T0},
            ],
        )
        conn.execute(
            papers_before_0022.insert(),
            [
                {"id": i, "author_id": who, "key": key, "arxiv_id": arxiv_id, "status": status}
                | {"origin": "seed" if arxiv_id is None else "arxiv", "claimed": claimed}
                | {"record": record, "record_hash": content_hash(Record.from_dict(record))}
                | {"absent_syncs": 0, "backfill_pending": False, "candidate_reason": None}
                | {"created_at": _T0 + timedelta(minutes=i), "updated_at": _T0}
                for i, who, key, arxiv_id, status, claimed, record in _PAPERS
            ],
        )
        conn.execute(
            revisions_table.insert(),
            [
                {"id": i, "paper_id": paper, "seq": seq, "source": "arxiv", "kinds": []}
                | {"changes": {}, "record": record, "version": record["version"]}
                | {"record_hash": content_hash(Record.from_dict(record))}
                | {"observed_at": _T0 + timedelta(hours=hours)}
                for i, paper, seq, record, hours in _REVISIONS
            ],
        )
        conn.execute(
            events_table.insert(),
            [
                {"seq": seq, "id": f"evt_{seq}", "type": kind, "created_at": _T0}
                | {"author_id": who, "paper_id": paper, "revision_id": revision}
                | {"kinds": [], "changes": {}}
                for seq, who, paper, revision, kind in _EVENTS
            ],
        )
        conn.execute(
            endpoints_table.insert(),
            [
                {"id": 1, "name": "lab", "events": [], "kinds": [], "active": True}
                | {"created_at": _T0}
            ],
        )
        d = deliveries_table
        conn.execute(
            d.insert(),
            [
                {"id": seq, "event_seq": seq, "endpoint_id": 1, "paper_id": paper}
                | {"status": "pending" if seq != 1 else "delivered", "attempts": 0}
                | {"next_attempt_at": _T0, "created_at": _T0}
                for seq, _, paper, _, _ in _EVENTS
            ],
        )
        conn.execute(digest_events_table.insert(), [{"delivery_id": 2, "event_seq": 3}])


def _rows(engine: sa.Engine, query: sa.Select[Any]) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(query)]


def test_duplicated_papers_merge_into_one_story(database_url: str) -> None:
    """Each duplicated paper is one story afterwards: its latest record, every distinct
    revision in time order, each old row its author's tie; every event stays, re-pointed,
    naming its author; the outbox keeps exactly its rows; down and up again is stable."""
    storage = Storage(database_url)
    try:
        upgrade(storage.engine, "0021")
        _store_at_0021(storage.engine)
        outbox_before = storage.outbox.counts()
        upgrade(storage.engine)
        assert schema_drift(storage.engine) == []
        p, t, r, e = papers_table, paper_authors_table, revisions_table, events_table
        assert _rows(storage.engine, sa.select(p.c.id, p.c.key, p.c.arxiv_id).order_by(p.c.id)) == [
            (1, SHARED, SHARED),
            (3, SEED, None),
            (5, ALONE, ALONE),
        ]
        shared = storage.papers.find(SHARED)
        assert shared is not None
        assert shared.record.to_dict() == _V2  # the most recent version
        assert shared.authors == (ADA,)  # tracked by Ada; Grace holds it as a candidate
        ties = sa.select(t.c.paper_id, t.c.author_id, t.c.status, t.c.claimed).order_by(
            t.c.paper_id, t.c.author_id
        )
        assert _rows(storage.engine, ties) == [
            (1, 1, "tracked", False),
            (1, 2, "candidate", True),
            (3, 1, "unlinked", False),
            (3, 2, "unlinked", False),
            (5, 2, "tracked", False),
        ]
        history = sa.select(r.c.id, r.c.paper_id, r.c.seq).order_by(r.c.paper_id, r.c.seq)
        assert _rows(storage.engine, history) == [(10, 1, 1), (21, 1, 2), (30, 3, 1), (50, 5, 1)]
        # Every record any revision held is still in its story's history.
        assert [rev.record.to_dict() for rev in storage.papers.history(1)] == [_V1, _V2]
        assert [rev.record.to_dict() for rev in storage.papers.history(3)] == [_SEED]
        events = sa.select(e.c.seq, e.c.paper_id, e.c.revision_id, e.c.authors).order_by(e.c.seq)
        assert _rows(storage.engine, events) == [
            (1, 1, 10, [ADA]),
            (2, 1, 10, [GRACE]),  # its revision was folded into 10, the same record
            (3, 1, 21, [GRACE]),
            (4, 5, 50, [GRACE]),
        ]
        assert [ev.record.to_dict() if ev.record else None for ev in storage.events.since()] == [
            _V1,
            _V1,
            _V2,
            _ALONE,
        ]
        d = deliveries_table
        queued = sa.select(d.c.id, d.c.event_seq, d.c.paper_id, d.c.status).order_by(d.c.id)
        assert _rows(storage.engine, queued) == [
            (1, 1, 1, "delivered"),
            (2, 2, 1, "pending"),
            (3, 3, 1, "pending"),
            (4, 4, 5, "pending"),
        ]
        assert storage.outbox.counts() == outbox_before  # nothing re-sent, nothing queued
        assert _rows(storage.engine, sa.select(digest_events_table)) == [(2, 3)]
        assert [paper.key for paper in storage.papers.all()] == sorted([SHARED, SEED, ALONE])
        assert [paper.key for paper in storage.papers.all(GRACE)] == sorted([SHARED, SEED, ALONE])

        downgrade(storage.engine, "0021")
        old = papers_before_0022
        split = sa.select(old.c.author_id, old.c.key, old.c.status).order_by(old.c.author_id)
        assert sorted(_rows(storage.engine, split)) == sorted(
            (who, key, status) for _, who, key, _, status, _, _ in _PAPERS
        )
        upgrade(storage.engine)
        assert schema_drift(storage.engine) == []
        assert len(storage.papers.all()) == 3
        assert storage.outbox.counts() == outbox_before
    finally:
        storage.close()
