"""Cycle digests: one message per sync cycle and endpoint, with the outbox's guarantees."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakearxiv import FakeArxiv
from tests.integration.conftest import Syncd
from tests.integration.test_delivery import NESTPIPE, SECRET, _bump
from tests.receiver import Receiver
from tests.reliability import ROOT


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver([SECRET]) as running:
        yield running


def _cycle_hook(
    syncd: Syncd,
    receiver: Receiver,
    *,
    schedule: str = "[0.05, 0.05, 0.05]",
    sync_wait: float = 10,
    filters: str = "",
) -> None:
    syncd.sections = f"""
[delivery]
retry_schedule = {schedule}
sync_wait = {sync_wait}
poll_interval = 0.05
lease = 1

[[webhooks]]
name = "lab-digest"
url = "{receiver.url}"
secret = "{SECRET}"
group = "cycle"
timeout = 2
{filters}
"""


def _digest_events(received: Any) -> list[str]:
    return [event["id"] for event in received.json["data"]["events"]]


def test_first_sync_is_one_signed_digest(syncd: Syncd, receiver: Receiver) -> None:
    """Seven linked papers reach a cycle-grouped endpoint as one verified cycle.digest."""
    _cycle_hook(syncd, receiver)
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    assert "1 attempts, 0 pending, 0 dead-lettered" in outcome.out
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
    _bump(arxiv, title="NestPipe, second title")
    assert syncd("sync").code == 0
    _bump(arxiv, abstract="A third abstract.")
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
    assert syncd("webhooks", "redeliver", "--dead").out.strip() == "1 deliveries queued"
    assert syncd("sync").code == 0
    last_event = syncd.json("events")[-1]["id"]
    assert syncd("webhooks", "redeliver", last_event).out.strip() == "1 deliveries queued"
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
