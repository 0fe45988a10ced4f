"""Webhook delivery from the outbox to a real receiver that verifies like a stranger would."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from syncd.config import DeliverySettings
from syncd.delivery.sender import WebhookSender
from syncd.delivery.worker import Dispatcher
from syncd.domain.planner import seed_writes
from syncd.domain.routing import Endpoint, EndpointSpec
from syncd.sources.seeds import load_seeds
from syncd.storage import Storage
from syncd.storage.migrate import upgrade
from syncd.storage.schema import (
    deliveries_table,
    digest_events_table,
    endpoints_table,
    events_table,
    paper_authors_table,
)
from tests.chatreceiver import SlackReceiver
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import FakeArxiv
from tests.helpers import WEBHOOK_SECRET, StartReceiver, webhook_config
from tests.integration.conftest import SEEDS, Syncd
from tests.receiver import Receiver
from tests.scenario import NESTPIPE

QUERY_KEY = "k3y-in-the-query"


def _hook(
    syncd: Syncd,
    receiver: Receiver,
    *,
    schedule: str = "[0.05, 0.05, 0.05, 0.05, 0.05, 0.05]",
    sync_wait: float = 10,
    filters: str = "",
    url: str | None = None,
) -> None:
    syncd.sections = webhook_config(
        url or receiver.url,
        name="lab-chat",
        schedule=schedule,
        sync_wait=sync_wait,
        endpoint=f'secret = "{WEBHOOK_SECRET}"\n{filters}',
    )


def _bodies(receiver: Receiver) -> list[dict[str, Any]]:
    return [r.json for r in receiver.delivered]


def _attempts(syncd: Syncd) -> list[int]:
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.connect() as conn:
            query = sa.select(deliveries_table.c.attempts).order_by(deliveries_table.c.id)
            return list(conn.scalars(query))
    finally:
        engine.dispose()


def test_first_sync_delivers_signed_events(syncd: Syncd, receiver: Receiver) -> None:
    """Every event reaches the receiver once, verified, with the event id as webhook-id."""
    _hook(syncd, receiver)
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    assert "7 attempts, 0 pending, 0 dead-lettered" in outcome.out
    events = syncd.json("events")
    assert all(r.verified for r in receiver.received)
    assert sorted(r.msg_id for r in receiver.delivered) == sorted(e["id"] for e in events)
    for body in _bodies(receiver):
        assert set(body) == {"type", "timestamp", "data"}
        assert body["type"] == "paper.linked"
        assert body["data"]["paper"]["key"]
        assert body["data"]["kinds"] is not None


def test_receiver_down_then_up_gets_everything_in_order(
    syncd: Syncd, arxiv: FakeArxiv, receiver: Receiver
) -> None:
    """Events held back by a dead receiver arrive later, per paper in order, each id once."""
    many = "[" + ", ".join(["0.05"] * 100) + "]"
    _hook(syncd, receiver, schedule=many, sync_wait=0.4)
    receiver.go_down()
    assert syncd("sync").code == 0
    arxiv.revise(NESTPIPE, title="NestPipe, second title")
    assert syncd("sync").code == 0
    arxiv.revise(NESTPIPE, abstract="A third abstract.")
    assert syncd("sync").code == 0
    assert receiver.received == []
    assert all(a >= 2 for a in _attempts(syncd)[:7])
    receiver.come_up()
    _hook(syncd, receiver, schedule=many, sync_wait=10)
    assert syncd("sync").code == 0
    events = syncd.json("events")
    delivered_ids = [r.msg_id for r in receiver.delivered]
    assert sorted(delivered_ids) == sorted(e["id"] for e in events)
    assert len(set(delivered_ids)) == len(delivered_ids)
    nest_events = [e["id"] for e in events if e["paper"]["arxiv_id"] == NESTPIPE]
    assert len(nest_events) == 3
    assert [i for i in delivered_ids if i in nest_events] == nest_events


def test_gone_disables_the_endpoint(syncd: Syncd, receiver: Receiver) -> None:
    """A 410 disables the endpoint: no attempt after the batch in flight, and `list` says so."""
    _hook(syncd, receiver)
    receiver.always(410)
    outcome = syncd("sync")
    assert outcome.code == 0
    in_flight = len(receiver.received)
    assert 1 <= in_flight <= 7  # one concurrent batch at most
    (endpoint,) = syncd.json("webhooks", "list")
    assert endpoint["disabled_at"] is not None
    assert endpoint["pending"] == 7
    assert syncd("sync").code == 0
    assert len(receiver.received) == in_flight


def test_exhaustion_dead_letters_and_redeliver_revives(syncd: Syncd, receiver: Receiver) -> None:
    """After the last retry a delivery is dead-lettered; `redeliver --dead` brings it back."""
    _hook(syncd, receiver, schedule="[0.05, 0.05]")
    receiver.always(500)
    outcome = syncd("sync")
    assert "0 pending, 7 dead-lettered" in outcome.out
    dead_lines = [json.loads(line) for line in outcome.err.splitlines() if "dead_lettered" in line]
    assert len(dead_lines) == 7
    assert all(line["endpoint"] == "lab-chat" for line in dead_lines)
    assert set(_attempts(syncd)) == {3}
    receiver.always(200)
    revived = syncd("webhooks", "redeliver", "--dead")
    assert revived.out.strip() == "7 deliveries queued"
    assert syncd("sync").code == 0
    assert len(receiver.delivered) == 7


def test_redeliver_one_event_keeps_its_id(syncd: Syncd, receiver: Receiver) -> None:
    """Redelivering an event sends it again under the same webhook-id."""
    _hook(syncd, receiver)
    syncd("sync")
    event_id = syncd.json("events")[0]["id"]
    assert syncd("webhooks", "redeliver", event_id).out.strip() == "1 delivery queued"
    syncd("sync")
    assert [r.msg_id for r in receiver.delivered].count(event_id) == 2
    assert syncd("webhooks", "redeliver", "evt_missing").code == 2


@ON_BOTH_DATABASES  # issue 29/30's acceptance: on both databases
def test_redeliver_takes_the_seq_syncd_events_shows(syncd: Syncd, receiver: Receiver) -> None:
    """An event is named by its seq as well as its id (the narrow events table shows only
    the seq); a seq no event has, or one past any INTEGER, is exit 2."""
    _hook(syncd, receiver)
    syncd("sync")
    second = syncd.json("events")[1]
    assert syncd("webhooks", "redeliver", str(second["seq"])).out.strip() == "1 delivery queued"
    syncd("sync")
    assert [r.msg_id for r in receiver.delivered].count(second["id"]) == 2
    later = syncd.json("events", "--since", str(second["seq"]))
    assert [e["seq"] for e in later] == list(range(second["seq"] + 1, second["seq"] + 6))
    for missing in ("999", "9" * 30, "٣"):
        assert syncd("webhooks", "redeliver", missing).code == 2
        assert syncd("events", "--since", missing).code == 2


def test_filters(syncd: Syncd, arxiv: FakeArxiv, receiver: Receiver) -> None:
    """An endpoint filtered on paper.revised and the doi kind gets only those events."""
    _hook(syncd, receiver, filters='events = ["paper.revised"]\nkinds = ["doi"]')
    syncd("sync")
    arxiv.amend(NESTPIPE, comment="camera ready")
    syncd("sync")
    arxiv.amend(NESTPIPE, doi="10.1145/7654321")
    syncd("sync")
    (body,) = _bodies(receiver)
    assert body["type"] == "paper.revised"
    assert body["data"]["kinds"] == ["doi"]


def test_webhook_test_command(syncd: Syncd, receiver: Receiver) -> None:
    """`webhooks test NAME` sends a signed webhook.test event that verifies."""
    _hook(syncd, receiver)
    outcome = syncd("webhooks", "test", "lab-chat")
    assert outcome.code == 0, outcome.err
    (received,) = receiver.delivered
    assert received.json["type"] == "webhook.test"
    assert syncd("webhooks", "test", "nobody").code == 2


@ON_BOTH_DATABASES  # issue 29/30's acceptance: on both databases
def test_list_shows_why_a_pending_delivery_waits_and_until_when(
    syncd: Syncd, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delivery that failed and waits for its retry shows, in `webhooks list` and its
    JSON, when the endpoint's first pending delivery is due and the error that holds it."""
    _hook(syncd, receiver, schedule="[3600]", sync_wait=0)
    assert syncd("sync", "--no-deliver").code == 0
    (queued,) = syncd.json("webhooks", "list")
    assert queued["next_attempt_at"] is not None and queued["last_error"] is None  # due, untried
    receiver.always(503)
    _hook(syncd, receiver, schedule="[3600]", sync_wait=2)
    before = datetime.now(UTC)
    assert syncd("sync").code == 0
    (endpoint,) = syncd.json("webhooks", "list")
    assert endpoint["pending"] == 7
    assert endpoint["last_error"].startswith("HTTP 503")
    next_try = datetime.fromisoformat(endpoint["next_attempt_at"])
    # 3600 s with ±20 % jitter after the attempt.
    assert before + timedelta(seconds=2800) < next_try < before + timedelta(seconds=4400)
    monkeypatch.setenv("COLUMNS", "80")
    header, row = syncd("webhooks", "list").out.splitlines()
    assert header.split() == [
        "NAME", "STATE", "PENDING", "DELIVERED", "DEAD", "NEXT", "TRY", "(UTC)", "LAST", "ERROR",
    ]  # fmt: skip
    shown_try = next_try.strftime("%Y-%m-%d %H:%M:%S").split()
    assert row.split()[:7] == ["lab-chat", "active", "7", "0", "0", *shown_try]
    assert row.split()[7].startswith("HTTP")
    assert len(row) <= 80


