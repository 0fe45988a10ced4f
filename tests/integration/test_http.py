"""Tests for syncd.web.server: the operations endpoints served on loopback, hit with httpx."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from structlog.testing import capture_logs

from syncd import metrics
from syncd.web.asgi import build_app
from syncd.web.ops import Readiness
from syncd.web.server import HttpServer

READY = Readiness(True, {"database": "ok", "last_cycle": "ok: last success 3 s ago"})
UNREADY = Readiness(False, {"database": "unreachable", "last_cycle": "ok: last success 3 s ago"})


class Switch:
    """A ``ready`` callback whose answer the test sets, counting its calls."""

    def __init__(self) -> None:
        self.verdict: Readiness | BaseException = READY
        self.calls = 0
        self.delay = 0.0  # seconds each answer takes, as a slow database would

    def __call__(self) -> Readiness:
        self.calls += 1
        time.sleep(self.delay)
        if isinstance(self.verdict, BaseException):
            raise self.verdict
        return self.verdict


@pytest.fixture
def switch() -> Switch:
    """The readiness the server under test reports."""
    return Switch()


@pytest.fixture
def server(switch: Switch) -> Iterator[HttpServer]:
    """An HttpServer on a free loopback port."""
    with HttpServer("127.0.0.1", 0, ready=switch) as running:
        yield running


@pytest.fixture
def client(server: HttpServer) -> Iterator[httpx.Client]:
    """An httpx client aimed at the server."""
    with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=5.0) as http:
        yield http


def test_metrics(client: httpx.Client) -> None:
    """/metrics serves the registry in Prometheus' text format."""
    metrics.observe_upstream(200)
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert "# TYPE syncd_upstream_requests_total counter" in response.text
    assert 'syncd_upstream_requests_total{status_class="2xx"}' in response.text


def test_healthz_does_not_ask_readiness(client: httpx.Client, switch: Switch) -> None:
    """/healthz answers ok even when unready, without calling the readiness callback."""
    switch.verdict = UNREADY
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"status": "ok"}
    assert switch.calls == 0


def test_readyz_follows_the_callback(client: httpx.Client, switch: Switch) -> None:
    """/readyz goes from 200 to 503 and back as the callback's verdict changes."""
    seen = []
    for verdict in (READY, UNREADY, READY):
        switch.verdict = verdict
        response = client.get("/readyz")
        seen.append((response.status_code, response.json()))
    assert seen == [
        (200, {"status": "ready", "checks": READY.checks}),
        (503, {"status": "unready", "checks": UNREADY.checks}),
        (200, {"status": "ready", "checks": READY.checks}),
    ]


def test_readyz_when_the_callback_raises(client: httpx.Client, switch: Switch) -> None:
    """A raising check makes /readyz 503 without repeating the exception's message."""
    switch.verdict = RuntimeError("password=hunter2 at db.internal")
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["status"] == "unready"
    assert "hunter2" not in response.text
    assert "db.internal" not in response.text


@pytest.mark.parametrize("path", ["/metrics", "/healthz", "/readyz", "/nope"])
def test_head_matches_get_without_a_body(client: httpx.Client, path: str) -> None:
    """HEAD answers with GET's status and headers and no body."""
    get = client.get(path)
    head = client.head(path)
    assert head.status_code == get.status_code
    assert head.headers["content-type"] == get.headers["content-type"]
    assert head.content == b""


def test_unknown_path_is_404_json(client: httpx.Client) -> None:
    """Any other path is a JSON 404."""
    response = client.get("/metrics/extra")
    assert response.status_code == 404
    assert response.json() == {"status": "error", "error": "not found"}


def test_query_strings_are_ignored(client: httpx.Client) -> None:
    """A query string does not change the route."""
    assert client.get("/healthz?verbose=1").json() == {"status": "ok"}


def test_other_methods_are_405(client: httpx.Client) -> None:
    """Writing methods are refused with 405 and an Allow header; with a body, then closed."""
    response = client.post("/readyz", content=b"{}")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"
    assert response.headers["connection"] == "close"
    assert response.json()["status"] == "error"


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_a_body_is_read_before_the_answer(switch: Switch, method: str) -> None:
    """What a client sends of a body at once is taken before the closing answer starts.

    A body still unread when the answer closes the connection makes the
    kernel reset it, which can destroy the answer before the client reads it
    (seen as "connection reset by peer" on a POST's 405 under load).
    """
    pieces = [b"{", b'"a": 1', b"}"]
    events: list[str] = []

    async def receive() -> dict[str, object]:
        body = pieces.pop(0)
        events.append("read")
        return {"type": "http.request", "body": body, "more_body": bool(pieces)}

    async def send(message: dict[str, object]) -> None:
        events.append(str(message["type"]))

    scope = {
        "type": "http",
        "method": method,
        "path": "/healthz",
        "headers": [(b"content-length", b"8")],
        "query_string": b"",
    }
    asyncio.run(build_app(switch)(scope, receive, send))  # type: ignore[arg-type]
    assert events[:4] == ["read", "read", "read", "http.response.start"]


