"""Cycle digests: one message per sync cycle and endpoint, with the outbox's guarantees."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from typing import Any

import pytest
import sqlalchemy as sa

from syncd.delivery.payload import claim_body
from syncd.domain.model import Event, NewRevision, PaperWrite, SyncStats
from syncd.domain.record import Record
from syncd.domain.routing import EndpointSpec
from syncd.domain.vocabulary import DeliveryFormat, DeliveryGroup, EventType, Origin, PaperStatus
from syncd.storage import DIGEST_MAX_BYTES, Attempt, Claim, Storage
from syncd.storage.database import now
from syncd.storage.events import publish
from syncd.storage.migrate import upgrade
from syncd.storage.papers import WrittenPaper, author_id
from syncd.storage.schema import revisions_table
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import FakeArxiv
from tests.helpers import ROOT, WEBHOOK_SECRET, webhook_config
from tests.integration.conftest import Syncd
from tests.receiver import Receiver
from tests.scenario import NESTPIPE


def _cycle_hook(
    syncd: Syncd,
    receiver: Receiver,
    *,
    schedule: str = "[0.05, 0.05, 0.05]",
    sync_wait: float = 10,
    filters: str = "",
) -> None:
    syncd.sections = webhook_config(
        receiver.url,
        name="lab-digest",
        schedule=schedule,
        sync_wait=sync_wait,
        lease=1,
        endpoint=f'secret = "{WEBHOOK_SECRET}"\ngroup = "cycle"\n{filters}',
    )


def _digest_events(received: Any) -> list[str]:
    return [event["id"] for event in received.json["data"]["events"]]


def test_first_sync_is_one_signed_digest(syncd: Syncd, receiver: Receiver) -> None:
    """Seven linked papers reach a cycle-grouped endpoint as one verified cycle.digest."""
    _cycle_hook(syncd, receiver)
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    assert "1 attempt, 0 pending, 0 dead-lettered" in outcome.out
    (received,) = receiver.received
    assert received.verified
    assert received.msg_id is not None and received.msg_id.startswith("dig_")
    assert received.json["type"] == "cycle.digest"
    events = syncd.json("events")
    assert len(events) == 7
    assert _digest_events(received) == [e["id"] for e in events]
    assert received.json["data"]["events"] == events
    (endpoint,) = syncd.json("webhooks", "list")
    assert (endpoint["pending"], endpoint["delivered"], endpoint["dead"]) == (0, 1, 0)


def test_successive_digests_arrive_in_cycle_order(
    syncd: Syncd, arxiv: FakeArxiv, receiver: Receiver
) -> None:
    """Digests held back by a dead receiver arrive later, one per cycle, in cycle order."""
    many = "[" + ", ".join(["0.05"] * 100) + "]"
    _cycle_hook(syncd, receiver, schedule=many, sync_wait=0.3)
    receiver.go_down()
    assert syncd("sync").code == 0
    arxiv.revise(NESTPIPE, title="NestPipe, second title")
    assert syncd("sync").code == 0
    arxiv.revise(NESTPIPE, abstract="A third abstract.")
    assert syncd("sync").code == 0
    assert receiver.received == []
    receiver.come_up()
    _cycle_hook(syncd, receiver, schedule=many)
    assert syncd("sync").code == 0
    ids = [r.msg_id for r in receiver.delivered]
    assert len(ids) == len(set(ids)) == 3
    carried = [_digest_events(r) for r in receiver.delivered]
    assert [len(c) for c in carried] == [7, 1, 1]
    assert [i for c in carried for i in c] == [e["id"] for e in syncd.json("events")]


def test_filters_apply_to_digests(syncd: Syncd, arxiv: FakeArxiv, receiver: Receiver) -> None:
    """A digest carries only the events its endpoint's filters take; none, no digest."""
    _cycle_hook(syncd, receiver, filters='events = ["paper.revised"]\nkinds = ["doi"]')
    assert syncd("sync").code == 0
    arxiv.amend(NESTPIPE, comment="camera ready")
    assert syncd("sync").code == 0
    arxiv.amend(NESTPIPE, doi="10.1145/7654321")
    assert syncd("sync").code == 0
    (received,) = receiver.delivered
    (event,) = received.json["data"]["events"]
    assert (event["type"], event["kinds"]) == ("paper.revised", ["doi"])


def test_dead_digest_is_redelivered_under_its_id(syncd: Syncd, receiver: Receiver) -> None:
    """A digest retried to exhaustion is one dead letter; redelivering any of its events or
    the dead letters sends it again, whole, under the same id."""
    _cycle_hook(syncd, receiver, schedule="[0.05, 0.05]")
    receiver.always(500)
    outcome = syncd("sync")
    assert "0 pending, 1 dead-lettered" in outcome.out
    assert len(receiver.received) == 3
    first = receiver.received[0].msg_id
    receiver.always(200)
    assert syncd("webhooks", "redeliver", "--dead").out.strip() == "1 delivery queued"
    assert syncd("sync").code == 0
    last_event = syncd.json("events")[-1]["id"]
    assert syncd("webhooks", "redeliver", last_event).out.strip() == "1 delivery queued"
    assert syncd("sync").code == 0
    assert [r.msg_id for r in receiver.delivered] == [first, first]
    assert [len(_digest_events(r)) for r in receiver.delivered] == [7, 7]