def test_no_deliver_leaves_the_outbox(syncd: Syncd, receiver: Receiver) -> None:
    """`sync --no-deliver` stores the deliveries and sends nothing."""
    _hook(syncd, receiver)
    assert syncd("sync", "--no-deliver").code == 0
    assert receiver.received == []
    (endpoint,) = syncd.json("webhooks", "list")
    assert endpoint["pending"] == 7
    assert WEBHOOK_SECRET not in json.dumps(endpoint)


# Both databases: leases are renewed and claimed under each dialect's locking.
@ON_BOTH_DATABASES
def test_a_slow_batch_keeps_its_leases(syncd: Syncd, receiver: Receiver) -> None:
    """While a batch is still sending to a slow receiver, no other worker can claim from it.

    Seven sends of 0.4 s on one worker take 2.8 s, well past a 1 s lease: the
    leases of the unsent ones must be renewed, or a second worker would send
    the same deliveries while the first is still at it.
    """
    _hook(syncd, receiver)
    assert syncd("sync", "--no-deliver").code == 0
    receiver.respond_with(204, times=7, delay=0.4)
    storage = Storage(syncd.database_url)
    endpoint = Endpoint(EndpointSpec("lab-chat", receiver.url, "-"), (WEBHOOK_SECRET,), timeout=0.5)
    settings = DeliverySettings(workers=1, lease=1)
    try:
        with Dispatcher(storage.outbox, {"lab-chat": endpoint}, settings) as dispatcher:
            batch = threading.Thread(target=dispatcher.run_once)
            batch.start()
            time.sleep(1.6)
            intruded = storage.outbox.claim("intruder", 60, limit=16)
            batch.join(10)
        assert intruded == []
        assert len(receiver.delivered) == 7
        assert storage.outbox.counts() == (0, 0)
    finally:
        storage.close()


