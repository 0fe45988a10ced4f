"""Webhook destinations through the real CLI: blocked addresses, DNS at send time, redirects."""

from __future__ import annotations

import json
import time

import pytest

from syncd.delivery import sender
from tests.helpers import WEBHOOK_SECRET
from tests.integration.conftest import Syncd
from tests.receiver import Receiver

BLOCKED = (
    "destination hooks.test resolves to 169.254.169.254, which is blocked"
    " (link-local/metadata); allow it with [delivery] allow_destinations"
)


class Dns:
    """Stands in for the system resolver; ``hooks.test`` exists only here."""

    def __init__(self) -> None:
        self.answers: dict[str, list[str]] = {}

    def __call__(self, host: str, port: int) -> list[str]:
        if host not in self.answers:
            raise OSError(f"[Errno -2] Name or service not known: {host}")
        return list(self.answers[host])


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> Dns:
    """The resolver every WebhookSender of the CLI uses during the test."""
    fake = Dns()
    monkeypatch.setattr(sender, "resolve_host", fake)
    return fake


def _hook(syncd: Syncd, url: str, *, schedule: str = "[0.05, 0.05]", allow: str = "") -> None:
    syncd.sections = f"""
[delivery]
retry_schedule = {schedule}
sync_wait = 10
poll_interval = 0.05
{allow}

[[webhooks]]
name = "lab-chat"
url = "{url}"
secret = "{WEBHOOK_SECRET}"
timeout = 2
"""


def test_blocked_literal_stops_every_command(syncd: Syncd) -> None:
    """A webhook at 169.254.169.254 is a configuration error (exit 2) naming webhooks[0].url."""
    _hook(syncd, "http://169.254.169.254/latest/meta-data/")
    for command in (["sync"], ["papers"], ["webhooks", "list"]):
        outcome = syncd(*command)
        assert outcome.code == 2
        assert (
            "webhooks[0].url: destination 169.254.169.254 is blocked (link-local/metadata);"
            " allow it with [delivery] allow_destinations"
        ) in outcome.err


def test_allowed_literal_loads(syncd: Syncd) -> None:
    """With the network in allow_destinations the same config is accepted."""
    _hook(
        syncd,
        "http://169.254.169.254/latest/meta-data/",
        allow='allow_destinations = ["169.254.169.0/24"]',
    )
    outcome = syncd("webhooks", "list", "--json")
    assert outcome.code == 0, outcome.err
    assert json.loads(outcome.out)[0]["url"] == "http://169.254.169.254/…"


def test_name_resolving_to_metadata_is_dead_lettered_then_recovers(
    syncd: Syncd, receiver: Receiver, dns: Dns
) -> None:
    """A name resolving to a metadata address dead-letters unsent, and delivers once DNS changes."""
    dns.answers["hooks.test"] = ["169.254.169.254"]
    _hook(syncd, f"http://hooks.test:{receiver.port}/hook")
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    assert "0 pending, 7 dead-lettered" in outcome.out
    lines = [json.loads(line) for line in outcome.err.splitlines() if line.startswith("{")]
    attempts = [line for line in lines if line["event"] == "webhook_attempt"]
    assert len(attempts) == 21
    assert {(a["outcome"], a["status"], a["error"]) for a in attempts} == {("retry", None, BLOCKED)}
    dead = [line for line in lines if line["event"] == "delivery_dead_lettered"]
    assert len(dead) == 7 and {d["error"] for d in dead} == {BLOCKED}
    assert receiver.received == []

    test = syncd("webhooks", "test", "lab-chat")
    assert test.code == 1
    assert BLOCKED in test.err

    # hooks.test exists nowhere else: delivering proves the connection goes to
    # the address the guard checked.
    dns.answers["hooks.test"] = ["127.0.0.1"]
    assert syncd("webhooks", "redeliver", "--dead").out.strip() == "7 deliveries queued"
    assert syncd("sync").code == 0
    assert len(receiver.delivered) == 7
    assert {r.headers["host"] for r in receiver.delivered} == {f"hooks.test:{receiver.port}"}


@pytest.mark.parametrize("status", [301, 302, 307])
def test_redirects_to_a_second_receiver_are_never_followed(
    syncd: Syncd, receiver: Receiver, status: int
) -> None:
    """Deliveries redirected to a second receiver dead-letter, and the second sees no request."""
    with Receiver([WEBHOOK_SECRET]) as second:
        receiver.always(status, headers={"Location": second.url})
        _hook(syncd, receiver.url, schedule="[0.05]")
        outcome = syncd("sync")
        assert outcome.code == 0, outcome.err
        assert "0 pending, 7 dead-lettered" in outcome.out
        time.sleep(0.2)  # a followed redirect would have arrived by now
        assert second.received == []
    assert len(receiver.received) == 14
    assert f"redirects are not followed (Location: {second.url})" in outcome.err
