"""The container image's default command, run here without a container.

The image runs ``syncd run`` on config/container.toml with no arguments, and
must stay up and healthy when arXiv is unreachable, counting the failed cycles
in its logs and metrics, and stop cleanly on SIGTERM before ``docker stop``
would kill it.  This runs the same command line (the Dockerfile's ENTRYPOINT
after tini, and its CMD) on the same config, configured only through the
environment as a container is, with arXiv pointed at a closed loopback port.
Building and running the real image needs podman and minutes; that check is
separate.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers import ROOT, eventually, free_port

pytestmark = pytest.mark.slow


def _image_command() -> list[str]:
    """The Dockerfile's ENTRYPOINT after ``tini --``, then its CMD, with this venv's python."""
    entrypoint: list[str] = []
    command: list[str] = []
    continued = False
    for line in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines():
        keyword, _, args = line.strip().partition(" ")
        if continued:  # e.g. HEALTHCHECK's own CMD on a continuation line
            keyword = ""
        continued = line.rstrip().endswith("\\")
        if keyword == "ENTRYPOINT":
            entrypoint = json.loads(args)
        elif keyword == "CMD":
            command = json.loads(args)
    after_init = entrypoint[entrypoint.index("--") + 1 :]
    assert Path(after_init[0]).name == "syncd", after_init
    return [sys.executable, "-m", "syncd", *after_init[1:], *command]


class Container:
    """`syncd run` as the image starts it, on a loopback port, with arXiv unreachable."""

    def __init__(self, workdir: Path, **overrides: str) -> None:
        self.port = free_port()
        self.log = workdir / "container.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
        env.update(
            SYNCD_CONFIG=str(ROOT / "config" / "container.toml"),
            # what the image's /data volume is to the container
            SYNCD_DATABASE_URL=f"sqlite:///{workdir / 'syncd.sqlite3'}",
            SYNCD_HTTP_HOST="127.0.0.1",
            SYNCD_HTTP_PORT=str(self.port),
            # no network: nothing listens there, every request is refused
            SYNCD_ARXIV_API_URL=f"http://127.0.0.1:{free_port()}/api/query",
            SYNCD_ARXIV_REQUEST_INTERVAL="0",
            SYNCD_ARXIV_MAX_RETRIES="1",
            SYNCD_ARXIV_BACKOFF_BASE="0.01",
            SYNCD_SCHEDULE_INTERVAL="1",
            SYNCD_SCHEDULE_JITTER="0",
        )
        env.update(overrides)
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                _image_command(), stdout=out, stderr=subprocess.STDOUT, env=env, cwd=workdir
            )
        eventually(self.healthy, 30, "/healthz")

    def get(self, path: str) -> httpx.Response:
        return httpx.get(f"http://127.0.0.1:{self.port}{path}", timeout=5)

    def healthy(self) -> bool:
        assert self.process.poll() is None, self.log.read_text()
        try:
            return self.get("/healthz").status_code == 200
        except httpx.TransportError:
            return False

    def lines(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def failed_cycles(self) -> float:
        for line in self.get("/metrics").text.splitlines():
            if line.startswith('syncd_sync_cycles_total{result="failed"}'):
                return float(line.split()[-1])
        return 0.0


@pytest.fixture
def container(tmp_path: Path) -> Iterator[Container]:
    running = Container(tmp_path)
    yield running
    if running.process.poll() is None:
        running.process.kill()
        running.process.wait(timeout=10)


def test_stays_up_and_healthy_without_arxiv_and_stops_on_sigterm(container: Container) -> None:
    eventually(lambda: container.failed_cycles() >= 2, 30, "two failed cycles in /metrics")
    assert container.healthy()
    assert container.lines(), "no JSON log lines on stdout"
    failed = [line for line in container.lines() if line.get("event") == "cycle_failed"]
    assert failed, container.log.read_text()[-3000:]
    metrics = container.get("/metrics").text
    assert "syncd_upstream_requests_total" in metrics
    started = time.monotonic()
    container.process.send_signal(signal.SIGTERM)
    assert container.process.wait(timeout=20) == 0, container.log.read_text()[-3000:]
    # `docker stop` and `podman stop` send SIGKILL after 10 s
    assert time.monotonic() - started < 10


class SilentServer:
    """A TCP listener that accepts connections and never answers: arXiv hanging mid-request."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/api/query"
        self.accepted: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.accepted.append(self.listener.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        self.listener.close()
        for connection in self.accepted:
            connection.close()


def test_sigterm_does_not_wait_for_a_hanging_arxiv_request(tmp_path: Path) -> None:
    """SIGTERM ends the daemon within its grace even while an arXiv request hangs."""
    grace, request_timeout = 1.0, 8.0
    upstream = SilentServer()
    try:
        container = Container(
            tmp_path,
            SYNCD_ARXIV_API_URL=upstream.url,
            SYNCD_ARXIV_TIMEOUT=str(request_timeout),
            SYNCD_DELIVERY_SHUTDOWN_GRACE=str(grace),
        )
        try:
            eventually(lambda: bool(upstream.accepted), 10, "a request to the hanging arXiv")
            started = time.monotonic()
            container.process.send_signal(signal.SIGTERM)
            code = container.process.wait(timeout=request_timeout + 10)
            took = time.monotonic() - started
        finally:
            if container.process.poll() is None:
                container.process.kill()
                container.process.wait(timeout=10)
    finally:
        upstream.close()
    assert code == 0, container.log.read_text()[-3000:]
    assert took < grace + 3, f"exited {took:.1f} s after SIGTERM; shutdown_grace is {grace} s"