def test_malformed_request_gets_json_without_echo(server: HttpServer) -> None:
    """A malformed request line gets a JSON 400 that echoes nothing back."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5.0) as sock:
        sock.sendall(b"GET /<script> extra HTTP/1.1\r\n\r\n")
        answer = _read_all(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert json.loads(body) == {"status": "error", "error": "bad request"}
    assert b"<script>" not in answer


def test_uvicorns_own_lines_are_syncds_json_lines(
    server: HttpServer, capfd: pytest.CaptureFixture[str]
) -> None:
    """uvicorn's warning about a malformed request comes through structlog, not as plain text."""
    with capture_logs() as logs, socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"GET /<script> extra HTTP/1.1\r\n\r\n")
        _read_all(sock)
    assert {
        "event": "uvicorn",
        "message": "Invalid HTTP request received.",
        "log_level": "debug",
    } in logs
    assert "Invalid HTTP request" not in capfd.readouterr().err


def test_the_default_csp_is_pinned(client: httpx.Client) -> None:
    """Answers that set no policy of their own may not run, embed, be framed or rebase anything."""
    csp = client.get("/healthz").headers["content-security-policy"]
    assert _directives(csp) == {
        "default-src": "'none'",
        "frame-ancestors": "'none'",
        "base-uri": "'none'",
    }


def _directives(csp: str) -> dict[str, str]:
    return dict(d.strip().split(" ", 1) for d in csp.split(";"))


def test_no_python_version_in_server_header(client: httpx.Client) -> None:
    """The Server header names syncd only."""
    assert client.get("/healthz").headers["server"] == "syncd"


def test_stop_is_idempotent_and_frees_the_port(switch: Switch) -> None:
    """stop() twice is fine, and afterwards the port no longer answers."""
    http = HttpServer("127.0.0.1", 0, ready=switch)
    http.start()
    port = http.port
    assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5.0).status_code == 200
    http.stop()
    http.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5.0)


def test_stop_does_not_wait_for_a_kept_alive_connection(switch: Switch) -> None:
    """A client holding its connection open between requests does not hold up stop()."""
    http = HttpServer("127.0.0.1", 0, ready=switch)
    http.start()
    with httpx.Client(base_url=f"http://127.0.0.1:{http.port}", timeout=5.0) as client:
        assert client.get("/healthz").status_code == 200  # the connection stays open
        started = time.monotonic()
        http.stop()
        assert time.monotonic() - started < 2.0


def test_port_before_start_raises(switch: Switch) -> None:
    """Asking for the port of a server never started is an error."""
    with pytest.raises(RuntimeError, match="not been started"):
        _ = HttpServer("127.0.0.1", 0, ready=switch).port


def test_taken_port_raises(server: HttpServer, switch: Switch) -> None:
    """Starting on a port another server holds raises OSError."""
    with pytest.raises(OSError):
        HttpServer("127.0.0.1", server.port, ready=switch).start()


def _closed_unanswered(sock: socket.socket) -> bool:
    """Whether the peer closed (or reset) the connection without sending a byte."""
    try:
        return sock.recv(100) == b""
    except ConnectionResetError:
        return True


def _read_all(sock: socket.socket) -> bytes:
    """Everything the peer sends until it closes the connection."""
    chunks = []
    while chunk := sock.recv(4096):
        chunks.append(chunk)
    return b"".join(chunks)