def test_the_database_keeps_no_webhook_url(syncd: Syncd, receiver: Receiver) -> None:
    """Neither the URL, its token nor its path is in the database; `list` shows the host only."""
    token = "T0KEN-in-the-path-9f8e7d"
    _hook(syncd, receiver, url=f"{receiver.url}/services/{token}?key=q5ecret-value")
    assert syncd("sync").code == 0
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.connect() as conn:
            rows = [dict(row._mapping) for row in conn.execute(sa.select(endpoints_table))]
    finally:
        engine.dispose()
    dump = json.dumps(rows, default=str)
    assert token not in dump and "q5ecret" not in dump and "/services" not in dump
    assert len(rows[0]["url_hash"]) == 64
    listed = syncd("webhooks", "list")
    (item,) = syncd.json("webhooks", "list")
    assert item["url"] == f"http://127.0.0.1:{receiver.port}/…"
    assert token not in listed.out and token not in json.dumps(item)


@pytest.fixture
def hostile(receiver_for: StartReceiver) -> Receiver:
    return receiver_for(WEBHOOK_SECRET)


def _beside_a_hostile_one(
    syncd: Syncd, receiver: Receiver, slack: SlackReceiver, hostile: Receiver
) -> None:
    """Three endpoints: healthy standard and Slack ones, and ``hostile``, retried in a minute
    (so the sync, waiting 2 s, leaves its deliveries pending after one attempt)."""
    webhooks = [
        f'[[webhooks]]\nname = "healthy"\nurl = "{receiver.url}"\nsecret = "{WEBHOOK_SECRET}"',
        f'[[webhooks]]\nname = "chat"\nurl = "{slack.url}"\nformat = "slack"',
        f'[[webhooks]]\nname = "hostile"\nurl = "{hostile.url}?key={QUERY_KEY}"\n'
        f'secret = "{WEBHOOK_SECRET}"',
    ]
    delivery = "[delivery]\nretry_schedule = [60]\nsync_wait = 2\npoll_interval = 0.05"
    syncd.sections = "\n\n".join([delivery, *(f"{hook}\ntimeout = 2" for hook in webhooks)])


