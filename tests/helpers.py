"""Helpers the test modules share: a free port, waiting for a condition, the webhook receiver.

Loaded as a pytest plugin (tests/conftest.py), so its fixtures reach every test:
``receiver`` is a verifying receiver holding ``WEBHOOK_SECRET``, the secret the
tests configure syncd's webhooks with; ``receiver_for(*secrets)`` starts one
holding other secrets (a rotation, a second endpoint); ``slack`` and ``discord``
stand in for the chat platforms.  Each is stopped when the test ends.
``fake_time`` and ``fresh_pacer`` serve the clients tested against a scripted
arXiv (``tests.scriptedarxiv``).
"""

from __future__ import annotations

import base64
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from syncd.sources.arxiv import _pacing
from tests.chatreceiver import DiscordReceiver, SlackReceiver
from tests.receiver import Receiver
from tests.scriptedarxiv import FakeTime

ROOT = Path(__file__).resolve().parents[1]  # the repository
WEBHOOK_SECRET = "whsec_" + base64.b64encode(b"syncd-webhook-test-secret-32byte").decode()

StartReceiver = Callable[..., Receiver]


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def eventually(check: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``check`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def webhook_config(
    url: str,
    *,
    name: str,
    schedule: str,
    sync_wait: float = 10,
    lease: float | None = None,
    endpoint: str = "",
) -> str:
    """A ``[delivery]`` table retrying on ``schedule`` and one ``[[webhooks]]`` endpoint at ``url``.

    ``endpoint`` holds the endpoint's other keys (secret or format, group, filters).
    """
    leasing = f"lease = {lease}" if lease is not None else ""
    return f"""
[delivery]
retry_schedule = {schedule}
sync_wait = {sync_wait}
poll_interval = 0.05
{leasing}

[[webhooks]]
name = "{name}"
url = "{url}"
timeout = 2
{endpoint}
"""


@pytest.fixture
def receiver_for() -> Iterator[StartReceiver]:
    """Start a verifying receiver holding the given secrets; every one stops with the test."""
    with ExitStack() as running:
        yield lambda *secrets: running.enter_context(Receiver(secrets))


@pytest.fixture
def receiver(receiver_for: StartReceiver) -> Receiver:
    """A verifying webhook receiver on 127.0.0.1 holding ``WEBHOOK_SECRET``."""
    return receiver_for(WEBHOOK_SECRET)


@pytest.fixture
def slack() -> Iterator[SlackReceiver]:
    """A stand-in for Slack's incoming webhooks on 127.0.0.1."""
    with SlackReceiver() as running:
        yield running


@pytest.fixture
def discord() -> Iterator[DiscordReceiver]:
    """A stand-in for Discord's webhooks on 127.0.0.1."""
    with DiscordReceiver() as running:
        yield running


@pytest.fixture
def fake_time() -> FakeTime:
    """A clock that moves only when a client sleeps."""
    return FakeTime()


@pytest.fixture
def fresh_pacer() -> Iterator[None]:
    """This process's arXiv pacer and cooldowns, forgotten before and after the test: a
    client built without its own starts from no earlier request."""
    _pacing._PACER.reset()
    _pacing._COOLDOWNS.reset()
    yield
    _pacing._PACER.reset()
    _pacing._COOLDOWNS.reset()
