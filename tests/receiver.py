"""A real webhook receiver on loopback, verifying like an independent consumer would.

Every POST is checked with the ``standardwebhooks`` reference package, never
with syncd's own code, so a signing bug cannot hide behind a matching
verification bug::

    from tests.receiver import Receiver

    with Receiver(["whsec_..."]) as receiver:
        receiver.respond_with(503, retry_after=7)   # the first POST gets 503
        ...  # send to receiver.url
        assert receiver.wait_for(1, timeout=5)      # one verified 2xx delivery

A POST that fails verification is answered 401 and does not use up a scripted
response.  ``go_down`` closes the listening socket (connections are refused)
and cuts open connections; ``come_up`` binds the same port again.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from standardwebhooks import Webhook

from tests.loopback import LoopbackHandler, LoopbackServer

__all__ = ["HOOK_PATH", "Received", "Receiver"]

HOOK_PATH = "/hook"
_DEFAULT_STATUS = 204


@dataclass(frozen=True, slots=True)
class Received:
    """One POST as the receiver saw it.

    ``time`` is ``time.monotonic()`` at arrival; ``status_sent`` is 0 when the
    sender had gone before a (delayed) answer could be written; ``json`` is
    ``None`` when the body is not a JSON object.
    """

    msg_id: str | None
    timestamp: int | None
    body: bytes
    json: dict[str, Any] | None
    verified: bool
    error: str | None
    status_sent: int
    time: float
    path: str = HOOK_PATH
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Answer:
    """A scripted answer (the chat receivers build their own rejections from it)."""

    status: int
    retry_after: str | None = None
    delay: float = 0.0
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None


@dataclass(slots=True)
class _Queued:
    response: Answer
    remaining: int


class Receiver(LoopbackServer):
    """A threaded webhook endpoint on 127.0.0.1; use it as a context manager.

    ``secrets`` are the ones the receiver verifies with (any one matching is
    enough, as during a rotation).  Unscripted POSTs are answered 204.
    """

    def __init__(self, secrets: Sequence[str]) -> None:
        super().__init__(_Handler)
        self._webhooks = [Webhook(secret) for secret in secrets]
        self._received: list[Received] = []
        self._queue: list[_Queued] = []
        self._always = Answer(_DEFAULT_STATUS)
        self._changed = threading.Condition()

    # ---- lifecycle (start, stop, port: LoopbackServer)

    def go_down(self) -> None:
        """Refuse connections from now on (the port stays reserved for ``come_up``)."""
        self.stop()

    def come_up(self) -> None:
        """Accept connections again, on the same port."""
        self.start()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/hook``."""
        return f"http://127.0.0.1:{self.port}{HOOK_PATH}"

    # ---- scripting

    def respond_with(
        self,
        status: int,
        *,
        times: int = 1,
        retry_after: float | str | None = None,
        delay: float = 0.0,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
    ) -> None:
        """Answer the next ``times`` verified POSTs so (after the ones queued before).

        ``retry_after`` is sent as the Retry-After header (seconds, or an HTTP
        date as a string); ``delay`` is waited before answering; ``body``
        replaces the default ``ok``.
        """
        if times < 1:
            raise ValueError("times must be at least 1")
        response = _response(status, retry_after, delay, headers, body)
        with self._changed:
            self._queue.append(_Queued(response, times))

    def always(
        self,
        status: int,
        *,
        retry_after: float | str | None = None,
        delay: float = 0.0,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
    ) -> None:
        """Answer verified POSTs so once the queue is empty (the default is 204)."""
        with self._changed:
            self._always = _response(status, retry_after, delay, headers, body)

    # ---- what arrived

    @property
    def received(self) -> list[Received]:
        """Every POST so far, in order of completion."""
        with self._changed:
            return list(self._received)

    @property
    def delivered(self) -> list[Received]:
        """The verified POSTs that were answered with a 2xx."""
        return [r for r in self.received if _is_delivery(r)]

    def wait_for(self, count: int, timeout: float) -> bool:
        """Block until ``count`` deliveries arrived; ``False`` if ``timeout`` passed first."""

        def enough() -> bool:
            return sum(1 for r in self._received if _is_delivery(r)) >= count

        with self._changed:
            return self._changed.wait_for(enough, timeout)

    # ---- serving (handler threads)

    def _verify(self, body: bytes, headers: dict[str, str]) -> str | None:
        """``None`` when a secret verifies the message, else the last verifier's complaint."""
        error = "the receiver holds no secret"
        for webhook in self._webhooks:
            try:
                webhook.verify(body, headers)
            except Exception as exc:  # the reference package raises several kinds
                error = f"{type(exc).__name__}: {exc}"
            else:
                return None
        return error

    def _rejection(self, error: str) -> Answer:
        """The answer to a POST ``_verify`` refused: 401, as for a bad signature."""
        return Answer(401)

    def _next_response(self) -> Answer:
        with self._changed:
            if not self._queue:
                return self._always
            item = self._queue[0]
            item.remaining -= 1
            if item.remaining == 0:
                self._queue.pop(0)
            return item.response

    def _serve(self, handler: _Handler) -> None:
        arrival = time.monotonic()
        path = urlsplit(handler.path).path
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length > 0 else b""
        headers = {name.lower(): value for name, value in handler.headers.items()}
        error = self._verify(body, headers)
        if path != HOOK_PATH:
            response = Answer(404)
        elif error is not None:
            response = self._rejection(error)
        else:
            response = self._next_response()
        record = Received(
            msg_id=headers.get("webhook-id"),
            timestamp=_int_or_none(headers.get("webhook-timestamp")),
            body=body,
            json=_json_object(body),
            verified=error is None,
            error=error,
            status_sent=response.status,
            time=arrival,
            path=path,
            headers=headers,
        )
        self._answer(handler, response, record)

    def _answer(self, handler: _Handler, response: Answer, record: Received) -> None:
        """Record the POST and write the answer after its delay (status 0 if the sender left)."""
        if response.delay and (
            self._stopping.wait(response.delay) or _peer_closed(handler.connection)
        ):
            handler.close_connection = True
            self._record(dataclasses.replace(record, status_sent=0))
            return
        # Recorded before answering: once the sender has its answer, tests can see the POST.
        index = self._record(record)
        payload = response.body if response.body is not None else (record.error or "ok").encode()
        # RFC 9110 §8.6: 204 and 304 carry no body (a stray one would garble the next answer).
        bodiless = response.status in (204, 304)
        try:
            handler.send_response(response.status)
            headers = dict(response.headers)
            content_type = headers.pop("Content-Type", "text/plain; charset=utf-8")
            if not bodiless:
                handler.send_header("Content-Type", content_type)
                handler.send_header("Content-Length", str(len(payload)))
            if response.retry_after is not None:
                handler.send_header("Retry-After", response.retry_after)
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            if not bodiless:
                handler.wfile.write(payload)
        except OSError:  # the sender went away meanwhile: it never saw the status
            handler.close_connection = True
            with self._changed:
                self._received[index] = dataclasses.replace(record, status_sent=0)

    def _record(self, record: Received) -> int:
        """Append ``record``, wake ``wait_for``; return its index."""
        with self._changed:
            self._received.append(record)
            self._changed.notify_all()
            return len(self._received) - 1


class _Handler(LoopbackHandler):
    server_version = "Receiver/1.0"

    def do_POST(self) -> None:
        self.owner._serve(self)


def _response(
    status: int,
    retry_after: float | str | None,
    delay: float,
    headers: Mapping[str, str] | None,
    body: bytes | None,
) -> Answer:
    if isinstance(retry_after, int | float):
        retry_after = f"{retry_after:g}"
    return Answer(status, retry_after, delay, dict(headers or {}), body)


def _peer_closed(connection: socket.socket) -> bool:
    """Whether the sender closed its side (it gave up waiting) while we were delaying."""
    timeout = connection.gettimeout()
    connection.settimeout(0.0)
    try:
        return connection.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False  # still connected, nothing to read: the sender is waiting
    except OSError:
        return True
    finally:
        connection.settimeout(timeout)


def _is_delivery(received: Received) -> bool:
    return received.verified and 200 <= received.status_sent < 300


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _json_object(body: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