def _rows(syncd: Syncd) -> dict[str, list[tuple[str, int, str | None]]]:
    """Each endpoint's deliveries: (status, attempts, last_error)."""
    d, e = deliveries_table, endpoints_table
    query = (
        sa.select(e.c.name, d.c.status, d.c.attempts, d.c.last_error)
        .join(e, e.c.id == d.c.endpoint_id)
        .order_by(d.c.id)
    )
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.connect() as conn:
            rows: dict[str, list[tuple[str, int, str | None]]] = {}
            for name, status, attempts, error in conn.execute(query):
                rows.setdefault(name, []).append((status, attempts, error))
            return rows
    finally:
        engine.dispose()


def _assert_the_healthy_got_everything_once(
    syncd: Syncd, receiver: Receiver, slack: SlackReceiver
) -> dict[str, list[tuple[str, int, str | None]]]:
    """Each event reached the healthy endpoints once, recorded delivered; the rows of all."""
    events = syncd.json("events")
    assert sorted(r.msg_id for r in receiver.received) == sorted(e["id"] for e in events)
    assert [r.status_sent for r in slack.received] == [200]
    rows = _rows(syncd)
    assert rows["healthy"] == [("delivered", 1, None)] * 7
    assert rows["chat"] == [("delivered", 1, None)]
    return rows


def test_a_huge_retry_after_touches_only_its_own_endpoint(
    syncd: Syncd, receiver: Receiver, slack: SlackReceiver, hostile: Receiver
) -> None:
    """A receiver answering 429 with a 400-digit Retry-After gets a retry in the schedule's
    time; the healthy endpoints of the same batch get each event once, recorded delivered."""
    _beside_a_hostile_one(syncd, receiver, slack, hostile)
    hostile.always(429, retry_after="9" * 400)
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    rows = _assert_the_healthy_got_everything_once(syncd, receiver, slack)
    assert len(hostile.received) == 7
    assert [(status, attempts) for status, attempts, _ in rows["hostile"]] == [("pending", 1)] * 7
    errors = {error for _, _, error in rows["hostile"]}
    assert errors == {"HTTP 429 Too Many Requests (Retry-After 86400 s): ok"}


