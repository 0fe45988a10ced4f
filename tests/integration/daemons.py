"""Run `syncd run` as real processes for the daemon and replica tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.helpers import WEBHOOK_SECRET, eventually, free_port
from tests.integration.conftest import Syncd
from tests.receiver import Receiver


class Daemon:
    """One `syncd run` subprocess with its HTTP port and log file."""

    def __init__(
        self,
        syncd: Syncd,
        receiver: Receiver,
        *,
        lease: float = 30,
        interval: float = 1,
        endpoint: str = "",
        tables: str = "",
    ) -> None:
        """``endpoint`` holds more keys of the receiver's ``[[webhooks]]`` table (filters),
        ``tables`` more tables of the config (``[publications]``)."""
        self.port = free_port()
        self.log = syncd.workdir / f"daemon-{self.port}.log"
        syncd.sections = f"""
[schedule]
interval = {interval}
jitter = 0

[http]
ready_max_age = 3

[delivery]
lease = {lease}
poll_interval = 0.1
shutdown_grace = 5
retry_schedule = [0.2, 0.2, 0.2, 0.2, 0.2]

[[webhooks]]
name = "ci"
url = "{receiver.url}"
secret = "{WEBHOOK_SECRET}"
timeout = 10
{endpoint}
{tables}
"""
        config = syncd.config
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "syncd", "--config", str(config), "run"],
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, "SYNCD_HTTP_PORT": str(self.port)},
            )
        try:
            eventually(self._healthy, 20, "/healthz")
        except BaseException:
            self.kill()  # no test holds it yet: nothing else would stop it
            raise

    def get(self, path: str) -> httpx.Response:
        return httpx.get(f"http://127.0.0.1:{self.port}{path}", timeout=5)

    def _healthy(self) -> bool:
        assert self.process.poll() is None, self.log.read_text()
        try:
            return self.get("/healthz").status_code == 200
        except httpx.TransportError:
            return False

    def ready(self) -> bool:
        return self.get("/readyz").status_code == 200

    def lines(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def stop(self) -> float:
        """SIGTERM; return how long the process took to exit (asserting exit code 0)."""
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=20) == 0, self.log.read_text()[-3000:]
        return time.monotonic() - started

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)


def start_replicas(
    daemons: list[Daemon], count: int, syncd: Syncd, receiver: Receiver
) -> list[Daemon]:
    """``count`` daemons cycling every second, each put in ``daemons`` once it is up: one
    that fails to start leaves none of those before it running past the test."""
    started: list[Daemon] = []
    for _ in range(count):
        started.append(Daemon(syncd, receiver, interval=1))
        daemons.append(started[-1])
    return started


@pytest.fixture
def daemons() -> Iterator[list[Daemon]]:
    """Daemons a test started; any still running at the end are killed."""
    started: list[Daemon] = []
    yield started
    for daemon in started:
        if daemon.process.poll() is None:
            daemon.kill()