class TestBounds:
    """What one client, or a crowd of them, can hold of the ops port."""

    def test_idle_connections_beyond_the_limit_are_closed(self, switch: Switch) -> None:
        """With every slot held by an idle client, another is closed unanswered; then it serves."""
        with HttpServer("127.0.0.1", 0, ready=switch, max_connections=4, head_timeout=5) as srv:
            before = threading.active_count()
            idle = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(40)]
            try:
                with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as extra:
                    extra.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
                    assert _closed_unanswered(extra)
                assert threading.active_count() == before  # no thread per connection
            finally:
                for conn in idle:
                    conn.close()
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                try:
                    answer = httpx.get(f"http://127.0.0.1:{srv.port}/healthz", timeout=5)
                except httpx.TransportError:
                    time.sleep(0.05)  # the server has not seen the idle ones go yet
                    continue
                assert answer.status_code == 200
                break
            else:
                pytest.fail("the server did not serve again once the idle clients left")

    def test_an_oversized_head_gets_431(self, server: HttpServer) -> None:
        """A 60 KB header line is refused with 431 after 16 KiB, not buffered whole."""
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as conn:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nX-Pad: " + b"a" * 60_000 + b"\r\n\r\n")
            answer = conn.recv(200)
        assert answer.startswith(b"HTTP/1.1 431")

    def test_a_dripped_head_is_cut_at_the_deadline(self, switch: Switch) -> None:
        """A head dripped a byte at a time is dropped at head_timeout, whatever each read takes."""
        server = HttpServer("127.0.0.1", 0, ready=switch, head_timeout=1.0)
        with server, socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
            started = time.monotonic()
            conn.sendall(b"GET /healthz HTTP/1.1\r\n")
            conn.settimeout(0.1)
            closed = False
            while not closed and time.monotonic() - started < 5:
                try:
                    conn.sendall(b"X")
                    closed = conn.recv(100) == b""
                except TimeoutError:
                    continue  # still open, nothing to read: drip on
                except OSError:
                    closed = True  # reset by the server
            assert closed
            assert time.monotonic() - started < 2.5

    def test_the_limit_is_exact(self, switch: Switch) -> None:
        """With max_connections 4, a fourth connection is served; with four held, a fifth is not."""
        with HttpServer("127.0.0.1", 0, ready=switch, max_connections=4, head_timeout=5) as srv:
            idle = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(3)]
            try:
                with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as fourth:
                    fourth.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
                    assert _read_all(fourth).startswith(b"HTTP/1.1 200")
                idle.append(socket.create_connection(("127.0.0.1", srv.port)))
                with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as fifth:
                    fifth.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
                    assert _closed_unanswered(fifth)
            finally:
                for conn in idle:
                    conn.close()

    def test_a_head_is_counted_across_reads(self, server: HttpServer) -> None:
        """A 20 KB head sent in two writes is refused with 431 like one sent whole."""
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as conn:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-One: " + b"a" * 10_000 + b"\r\n")
            time.sleep(0.2)  # a read of its own
            conn.sendall(b"X-Two: " + b"b" * 10_000 + b"\r\n\r\n")
            answer = _read_all(conn)
        assert answer.startswith(b"HTTP/1.1 431")

    @pytest.mark.parametrize(
        "announced", [b"Content-Length: 1000000", b"Transfer-Encoding: chunked"]
    )
    def test_a_request_announcing_a_body_is_refused(self, switch: Switch, announced: bytes) -> None:
        """No route takes a body: a request announcing one gets 413 and the connection closes."""
        server = HttpServer("127.0.0.1", 0, ready=switch, head_timeout=5)
        with server, socket.create_connection(("127.0.0.1", server.port), timeout=2) as conn:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + announced + b"\r\n\r\n")
            head, _, body = _read_all(conn).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 413")
        assert b"connection: close" in head.lower()
        assert json.loads(body) == {"status": "error", "error": "a request here takes no body"}

    def test_connections_holding_a_body_open_do_not_shut_the_port(self, switch: Switch) -> None:
        """32 clients announcing a body, sending a byte and going silent leave /healthz 200."""
        server = HttpServer("127.0.0.1", 0, ready=switch, head_timeout=1.0)
        with server:
            held = [
                socket.create_connection(("127.0.0.1", server.port), timeout=3) for _ in range(32)
            ]
            try:
                # Every head at once: each answer waits a moment for the body's first piece.
                for conn in held:
                    conn.sendall(
                        b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"
                    )
                for conn in held:
                    assert _read_response(conn).startswith(b"HTTP/1.1 413")
                    with contextlib.suppress(OSError):  # closed already: as it should be
                        conn.sendall(b"a")
                answer = httpx.get(f"http://127.0.0.1:{server.port}/healthz", timeout=3)
                assert answer.status_code == 200
                assert all(_closed_unanswered(conn) for conn in held)
            finally:
                for conn in held:
                    conn.close()

    def test_a_kept_alive_connection_gets_the_deadline_again(self, switch: Switch) -> None:
        """After a slow first answer, a second head begun and left there is cut at the deadline."""
        switch.delay = 1.5  # the deadline armed at connect passes while the route works
        server = HttpServer("127.0.0.1", 0, ready=switch, head_timeout=1.0)
        with server, socket.create_connection(("127.0.0.1", server.port), timeout=5) as conn:
            conn.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _read_response(conn).startswith(b"HTTP/1.1 200")
            answered = time.monotonic()
            conn.sendall(b"G")  # uvicorn's keep-alive timer stops at the first byte
            assert _closed_unanswered(conn)
            assert time.monotonic() - answered < 2.5

    @pytest.mark.parametrize(("sent", "reason"), [(b"", "idle"), (b"GET /heal", "head")])
    def test_a_connection_cut_at_the_deadline_is_counted_and_logged(
        self, switch: Switch, sent: bytes, reason: str
    ) -> None:
        """A connection closed for its deadline counts by the state it was in, and is logged."""
        metric = ("syncd_http_connections_dropped_total", {"reason": f"{reason}_timeout"})
        before = metrics.REGISTRY.get_sample_value(*metric) or 0.0
        server = HttpServer("127.0.0.1", 0, ready=switch, head_timeout=0.5)
        with (
            capture_logs() as logs,
            server,
            socket.create_connection(("127.0.0.1", server.port), timeout=5) as conn,
        ):
            conn.sendall(sent)
            assert _closed_unanswered(conn)
        assert metrics.REGISTRY.get_sample_value(*metric) == before + 1
        dropped = [line for line in logs if line["event"] == "http_connection_dropped"]
        assert dropped == [
            {"event": "http_connection_dropped", "reason": f"{reason}_timeout", "log_level": "info"}
        ]