def test_a_failure_in_one_delivery_is_its_own_failed_attempt(
    syncd: Syncd,
    receiver: Receiver,
    slack: SlackReceiver,
    hostile: Receiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An exception no one expected, sending to one endpoint, is a failed attempt of that
    endpoint's deliveries, with a log line each; the rest of the batch is sent and recorded."""
    send = WebhookSender.send

    def failing_for_hostile(self: WebhookSender, url: str, *args: Any, **kwargs: Any) -> Any:
        if url.startswith(hostile.url):
            raise RuntimeError(f"a bug that only {url} meets")
        return send(self, url, *args, **kwargs)

    monkeypatch.setattr(WebhookSender, "send", failing_for_hostile)
    _beside_a_hostile_one(syncd, receiver, slack, hostile)
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    rows = _assert_the_healthy_got_everything_once(syncd, receiver, slack)
    assert hostile.received == []
    assert [(status, attempts) for status, attempts, _ in rows["hostile"]] == [("pending", 1)] * 7
    (error,) = {error for _, _, error in rows["hostile"]}
    assert error == "syncd failed to send it: RuntimeError: a bug that only [redacted] meets"
    lines = [json.loads(line) for line in outcome.err.splitlines()]
    failed = [line for line in lines if line["event"] == "delivery_failed"]
    assert len(failed) == 7
    assert all(line["endpoint"] == "hostile" for line in failed)
    assert all(line["error_type"] == "RuntimeError" for line in failed)
    assert QUERY_KEY not in outcome.err


def test_webhooks_test_against_a_huge_retry_after(syncd: Syncd, receiver: Receiver) -> None:
    """`webhooks test` to a 429 asking for 400 digits of seconds: exit 1 and one clean line."""
    _hook(syncd, receiver)
    receiver.always(429, retry_after="9" * 400)
    outcome = syncd("webhooks", "test", "lab-chat")
    assert outcome.code == 1
    assert outcome.err.splitlines()[-1] == (
        "lab-chat: retry: HTTP 429 Too Many Requests (Retry-After 86400 s): ok"
    )
    assert "Traceback" not in outcome.err


def test_the_worker_prunes_delivered_rows_older_than_keep_delivered(database_url: str) -> None:
    """A running worker deletes deliveries delivered more than ``keep_delivered`` ago, a
    digest's list of events with it; recent, pending and dead ones, and events, stay."""
    storage = Storage(database_url)
    upgrade(storage.engine)
    try:
        storage.import_seeds("Zhida Jiang", seed_writes(load_seeds(SEEDS)))
        storage.endpoints.register([EndpointSpec("hook", "http://127.0.0.1:9/hook", "-")])
        now = datetime.now(UTC)
        old, recent = now - timedelta(days=31), now - timedelta(days=29)
        rows = {  # event number: (status, due and delivered, digest id)
            0: ("delivered", old, None),
            1: ("delivered", recent, None),
            2: ("pending", old, None),
            3: ("dead", old, None),
            4: ("delivered", old, "dig_old"),
            5: ("delivered", recent, "dig_recent"),
        }
        seqs = _events_with_deliveries(storage, rows)
        settings = DeliverySettings(keep_delivered=30 * 86400, poll_interval=0.05)
        stop, wake = threading.Event(), threading.Event()
        with Dispatcher(storage.outbox, {}, settings) as dispatcher:
            worker = threading.Thread(target=dispatcher.run, args=(stop, wake))
            worker.start()
            try:
                deadline = time.monotonic() + 30
                while len(_kept(storage)[0]) == len(rows) and time.monotonic() < deadline:
                    time.sleep(0.05)
            finally:
                stop.set()
                wake.set()
                worker.join()
        kept, carried = _kept(storage)
        assert kept == [seqs[n] for n in (1, 2, 3, 5)]
        assert carried == [seqs[5], seqs[6]]  # dig_recent's events; dig_old's went with it
        assert len(storage.events.since()) == 9
        with Dispatcher(storage.outbox, {}, settings.model_copy(update={"keep_delivered": 0})) as d:
            assert d.prune_delivered() == 0  # 0 keeps every row
    finally:
        storage.close()


def _events_with_deliveries(
    storage: Storage, rows: dict[int, tuple[str, datetime, str | None]]
) -> list[int]:
    """An event per seeded paper; the deliveries ``rows`` describes, to the one endpoint, a
    digest carrying its event and the next; return the events' seqs."""
    with storage.engine.begin() as conn:
        t = paper_authors_table
        papers = conn.execute(sa.select(t.c.paper_id.label("id"), t.c.author_id)).all()
        conn.execute(
            events_table.insert(),
            [
                {
                    "id": f"evt_{paper.id:032x}", "type": "paper.added",
                    "created_at": datetime.now(UTC), "author_id": paper.author_id,
                    "paper_id": paper.id, "kinds": [], "changes": {},
                }
                for paper in papers
            ],
        )  # fmt: skip
        events = conn.execute(
            sa.select(events_table.c.seq, events_table.c.paper_id).order_by(events_table.c.seq)
        ).all()
        endpoint = conn.scalar(sa.select(endpoints_table.c.id))
        for number, (status, at, digest) in rows.items():
            event = events[number]
            delivery = conn.execute(
                deliveries_table.insert().returning(deliveries_table.c.id),
                {
                    "event_seq": event.seq, "endpoint_id": endpoint, "paper_id": event.paper_id,
                    "status": status, "attempts": 1, "next_attempt_at": at, "created_at": at,
                    "delivered_at": at if status == "delivered" else None, "digest_id": digest,
                },
            ).scalar_one()  # fmt: skip
            if digest is not None:
                conn.execute(
                    digest_events_table.insert(),
                    [{"delivery_id": delivery, "event_seq": e.seq} for e in events[number:][:2]],
                )
    return [event.seq for event in events]


def _kept(storage: Storage) -> tuple[list[int], list[int]]:
    """The event seqs of the deliveries left, and of the digests' lists left."""
    with storage.engine.connect() as conn:
        kept = conn.scalars(
            sa.select(deliveries_table.c.event_seq).order_by(deliveries_table.c.event_seq)
        ).all()
        carried = conn.scalars(
            sa.select(digest_events_table.c.event_seq).order_by(digest_events_table.c.event_seq)
        ).all()
    return list(kept), list(carried)