def _killed_sync(syncd: Syncd, point: str) -> None:
    """``syncd sync`` in a process of its own, SIGKILLed at fault point ``point``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    env["SYNCD_FAULT_POINTS"] = f"{point}:1"
    argv = [sys.executable, "-m", "syncd", "--config", str(syncd.config), "sync"]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, timeout=60, check=False)
    assert done.returncode == -9, done.stderr.decode()


@pytest.mark.parametrize("point", ["store.cycle_written", "store.cycle_committed", "dispatch.sent"])
def test_a_crash_neither_loses_nor_doubles_the_digest(
    syncd: Syncd, receiver: Receiver, point: str
) -> None:
    """Killed before the cycle commits, after it commits, or after the digest's 2xx: the
    next run sends the cycle's events in one digest id (again, at most, the same id)."""
    _cycle_hook(syncd, receiver)
    _killed_sync(syncd, point)
    assert syncd("sync").code == 0
    events = [e["id"] for e in syncd.json("events")]
    assert len(events) == 7
    ids = {r.msg_id for r in receiver.delivered}
    assert len(ids) == 1
    assert all(_digest_events(r) == events for r in receiver.delivered)
    assert len(receiver.delivered) == (2 if point == "dispatch.sent" else 1)


# SQLite's default build binds at most 32,766 parameters per statement (Debian's
# allows 250,000: the test lowers it to the default); PostgreSQL's protocol 65,535.
PARAMETER_LIMITS = {"sqlite": 32_766, "postgresql": 65_535}


def _default_sqlite_parameter_limit(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, PARAMETER_LIMITS["sqlite"])


def _paper(number: int, **event: Any) -> PaperWrite:
    record = Record(arxiv_id=f"2601.{number:05d}", version=2, title="A title")
    return PaperWrite(
        key=f"paper-{number}",
        arxiv_id=record.arxiv_id,
        status=PaperStatus.TRACKED,
        origin=Origin.ARXIV,
        revisions=(NewRevision(record, source="synthetic"),),
        **event,
    )


def _publish_many(storage: Storage, author: str, count: int) -> list[Event]:
    """``count`` events of one cycle, every thousandth a DOI change, the rest a new title.

    Quick to build: the events of a thousand in a row share a paper, so only
    the events, not their papers, are as many; they go through ``publish``.
    """
    run_id = storage.runs.start(author)
    assert run_id is not None
    papers = [_paper(number) for number in range(count // 1000 + 1)]
    storage.apply_cycle(run_id, author, papers, SyncStats())
    r = revisions_table
    with storage.db.transaction() as conn:
        revisions = {row.paper_id: row.id for row in conn.execute(sa.select(r.c.paper_id, r.c.id))}
        paper_ids = sorted(revisions)
        written = [
            WrittenPaper(
                _paper(
                    number // 1000,
                    event_type=EventType.REVISED,
                    event_kinds=("doi",) if number % 1000 == 0 else ("title",),
                ),
                paper_ids[number // 1000],
                revisions[paper_ids[number // 1000]],
            )
            for number in range(count)
        ]
        owner = author_id(storage.db, conn, author)
        return publish(conn, author, owner, written, run_id=run_id, when=now())


def _endpoint(name: str, **routing: Any) -> EndpointSpec:
    return EndpointSpec(name=name, url="http://127.0.0.1:9/", url_hash=name, **routing)


def _deliver_everything(storage: Storage) -> dict[str, list[Claim]]:
    """Claim and acknowledge every due delivery, as a worker would; the claims per endpoint."""
    claimed: dict[str, list[Claim]] = {}
    while claims := storage.outbox.claim("test-worker", 60, limit=64):
        for claim in claims:
            claimed.setdefault(claim.endpoint, []).append(claim)
        done = [Attempt(c.delivery_id, 200, delivered=True) for c in claims]
        storage.outbox.record_attempts("test-worker", done)
    return claimed


# Both databases: each binds parameters up to its own limit (SQLite's is set low here).
@pytest.mark.slow
@ON_BOTH_DATABASES
def test_a_digest_beyond_the_parameter_limit_reaches_every_endpoint(database_url: str) -> None:
    """A cycle of more events than the database binds parameters in one statement: the
    standard digest arrives as ordered digests of at most DIGEST_MAX_BYTES each, carrying
    every event once; the Slack digest (one message) and a per-event endpoint arrive too."""
    storage = Storage(database_url)
    if storage.db.dialect == "sqlite":
        sa.event.listen(storage.engine, "connect", _default_sqlite_parameter_limit)
    try:
        upgrade(storage.engine)
        storage.endpoints.register(
            [
                _endpoint("digest", group=DeliveryGroup.CYCLE),
                _endpoint("slack", format=DeliveryFormat.SLACK, group=DeliveryGroup.CYCLE),
                _endpoint("per-event", kinds=("doi",)),
            ]
        )
        events = _publish_many(storage, "Ada Lovelace", PARAMETER_LIMITS[storage.db.dialect] + 1)
        claimed = _deliver_everything(storage)
    finally:
        storage.close()
    every = [event.id for event in events]
    assert [e.id for c in claimed["per-event"] for e in c.events] == every[::1000]
    (slack,) = claimed["slack"]
    assert [event.id for event in slack.events] == every
    digests = claimed["digest"]
    assert len(digests) > 1
    assert len({c.message_id for c in digests}) == len(digests)
    assert all(c.message_id.startswith("dig_") for c in digests)
    assert [e.id for c in digests for e in c.events] == every
    for claim in digests:
        body = claim_body(claim, DeliveryFormat.STANDARD, public_url=None)
        assert len(body) <= DIGEST_MAX_BYTES