def _read_response(sock: socket.socket) -> bytes:
    """One response with a Content-Length, leaving the connection open."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, f"closed before a whole head: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(
            line.split(b":", 1)[1]
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
    )
    while len(body) < length:
        body += sock.recv(4096)
    return head + b"\r\n\r\n" + body


class TestUnreadAnswers:
    """A client that asks and then does not read the answer holds nothing for long."""

    BIG = Readiness(True, {"padding": "x" * 8_000_000})  # far beyond every socket buffer

    def _ask(self, port: int) -> socket.socket:
        conn = socket.socket()
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a narrow window
        conn.connect(("127.0.0.1", port))
        conn.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
        return conn

    def test_an_answer_nobody_reads_is_dropped_at_the_deadline(self, switch: Switch) -> None:
        """The answer stalls in the buffers: the connection is cut, counted and logged."""
        switch.verdict = self.BIG
        metric = ("syncd_http_connections_dropped_total", {"reason": "response_timeout"})
        before = metrics.REGISTRY.get_sample_value(*metric) or 0.0
        server = HttpServer("127.0.0.1", 0, ready=switch, head_timeout=0.5)
        with capture_logs() as logs, server, self._ask(server.port) as conn:
            deadline = time.monotonic() + 5
            while (metrics.REGISTRY.get_sample_value(*metric) or 0.0) == before:
                assert time.monotonic() < deadline, "the stalled answer was never dropped"
                time.sleep(0.05)
            conn.settimeout(5)
            received = 0
            with contextlib.suppress(ConnectionResetError):
                while chunk := conn.recv(65536):
                    received += len(chunk)
            assert received < 8_000_000  # cut short, the rest never sent
        assert {"event": "http_connection_dropped", "reason": "response_timeout"} in [
            {k: line[k] for k in ("event", "reason")} for line in logs if "reason" in line
        ]

    def test_an_answer_read_slowly_is_not_cut(self, switch: Switch) -> None:
        """A reader that keeps taking bytes, however slowly, gets the whole answer."""
        switch.verdict = Readiness(True, {"padding": "x" * 3_000_000})
        server = HttpServer("127.0.0.1", 0, ready=switch, head_timeout=1.0)
        with server, self._ask(server.port) as conn:
            conn.settimeout(5)
            received = 0
            started = time.monotonic()
            while chunk := conn.recv(65536):
                received += len(chunk)
                if time.monotonic() - started < 3.5:
                    time.sleep(0.1)  # for three deadlines and more, a little at a time
                if received > 3_000_000:
                    break
        assert received > 3_000_000


def _server_ends(port: int, peer: tuple[str, int]) -> list[socket.socket]:
    """This process's sockets that are the server's end of the connection from ``peer``
    (duplicates, closed by the caller)."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            sock = socket.socket(fileno=os.dup(int(name)))
            try:
                if (
                    sock.family == socket.AF_INET
                    and sock.getsockname()[1] == port
                    and sock.getpeername() == peer
                ):
                    found.append(sock)
                    continue
            except OSError:
                pass  # a listening or unconnected socket has no peer
            sock.close()
    return found


def test_answers_are_sent_without_waiting_for_an_ack(server: HttpServer) -> None:
    """The server's end of each connection has TCP_NODELAY: a small answer goes out at once,
    not after the client's delayed ACK (40 to 50 ms a request)."""
    with socket.create_connection(("127.0.0.1", server.port)) as conn:
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert conn.recv(65536).startswith(b"HTTP/1.1 200")
        (server_end,) = _server_ends(server.port, conn.getsockname())
        with server_end:
            assert server_end.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
