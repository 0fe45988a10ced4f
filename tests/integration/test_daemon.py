"""`syncd run` as a real process: schedule, delivery, health, signals, crashes."""

from __future__ import annotations

import socket
from datetime import UTC, datetime, time

import pytest
import sqlalchemy as sa

from syncd.storage import Storage
from syncd.storage.schema import deliveries_table
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import FakeArxiv, make_record, status
from tests.helpers import WEBHOOK_SECRET, eventually
from tests.integration.conftest import Syncd
from tests.integration.daemons import Daemon
from tests.receiver import Receiver
from tests.scenario import NESTPIPE


def test_daemon_syncs_on_schedule_delivers_and_stops(
    syncd: Syncd, arxiv: FakeArxiv, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """It seeds, syncs on schedule, delivers verified events, and stops cleanly on SIGTERM."""
    daemon = Daemon(syncd, receiver)
    daemons.append(daemon)
    assert receiver.wait_for(7, timeout=20)
    assert daemon.ready()
    arxiv.amend(NESTPIPE, journal_ref="Proc. VLDB 19, 2026")
    assert receiver.wait_for(8, timeout=15)
    last = receiver.delivered[-1].json
    assert last["type"] == "paper.revised"
    assert last["data"]["kinds"] == ["journal_ref"]
    assert all(r.verified for r in receiver.received)
    metrics = daemon.get("/metrics").text
    assert 'syncd_sync_cycles_total{result="ok"}' in metrics
    assert 'syncd_webhook_deliveries_total{outcome="delivered"} 8.0' in metrics
    assert daemon.stop() < 10
    events = [line["event"] for line in daemon.lines()]
    assert events[-1] == "daemon_stopped"
    assert "shutdown_requested" in events
    cycles = [line for line in daemon.lines() if line["event"] == "cycle_finished"]
    assert len(cycles) >= 2  # the schedule ran more than the first cycle


# Both databases: claims and leases are SKIP LOCKED on PostgreSQL.
@ON_BOTH_DATABASES
def test_kill_9_between_claim_and_ack_redelivers(
    syncd: Syncd, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """A delivery claimed by a daemon killed before the 2xx is sent again after the lease."""
    receiver.respond_with(200, delay=8.0)  # the first POST hangs while we kill the sender
    first = Daemon(syncd, receiver, lease=3)
    daemons.append(first)
    engine = sa.create_engine(syncd.database_url)

    def leased() -> bool:
        with engine.connect() as conn:
            query = sa.select(sa.func.count()).where(deliveries_table.c.lease_owner.is_not(None))
            return bool(conn.scalar(query))

    eventually(leased, 20, "a claimed delivery")
    eventually(lambda: len(receiver.received) >= 1 or len(receiver.delivered) >= 6, 10, "sends")
    first.kill()
    with engine.connect() as conn:
        stranded = set(
            conn.scalars(
                sa.select(deliveries_table.c.event_seq).where(
                    deliveries_table.c.lease_owner.is_not(None),
                    deliveries_table.c.status == "pending",
                )
            )
        )
    assert stranded, "the kill must leave a claimed, unacknowledged delivery"
    second = Daemon(syncd, receiver, lease=3)
    daemons.append(second)
    events = syncd.json("events")
    eventually(
        lambda: {r.msg_id for r in receiver.delivered} >= {e["id"] for e in events},
        20,
        "every event delivered",
    )

    def statuses() -> set[str]:
        with engine.connect() as conn:
            return set(conn.scalars(sa.select(deliveries_table.c.status)))

    # The receiver answers before the daemon records the 2xx: give it a moment.
    eventually(lambda: statuses() == {"delivered"}, 10, "every delivery recorded")
    engine.dispose()
    stranded_ids = {e["id"] for e in events if e["seq"] in stranded}
    assert stranded_ids <= {r.msg_id for r in receiver.delivered}
    second.stop()


def test_readyz_follows_failing_cycles(
    syncd: Syncd, arxiv: FakeArxiv, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """/readyz turns 503 when cycles stop succeeding and 200 once they succeed again."""
    daemon = Daemon(syncd, receiver)
    daemons.append(daemon)
    eventually(daemon.ready, 15, "ready")
    arxiv.inject_always(status(500))
    eventually(lambda: not daemon.ready(), 20, "unready")
    body = daemon.get("/readyz").json()
    assert body["checks"]["database"] == "ok"
    arxiv.clear_faults()
    eventually(daemon.ready, 20, "ready again")
    daemon.stop()


def test_a_daemon_with_no_author_yet_is_ready_and_syncs_the_first_one_added(
    syncd: Syncd, arxiv: FakeArxiv, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """Without an [[authors]] table `syncd run` starts, stays ready past ready_max_age
    (nothing to sync is no failure), and syncs an author added at run time."""
    syncd.author_table = False
    arxiv.publish(make_record("2611.01002", authors=("Ada Lovelace", "Charles Babbage")))
    daemon = Daemon(syncd, receiver)
    daemons.append(daemon)
    idle = "ok: no author is followed, nothing to sync"
    eventually(lambda: daemon.get("/readyz").json()["checks"]["last_cycle"] == idle, 15, "idle")
    assert syncd("authors", "add", "Ada Lovelace").code == 0
    eventually(lambda: "2611.01002" in {p["arxiv_id"] for p in syncd.json("papers")}, 20, "sync")
    eventually(daemon.ready, 15, "ready")
    assert daemon.get("/readyz").json()["checks"]["last_cycle"].startswith("ok: last success")
    daemon.stop()


# SQLite cannot refuse a connection it already has open: PostgreSQL only.
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_readyz_follows_the_database(
    syncd: Syncd, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """/readyz turns 503 when PostgreSQL refuses connections and 200 when it is back."""
    daemon = Daemon(syncd, receiver)
    daemons.append(daemon)
    eventually(daemon.ready, 15, "ready")
    name = sa.engine.make_url(syncd.database_url).database
    admin = sa.create_engine(
        sa.engine.make_url(syncd.database_url).set(database="postgres"),
        isolation_level="AUTOCOMMIT",
    )
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false'))
            conn.execute(
                sa.text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = :name AND pid <> pg_backend_pid()"
                ),
                {"name": name},
            )
        eventually(lambda: not daemon.ready(), 15, "unready")
        assert daemon.get("/readyz").json()["checks"]["database"] == "unreachable"
        assert daemon.get("/healthz").status_code == 200
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true'))
        admin.dispose()
    eventually(daemon.ready, 15, "ready again")
    daemon.stop()


def test_secrets_stay_out_of_logs(syncd: Syncd, receiver: Receiver, daemons: list[Daemon]) -> None:
    """The daemon's logs and HTTP answers never contain the webhook secret."""
    daemon = Daemon(syncd, receiver)
    daemons.append(daemon)
    assert receiver.wait_for(7, timeout=20)
    seen = daemon.get("/metrics").text + daemon.get("/readyz").text
    daemon.stop()
    key = WEBHOOK_SECRET.removeprefix("whsec_")
    assert key not in daemon.log.read_text() + seen


def test_http_port_in_use_exits_1_with_one_line(syncd: Syncd) -> None:
    """A port another process holds stops `syncd run` at once: exit 1, one line, no traceback."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        syncd.sections = f"[http]\nport = {port}\n"
        outcome = syncd("run")
    assert outcome.code == 1
    reason = "Address already in use (see [http])"
    assert outcome.err == f"syncd: error: cannot serve HTTP on 127.0.0.1:{port}: {reason}\n"


def test_readyz_includes_the_harvester_when_on(
    syncd: Syncd, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """With ``[harvest] enabled``, /readyz reports the harvester beside the cycles."""
    # Daemon() writes the sections; the extra lines follow [[authors]] in the file.
    syncd.extra += f'\n[harvest]\nenabled = true\nurl = "{syncd.arxiv.oai_url}"\n'
    daemon = Daemon(syncd, receiver)
    daemons.append(daemon)
    eventually(daemon.ready, 15, "ready")
    checks = daemon.get("/readyz").json()["checks"]
    assert checks["last_harvest"].startswith("starting: no successful harvest yet")
    daemon.stop()


def test_metrics_show_a_harvest_run_by_hand(
    syncd: Syncd, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """A `syncd harvest` beside a running daemon shows in the daemon's /metrics, as /readyz
    and the database know it, not as 0."""
    syncd.extra += (
        f'\n[harvest]\nenabled = true\nurl = "{syncd.arxiv.oai_url}"\ncron = "0 0 1 1 *"\n'
    )
    daemon = Daemon(syncd, receiver)
    daemons.append(daemon)
    eventually(daemon.ready, 15, "ready")
    assert "syncd_last_successful_harvest_timestamp_seconds " not in daemon.get("/metrics").text
    outcome = syncd("harvest", "--from", syncd.arxiv.oai.today.isoformat())
    assert outcome.code == 0, outcome.err
    storage = Storage(syncd.database_url)
    try:
        state = storage.harvests.state()
    finally:
        storage.close()
    assert state.last_success_at is not None and state.from_date is not None
    scraped = {
        line.split()[0]: float(line.split()[1])
        for line in daemon.get("/metrics").text.splitlines()
        if line.startswith("syncd_") and "harvest" in line and "timestamp" in line
    }
    assert scraped == {
        "syncd_last_successful_harvest_timestamp_seconds": state.last_success_at.timestamp(),
        "syncd_harvest_from_timestamp_seconds": datetime.combine(
            state.from_date, time(), UTC
        ).timestamp(),
    }
    assert daemon.get("/readyz").json()["checks"]["last_harvest"].startswith("ok: last success")
    daemon.stop()
