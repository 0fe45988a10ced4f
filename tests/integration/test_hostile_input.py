"""Hostile and malformed input through the real CLI: a clear error, the right exit, no damage.

Upstream bodies are served where arXiv's answer belongs (on SQLite; on
PostgreSQL too where the databases once differed), after a good baseline sync
and with a real change waiting upstream, so a cycle that wrongly trusted a body
would have something to store.  Bodies
too big for the fake (which materialises its answers) come from a small
loopback server of this module that streams them from a generator.

Config and seed files are the other untrusted input: each bad one exits 2 with
a message naming the key, or the file and line, and writes nothing.

tests/integration/test_faults.py already checks that an entity bomb, a
quadratic blow-up, a file entity and an HTML page fail the cycle; here the same
bodies are held to more: the message says what was wrong, and nothing of
/etc/passwd or of an entity's expansion reaches the output or the database.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qsl, urlsplit

import pytest
import sqlalchemy as sa

from syncd.cli import main
from syncd.config import ArxivSettings
from syncd.sources.seeds import MAX_SEED_BYTES
from syncd.storage.schema import metadata, papers_table, sync_runs_table
from tests import fakearxiv as fa
from tests import scenario
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import FakeArxiv
from tests.integration.conftest import SEEDS, Outcome, Syncd
from tests.scenario import NESTPIPE

MiB = 1 << 20
GiB = 1 << 30
DEFAULT_CAP = ArxivSettings().max_response_bytes


def _passwd_line() -> str:
    """The first line of /etc/passwd: what an expanded file entity would leak first."""
    with contextlib.suppress(OSError, IndexError):
        return Path("/etc/passwd").read_text(encoding="utf-8").splitlines()[0]
    return "root:x:0:0:"


PASSWD_LINE = _passwd_line()
# Fragments that must never surface: a file entity's content, an entity bomb's expansion.
LEAKS = (PASSWD_LINE, "root:x:0:0", "lollollol", "a" * 200)


# --------------------------------------------------------------------------- helpers


@dataclass
class _Repointed(Syncd):
    """The harness with ``arxiv.api_url`` pointed elsewhere and, optionally, another size cap."""

    api_url: str | None = None
    max_response_bytes: int | None = None
    timeout: float | None = None

    @property
    def config(self) -> Path:
        path = super().config
        text = path.read_text(encoding="utf-8")
        if self.api_url is not None:
            text = text.replace(f'api_url = "{self.arxiv.url}"', f'api_url = "{self.api_url}"')
        if self.max_response_bytes is not None:
            cap = f"max_response_bytes = {self.max_response_bytes}"
            text = text.replace("[arxiv]\n", f"[arxiv]\n{cap}\n", 1)
        if self.timeout is not None:
            text = text.replace("timeout = 0.5\n", f"timeout = {self.timeout}\n", 1)
        path.write_text(text, encoding="utf-8")
        return path


def _repointed(
    syncd: Syncd,
    api_url: str,
    max_response_bytes: int | None = None,
    timeout: float | None = None,
) -> _Repointed:
    state = {f.name: getattr(syncd, f.name) for f in fields(Syncd)}
    return _Repointed(
        **state, api_url=api_url, max_response_bytes=max_response_bytes, timeout=timeout
    )


@dataclass(frozen=True)
class _Before:
    counts: dict[str, int]
    papers: dict[str, Any]


def _baseline(syncd: Syncd, arxiv: FakeArxiv) -> _Before:
    """A good sync, then a new version of NestPipe upstream: a change a bad cycle could store."""
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    before = _Before(syncd.counts(), syncd.papers())
    current = arxiv.current(NESTPIPE)
    arxiv.publish(replace(current, version=2, updated=None, title="NestPipe, revised"))
    return before


def _database_text(url: str) -> str:
    """Every row of every table, as text."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return "\n".join(
                repr(tuple(row))
                for table in metadata.sorted_tables
                for row in conn.execute(table.select())
            )
    finally:
        engine.dispose()


def _last_run_error(url: str) -> str:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            query = sa.select(sync_runs_table.c.error).order_by(sync_runs_table.c.id.desc())
            return str(conn.scalar(query))
    finally:
        engine.dispose()


def _failure_line(outcome: Outcome) -> str:
    lines = [line for line in outcome.err.splitlines() if ": FAILED: " in line]
    assert len(lines) == 1, outcome.err
    return lines[0]


def _assert_failed_cleanly(syncd: Syncd, before: _Before, outcome: Outcome, message: str) -> None:
    """Exit 1, one FAILED line saying ``message``, the run failed, nothing stored or leaked."""
    assert outcome.code == 1, outcome.err
    line = _failure_line(outcome)
    assert line.startswith(f"{scenario.AUTHOR}: FAILED: ")
    assert message in line
    assert len(line) < 600  # a message, not a dump of the body
    assert syncd.last_run_status() == "failed"
    assert message in _last_run_error(syncd.database_url)
    after = syncd.counts()
    assert after["revisions"] == before.counts["revisions"]
    assert after["events"] == before.counts["events"]
    assert syncd.papers() == before.papers
    everything = "\n".join((outcome.out, outcome.err, _database_text(syncd.database_url)))
    for leak in LEAKS:
        assert leak not in everything


def _assert_recovers(syncd: Syncd, before: _Before) -> None:
    """Once upstream behaves, the change made during the fault arrives, exactly once."""
    assert syncd("sync").code == 0
    events = syncd.json("events")[before.counts["events"] :]
    assert [(e["type"], e["kinds"]) for e in events] == [("paper.revised", ["version", "title"])]


def _with_doctype(feed: bytes, doctype: bytes) -> bytes:
    """``feed`` with ``doctype`` right after its XML declaration."""
    declaration, rest = feed.split(b"\n", 1)
    return b"\n".join((declaration, doctype, rest))


_SAMPLE = fa.make_record(
    "2606.00001", published="2026-06-01T12:00:00Z", updated="2026-06-01T12:00:00Z"
)
# A valid one-entry feed in arXiv's current format: what is wrong with a variant is what was added.
VALID_FEED = fa.render_feed([_SAMPLE], id_list="2606.00001", now=datetime(2026, 6, 1, tzinfo=UTC))
NGINX_HTML_WITH_DOCTYPE = b"<!DOCTYPE html>\r\n" + fa.HTML_PROXY_PAGE

DTD_REFUSED = "declares a DOCTYPE or entities"
# name -> (body, Content-Type, what the FAILED line must say)
HOSTILE_BODIES: dict[str, tuple[bytes, str, str]] = {
    "billion-laughs": (fa.BILLION_LAUGHS, fa.ATOM_CONTENT_TYPE, DTD_REFUSED),
    "quadratic-blowup": (fa.QUADRATIC_BLOWUP, fa.ATOM_CONTENT_TYPE, DTD_REFUSED),
    "external-entity-file": (fa.EXTERNAL_ENTITY_FILE, fa.ATOM_CONTENT_TYPE, DTD_REFUSED),
    "external-entity-http": (fa.EXTERNAL_ENTITY_HTTP, fa.ATOM_CONTENT_TYPE, DTD_REFUSED),
    "external-dtd-file": (
        _with_doctype(VALID_FEED, b'<!DOCTYPE feed SYSTEM "file:///etc/passwd">'),
        fa.ATOM_CONTENT_TYPE,
        DTD_REFUSED,
    ),
    "parameter-entity-file": (
        _with_doctype(
            VALID_FEED, b'<!DOCTYPE feed [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]>'
        ),
        fa.ATOM_CONTENT_TYPE,
        DTD_REFUSED,
    ),
    "doctype-on-a-valid-feed": (
        _with_doctype(VALID_FEED, b"<!DOCTYPE feed>"),
        fa.ATOM_CONTENT_TYPE,
        DTD_REFUSED,
    ),
    "dtd-only": (
        b'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE feed [\n  <!ELEMENT feed ANY>\n]>\n',
        fa.ATOM_CONTENT_TYPE,
        DTD_REFUSED,
    ),
    "invalid-utf8": (
        b"\xff\xfe\xc3\x28 not UTF-8 \xa0\xa1",
        fa.ATOM_CONTENT_TYPE,
        "not well-formed XML (not UTF-8: byte 0xff at offset 0)",
    ),
    "utf16-feed": (
        VALID_FEED.decode().replace("UTF-8", "UTF-16").encode("utf-16"),
        fa.ATOM_CONTENT_TYPE,
        "not well-formed XML (not UTF-8: byte 0xff at offset 0)",
    ),
    "html-proxy-page": (fa.HTML_PROXY_PAGE, "text/html", "it looks like an HTML page"),
    "html-proxy-page-with-doctype": (
        NGINX_HTML_WITH_DOCTYPE,
        "text/html; charset=utf-8",
        "it looks like an HTML page",
    ),
    "json-as-atom": (
        b'{"error": "upstream timed out", "status": 504}',
        fa.ATOM_CONTENT_TYPE,
        "it looks like JSON",
    ),
    "empty-body": (b"", fa.ATOM_CONTENT_TYPE, "the response body is empty"),
}


@pytest.mark.parametrize("name", HOSTILE_BODIES.keys())
def test_hostile_body_fails_the_cycle_cleanly(syncd: Syncd, arxiv: FakeArxiv, name: str) -> None:
    """A hostile body exits 1 naming the problem, the run is failed, nothing is stored or leaked."""
    body, content_type, message = HOSTILE_BODIES[name]
    before = _baseline(syncd, arxiv)
    arxiv.inject(fa.body(body, content_type=content_type))
    outcome = syncd("sync")
    _assert_failed_cleanly(syncd, before, outcome, message)
    assert not arxiv.pending_faults  # refused at once: a permanent failure is not retried
    _assert_recovers(syncd, before)


@pytest.mark.parametrize(
    "doctype",
    [
        b'<!DOCTYPE feed [<!ENTITY xxe SYSTEM "{url}">]>',
        b'<!DOCTYPE feed SYSTEM "{url}">',
        b'<!DOCTYPE feed [<!ENTITY % p SYSTEM "{url}"> %p;]>',
    ],
    ids=["entity", "external-subset", "parameter-entity"],
)
def test_external_http_references_are_never_fetched(
    syncd: Syncd, arxiv: FakeArxiv, doctype: bytes
) -> None:
    """An entity or DTD on a loopback URL is refused and that URL never sees a connection."""
    before = _baseline(syncd, arxiv)
    with socket.create_server(("127.0.0.1", 0)) as canary:
        url = f"http://127.0.0.1:{canary.getsockname()[1]}/passwd".encode()
        body = _with_doctype(VALID_FEED, doctype.replace(b"{url}", url))
        if b"xxe" in doctype:
            body = body.replace(b"<title>On the", b"<title>&xxe; On the", 1)
        arxiv.inject(fa.body(body))
        outcome = syncd("sync")
        canary.setblocking(False)
        with pytest.raises(BlockingIOError):
            canary.accept()
    _assert_failed_cleanly(syncd, before, outcome, DTD_REFUSED)


# --------------------------------------------------------------------------- a loopback server

Responder = Callable[[str], tuple[int, dict[str, str], Iterable[bytes]]]


class _Loopback:
    """A loopback HTTP server answering every GET with ``respond(path)``'s status, headers, chunks.

    Bodies are written as the iterable yields them (chunked unless a
    Content-Length is given), so a generator can stand for an endless or
    gigabyte body that never exists in memory.  ``sent`` counts the body bytes
    the kernel accepted before the client hung up.
    """

    def __init__(self, respond: Responder) -> None:
        self.respond = respond
        self.sent = 0
        self.requests = 0
        self.hang_ups = 0
        self.stalls = 0
        self._busy = 0
        self._idle = threading.Condition()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                outer._serve(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/api/query"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.wait_idle()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Wait until every response has been written or abandoned, so ``sent`` is final."""
        with self._idle:
            assert self._idle.wait_for(lambda: self._busy == 0, timeout), "a response never ended"

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        with self._idle:
            self._busy += 1
            self.requests += 1
        chunks: Iterable[bytes] = ()
        try:
            status, headers, chunks = self.respond(handler.path)
            handler.connection.settimeout(10)
            chunked = "Content-Length" not in headers
            handler.send_response(status)
            for name, value in headers.items():
                handler.send_header(name, value)
            if chunked:
                handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            for chunk in chunks:
                if not chunk:
                    continue
                if chunked:
                    handler.wfile.write(b"%x\r\n" % len(chunk))
                handler.wfile.write(chunk)
                if chunked:
                    handler.wfile.write(b"\r\n")
                with self._idle:
                    self.sent += len(chunk)
            if chunked:
                handler.wfile.write(b"0\r\n\r\n")
        except TimeoutError:
            handler.close_connection = True
            with self._idle:
                self.stalls += 1
        except OSError:  # BrokenPipeError, ConnectionResetError: the client hung up
            handler.close_connection = True
            with self._idle:
                self.hang_ups += 1
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
            with self._idle:
                self._busy -= 1
                self._idle.notify_all()


_PROLOG = b'<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
_FILLER = (b"<!-- " + b"x" * 1010 + b" -->\n") * 64  # 65,536 bytes


def _endless() -> Iterator[bytes]:
    yield _PROLOG
    while True:
        yield _FILLER


def _sized(total: int) -> Iterator[bytes]:
    yield _PROLOG
    remaining = total - len(_PROLOG)
    while remaining > 0:
        piece = _FILLER[:remaining]
        remaining -= len(piece)
        yield piece


def _gzip_bomb(total: int) -> Iterator[bytes]:
    """A feed's start and newlines up to ``total`` bytes, gzip-compressed (~1000:1) as sent."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    yield compressor.compress(_PROLOG)
    block = b"\n" * MiB
    for _ in range(total // MiB):
        yield compressor.compress(block)
    yield compressor.flush()


def _streaming(status: int, body: Callable[[], Iterator[bytes]], **headers: str) -> Responder:
    def respond(path: str) -> tuple[int, dict[str, str], Iterable[bytes]]:
        return status, {"Content-Type": fa.ATOM_CONTENT_TYPE, **headers}, body()

    return respond


@dataclass(frozen=True)
class _Huge:
    cap: int
    respond: Responder
    message: str
    # Bytes the server may have handed to the kernel: the cap, plus loopback socket buffers.
    max_sent: int
    # Peak Python heap during the cycle: what the client may hold at once.
    max_heap: int


HUGE_BODIES = {
    # An endless chunked body: the client must count, and stop at the cap.
    "endless-chunked": _Huge(
        MiB,
        _streaming(200, _endless),
        "exceeds arxiv.max_response_bytes (1048576 bytes)",
        max_sent=64 * MiB,
        max_heap=16 * MiB,
    ),
    # 1 GB announced by Content-Length: refused before reading a byte of it.
    "declared-1GB": _Huge(
        MiB,
        _streaming(200, lambda: _sized(GiB), **{"Content-Length": str(GiB)}),
        "exceeds arxiv.max_response_bytes (1048576 bytes)",
        max_sent=64 * MiB,
        max_heap=16 * MiB,
    ),
    # 4xx bodies are read too (arXiv's error feed comes with 400): under the same cap.
    "endless-404": _Huge(
        MiB,
        _streaming(404, _endless),
        "arXiv answered HTTP 404",
        max_sent=64 * MiB,
        max_heap=16 * MiB,
    ),
    # 5xx bodies are never read; the retries each hang up at once.
    "endless-503": _Huge(
        MiB,
        _streaming(503, _endless),
        "last failure: HTTP 503",
        max_sent=3 * 64 * MiB,
        max_heap=16 * MiB,
    ),
    # 1 GB once inflated, ~1 MiB on the wire (so the bytes sent tell little; the heap
    # does).  The cap counts decoded bytes, but httpx inflates a whole network read
    # (up to 64 KiB, ~64 MiB of newlines) before the client can count it, so the
    # heap may briefly hold one such piece beyond the cap.
    "gzip-bomb-1GB": _Huge(
        MiB,
        _streaming(200, lambda: _gzip_bomb(GiB), **{"Content-Encoding": "gzip"}),
        "exceeds arxiv.max_response_bytes (1048576 bytes)",
        max_sent=GiB // 64,
        max_heap=MiB + 80 * MiB,
    ),
}


def _measured(call: Callable[[], Outcome]) -> tuple[Outcome, float, int]:
    """``call()``, its wall time, and the peak of the Python heap while it ran."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        outcome = call()
    finally:
        elapsed = time.monotonic() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return outcome, elapsed, peak


@pytest.mark.parametrize("name", HUGE_BODIES.keys())
def test_huge_body_is_cut_off_at_the_cap(syncd: Syncd, arxiv: FakeArxiv, name: str) -> None:
    """A body far beyond max_response_bytes fails fast, naming the cap, in bounded memory."""
    case = HUGE_BODIES[name]
    before = _baseline(syncd, arxiv)
    with _Loopback(case.respond) as server:
        hostile = _repointed(syncd, server.url, case.cap)
        outcome, elapsed, peak = _measured(lambda: hostile("sync"))
        server.wait_idle()
    _assert_failed_cleanly(syncd, before, outcome, case.message)
    assert elapsed < 30
    assert server.stalls == 0  # the client hung up; it never just stopped reading
    assert server.sent < case.max_sent, f"{server.sent / MiB:.1f} MiB sent"
    assert peak < case.max_heap, f"{peak / MiB:.1f} MiB heap"
    _assert_recovers(syncd, before)


def test_default_cap_stops_a_body_three_times_its_size(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """With the default cap, an undeclared body of three times the cap is read only to the cap."""
    before = _baseline(syncd, arxiv)
    with _Loopback(_streaming(200, lambda: _sized(3 * DEFAULT_CAP))) as server:
        # 64 MiB must arrive before the timeout, on a machine busy with other tests too.
        hostile = _repointed(syncd, server.url, timeout=30)
        outcome, elapsed, peak = _measured(lambda: hostile("sync"))
        server.wait_idle()
    message = f"exceeds arxiv.max_response_bytes ({DEFAULT_CAP} bytes)"
    _assert_failed_cleanly(syncd, before, outcome, message)
    assert elapsed < 60
    assert server.hang_ups == 1
    assert DEFAULT_CAP < server.sent < DEFAULT_CAP + 64 * MiB, f"{server.sent / MiB:.1f} MiB"
    assert peak < 2 * DEFAULT_CAP, f"{peak / MiB:.1f} MiB heap"
    _assert_recovers(syncd, before)


# --------------------------------------------------------------------------- header vs. body


def _proxy(
    arxiv: FakeArxiv, content_type: str, transform: Callable[[bytes], bytes] | None = None
) -> Responder:
    """The fake's own answer to each request, sent as ``content_type``, its body transformed."""

    def respond(path: str) -> tuple[int, dict[str, str], Iterable[bytes]]:
        params = dict(parse_qsl(urlsplit(path).query, keep_blank_values=True))
        status, body = arxiv.respond(params)
        if transform is not None:
            body = transform(body)
        headers = {"Content-Type": content_type, "Content-Length": str(len(body))}
        return status, headers, [body]

    return respond


def test_valid_atom_with_wrong_content_type_is_judged_by_its_body(
    syncd: Syncd, arxiv: FakeArxiv
) -> None:
    """Valid Atom labelled text/plain is accepted: the body is judged, never the Content-Type.

    syncd never reads Content-Type; every body, whatever its label, must pass
    the same checks (no DTD, an Atom <feed>, OpenSearch counters that add up),
    so a mislabelled but genuine answer is used and a well-labelled hostile one
    is refused (see test_hostile_body_fails_the_cycle_cleanly).
    """
    before = _baseline(syncd, arxiv)
    with _Loopback(_proxy(arxiv, "text/plain; charset=us-ascii")) as server:
        outcome = _repointed(syncd, server.url)("sync")
    assert outcome.code == 0, outcome.err
    assert server.requests >= 2
    events = syncd.json("events")[before.counts["events"] :]
    assert [(e["type"], e["kinds"]) for e in events] == [("paper.revised", ["version", "title"])]
    assert syncd("sync").code == 0  # and the real thing agrees: nothing more to report
    assert len(syncd.json("events")) == len(events) + before.counts["events"]


def _break_first_entry_title(body: bytes) -> bytes:
    """The feed with an invalid UTF-8 sequence at the start of the first entry's title."""
    at = body.index(b"<title>", body.index(b"<entry>")) + len(b"<title>")
    return body[:at] + b"\xc3\x28" + body[at:]


def test_invalid_utf8_inside_a_valid_feed_fails_the_cycle(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """One invalid UTF-8 sequence in an otherwise valid page fails the cycle, naming UTF-8."""
    before = _baseline(syncd, arxiv)
    with _Loopback(_proxy(arxiv, fa.ATOM_CONTENT_TYPE, _break_first_entry_title)) as server:
        outcome = _repointed(syncd, server.url)("sync")
    _assert_failed_cleanly(syncd, before, outcome, "not well-formed XML (not UTF-8: byte 0xc3 at")
    assert server.requests == 1
    _assert_recovers(syncd, before)


def _in_first_entry(old: bytes, new: bytes) -> Callable[[bytes], bytes]:
    """A transform replacing the first ``old`` inside the feed's first entry with ``new``."""

    def transform(body: bytes) -> bytes:
        at = body.index(old, body.index(b"<entry>"))
        return body[:at] + new + body[at + len(old) :]

    return transform


# name -> (what changes in the first entry of every page, what the FAILED line must say)
MALFORMED_ENTRIES: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "markup-in-a-title": (
        _in_first_entry(b"<title>", b"<title>Paper <b>bold</b> 2401.00002 "),
        "is malformed: it has child elements inside <title>",
    ),
    "summary-holding-only-an-element": (
        _in_first_entry(b"<summary>", b"<summary><p/>"),
        "is malformed: it has child elements inside <summary>",
    ),
    "a-second-title": (
        _in_first_entry(b"<title>", b"<title>Another title</title><title>"),
        "is malformed: it has more than one <title>",
    ),
    "a-second-updated": (
        _in_first_entry(b"<updated>", b"<updated>2031-01-01T00:00:00Z</updated><updated>"),
        "is malformed: it has more than one <updated>",
    ),
    "a-second-arxiv-comment": (
        _in_first_entry(
            b"<title>", b"<arxiv:comment>a</arxiv:comment><arxiv:comment>b</arxiv:comment><title>"
        ),
        "is malformed: it has more than one <arxiv:comment>",
    ),
}


@pytest.mark.parametrize("name", MALFORMED_ENTRIES.keys())
def test_malformed_entry_fails_the_cycle(syncd: Syncd, arxiv: FakeArxiv, name: str) -> None:
    """Markup in a text field or a repeated single-valued element refuses the whole answer."""
    transform, message = MALFORMED_ENTRIES[name]
    before = _baseline(syncd, arxiv)
    with _Loopback(_proxy(arxiv, fa.ATOM_CONTENT_TYPE, transform)) as server:
        outcome = _repointed(syncd, server.url)("sync")
    _assert_failed_cleanly(syncd, before, outcome, message)
    assert "Traceback" not in outcome.err
    assert server.requests == 1  # refused at once: a malformed answer is not retried
    _assert_recovers(syncd, before)


def _first_entry_id(arxiv_id: str) -> Callable[[bytes], bytes]:
    """A transform giving the feed's first entry the id ``arxiv_id``."""

    def transform(body: bytes) -> bytes:
        start = body.index(b"<id>", body.index(b"<entry>")) + len(b"<id>")
        end = body.index(b"</id>", start)
        return body[:start] + f"http://arxiv.org/abs/{arxiv_id}".encode() + body[end:]

    return transform


# name -> (the id the first entry gets, what the FAILED line must say)
BAD_IDS: dict[str, tuple[str, str]] = {
    # Once an OverflowError traceback on SQLite that left the run "running".
    "version-beyond-64-bits": (
        f"{NESTPIPE}v99999999999999999999",
        "version 99999999999999999999 is not between 1 and 1000",
    ),
    # Once stored on SQLite and "integer out of range" on PostgreSQL.
    "version-beyond-32-bits": (f"{NESTPIPE}v3000000000", "version 3000000000 is not between"),
    "version-0": (f"{NESTPIPE}v0", "version 0 is not between 1 and 1000"),
    # Once stored and announced as paper.added on SQLite, and refused by PostgreSQL.
    "archive-of-300-letters": ("a" * 300 + "/0601001v1", f"{'a' * 40!r} is not an arXiv archive"),
    "month-13": ("2613.00001v1", "2613 has no month 13"),
    "4-digit-number-after-2014": ("2604.0695v1", "4-digit numbers are from 0704 to 1412"),
}


# Both databases: these ids once went through on one database and failed on the other.
@ON_BOTH_DATABASES
@pytest.mark.parametrize("name", BAD_IDS.keys())
def test_impossible_id_fails_the_cycle(syncd: Syncd, arxiv: FakeArxiv, name: str) -> None:
    """An id outside arXiv's scheme or version range refuses the answer alike on both databases."""
    arxiv_id, reason = BAD_IDS[name]
    before = _baseline(syncd, arxiv)
    with _Loopback(_proxy(arxiv, fa.ATOM_CONTENT_TYPE, _first_entry_id(arxiv_id))) as server:
        outcome = _repointed(syncd, server.url)("sync")
    _assert_failed_cleanly(syncd, before, outcome, f"not an arXiv id: {reason}")
    assert "Traceback" not in outcome.err
    assert server.requests == 1
    _assert_recovers(syncd, before)


# --------------------------------------------------------------------------- config files


AUTHOR_TABLE = f'[[authors]]\nname = "{scenario.AUTHOR}"\n'
GOOD_HOOK = '[[webhooks]]\nurl = "http://127.0.0.1:9/hook"\nsecret = "whsec_c2VjcmV0"\n'
UNSET_SECRET = "SYNCD_TEST_HOSTILE_UNSET_SECRET"


@pytest.fixture
def run_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[[Path], Outcome]:
    """Runs `syncd seed` with a config path; a database, if ever reached, lives in tmp_path."""
    monkeypatch.chdir(tmp_path)  # should a bad config pass, its default database lands here
    for name in [n for n in os.environ if n.startswith("SYNCD_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("SYNCD_DATABASE_URL", f"sqlite:///{tmp_path / 'never.sqlite3'}")
    monkeypatch.delenv(UNSET_SECRET, raising=False)

    def run(config: Path) -> Outcome:
        capsys.readouterr()
        code = main(["--config", str(config), "seed"])
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return run


def _write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "syncd.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _assert_config_refused(outcome: Outcome, *needles: str) -> None:
    assert outcome.code == 2, outcome.err
    assert outcome.err.startswith("syncd: error: ")
    for needle in needles:
        assert needle in outcome.err
    assert outcome.out == ""


# (document, the key the message must name)
UNKNOWN_KEYS = {
    "top-level-scalar": ("surprise = 1\n" + AUTHOR_TABLE, "surprise: Extra inputs"),
    "top-level-table": (AUTHOR_TABLE + "[surprise]\nx = 1\n", "surprise: Extra inputs"),
    **{
        f"in-{section}": (
            AUTHOR_TABLE + f"[{section}]\nunknown_knob = 1\n",
            f"{section}.unknown_knob: Extra inputs",
        )
        for section in ("arxiv", "database", "sync", "log", "schedule", "http", "delivery")
    },
    "subtable-of-arxiv": (AUTHOR_TABLE + "[arxiv.proxy]\nurl = 'x'\n", "arxiv.proxy: Extra inputs"),
    "in-authors": (AUTHOR_TABLE + "nmae = 'typo'\n", "authors[0].nmae: Extra inputs"),
    "in-second-author": (
        AUTHOR_TABLE + "[[authors]]\nname = 'B'\nseed = []\n",
        "authors[1].seed: Extra inputs",
    ),
    "in-webhooks": (AUTHOR_TABLE + GOOD_HOOK + "sekret = 'x'\n", "webhooks[0].sekret: Extra"),
}


@pytest.mark.parametrize("case", UNKNOWN_KEYS.keys())
def test_unknown_key_at_any_level_exits_2_naming_it(
    run_cli: Callable[[Path], Outcome], tmp_path: Path, case: str
) -> None:
    """An unknown key, top-level, in any section, author or webhook, exits 2 naming its path."""
    document, needle = UNKNOWN_KEYS[case]
    path = _write_config(tmp_path, document)
    _assert_config_refused(run_cli(path), str(path), needle)


WRONG_TYPES = {
    "arxiv.max_response_bytes": "[arxiv]\nmax_response_bytes = '64MB'\n",
    "arxiv.timeout": "[arxiv]\ntimeout = [30]\n",
    "arxiv.api_url": "[arxiv]\napi_url = 42\n",
    "database.migrate": "[database]\nmigrate = 'yes please'\n",
    "delivery.retry_schedule[1]": "[delivery]\nretry_schedule = [5, 'later']\n",
    "http.port": "[http]\nport = 'eighty'\n",
    "log.level": "[log]\nlevel = 3\n",
    "schedule.cron": "[schedule]\ncron = 5\n",
    "sync.removal_after": "[sync]\nremoval_after = 2.5\n",
    "authors[0].seeds": "seeds = 'one.txt'\n",
    "authors[0].include_ids[0]": "include_ids = [2401]\n",
    "authors[0].query": "query = {au = 'x'}\n",
    "webhooks[0].timeout": GOOD_HOOK + "timeout = 'fast'\n",
    "webhooks[0].events": GOOD_HOOK + "events = 'paper.added'\n",
    "webhooks[0].kinds": GOOD_HOOK + "kinds = ['everything']\n",
}


@pytest.mark.parametrize("key", WRONG_TYPES.keys())
def test_wrong_type_in_a_nested_table_exits_2_naming_the_key(
    run_cli: Callable[[Path], Outcome], tmp_path: Path, key: str
) -> None:
    """A value of the wrong type anywhere in the tree exits 2 naming its dotted path."""
    path = _write_config(tmp_path, AUTHOR_TABLE + WRONG_TYPES[key])
    _assert_config_refused(run_cli(path), str(path), f"  {key}: ")


def test_section_of_the_wrong_type_exits_2_naming_it(
    run_cli: Callable[[Path], Outcome], tmp_path: Path
) -> None:
    """A section given as a scalar instead of a table exits 2 naming it."""
    path = _write_config(tmp_path, "arxiv = 5\n" + AUTHOR_TABLE)
    _assert_config_refused(run_cli(path), "  arxiv: Input should be a valid dictionary")


MISSING_SECRETS = {
    "secret-env-unset": (
        f"secret_env = '{UNSET_SECRET}'\n",
        ("webhooks[0]", f"environment variable {UNSET_SECRET} (secret_env) is not set"),
    ),
    "secret-env-blank": (
        "secret_env = 'SYNCD_TEST_HOSTILE_BLANK_SECRET'\n",
        ("webhooks[0]", "SYNCD_TEST_HOSTILE_BLANK_SECRET (secret_env) is not set"),
    ),
    "no-secret-at-all": ("", ("webhooks[0]", "give exactly one of 'secret' and 'secret_env'")),
    "both-secrets": (
        "secret = 'whsec_c2VjcmV0'\nsecret_env = 'HOME'\n",
        ("webhooks[0]", "give exactly one of 'secret' and 'secret_env'"),
    ),
    "empty-secret": ("secret = ''\n", ("webhook secret is empty",)),
    "not-base64": ("secret = 'whsec_!!!'\n", ("webhook secret is not valid base64",)),
}


@pytest.mark.parametrize("case", MISSING_SECRETS.keys())
def test_missing_or_bad_webhook_secret_exits_2(
    run_cli: Callable[[Path], Outcome],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
) -> None:
    """A webhook without a usable secret exits 2 saying which secret is missing or bad."""
    monkeypatch.setenv("SYNCD_TEST_HOSTILE_BLANK_SECRET", "  \n")
    lines, needles = MISSING_SECRETS[case]
    hook = "[[webhooks]]\nurl = 'http://127.0.0.1:9/hook'\n" + lines
    outcome = run_cli(_write_config(tmp_path, AUTHOR_TABLE + hook))
    _assert_config_refused(outcome, *needles)
    assert "whsec_c2VjcmV0" not in outcome.err


@pytest.mark.parametrize("secret", ["''", "[]"], ids=["empty-string", "empty-list"])
def test_empty_secret_names_the_webhook(
    run_cli: Callable[[Path], Outcome], tmp_path: Path, secret: str
) -> None:
    """An empty secret exits 2 naming webhooks[0].secret."""
    hook = f"[[webhooks]]\nurl = 'http://127.0.0.1:9/hook'\nsecret = {secret}\n"
    outcome = run_cli(_write_config(tmp_path, AUTHOR_TABLE + hook))
    _assert_config_refused(outcome, "webhooks[0].secret")


@pytest.mark.parametrize("url", ["http://", "http://[bad/", "http://h:99999/"])
def test_malformed_webhook_url_names_the_key(
    run_cli: Callable[[Path], Outcome], tmp_path: Path, url: str
) -> None:
    """A webhook URL without a usable host or port exits 2 naming webhooks[0].url."""
    hook = f"[[webhooks]]\nurl = '{url}'\nsecret = 'whsec_c2VjcmV0'\n"
    path = _write_config(tmp_path, AUTHOR_TABLE + hook)
    _assert_config_refused(run_cli(path), str(path), "webhooks[0].url")


@pytest.mark.parametrize("key", ["include_ids", "exclude_ids"])
@pytest.mark.parametrize(
    ("arxiv_id", "reason"),
    [
        ("2401.00002v99999999999999999999", "version 99999999999999999999 is not between"),
        ("2401.00002v0", "version 0 is not between 1 and 1000"),
        ("2413.00001", "2413 has no month 13"),
        ("a" * 300 + "/0601001", "is not an arXiv archive"),
    ],
    ids=["huge-version", "version-0", "month-13", "long-archive"],
)
def test_impossible_id_in_config_exits_2(
    run_cli: Callable[[Path], Outcome], tmp_path: Path, key: str, arxiv_id: str, reason: str
) -> None:
    """An include or exclude id outside arXiv's scheme exits 2 naming the key and the reason."""
    path = _write_config(tmp_path, AUTHOR_TABLE + f'{key} = ["2401.00001", "{arxiv_id}"]\n')
    _assert_config_refused(run_cli(path), str(path), f"authors[0].{key}: ", reason)


@pytest.mark.parametrize(
    "url",
    [
        "http://[fe80::1%25eth0]/hook",
        "http://[fe80::1%25no-such-interface]:8080/",
        "HTTP://[fe80::1]/",
    ],
)
def test_blocked_literal_with_a_zone_id_or_any_scheme_case_exits_2(
    run_cli: Callable[[Path], Outcome], tmp_path: Path, url: str
) -> None:
    """A link-local literal exits 2 at start naming webhooks[0].url, with a zone id or HTTP://."""
    hook = f"[[webhooks]]\nurl = '{url}'\nsecret = 'whsec_c2VjcmV0'\n"
    path = _write_config(tmp_path, AUTHOR_TABLE + hook)
    _assert_config_refused(
        run_cli(path), str(path), "webhooks[0].url: destination fe80::1", "link-local/metadata"
    )


def test_uppercase_scheme_is_an_http_url(
    run_cli: Callable[[Path], Outcome], tmp_path: Path
) -> None:
    """HTTP:// is accepted: URL schemes are case-insensitive."""
    hook = "[[webhooks]]\nurl = 'HTTP://127.0.0.1:9/hook'\nsecret = 'whsec_c2VjcmV0'\n"
    outcome = run_cli(_write_config(tmp_path, AUTHOR_TABLE + hook))
    assert outcome.code == 0, outcome.err


def test_seed_path_with_a_nul_byte_exits_2(
    run_cli: Callable[[Path], Outcome], tmp_path: Path
) -> None:
    """A seed path holding a NUL byte exits 2 naming the key, not a traceback."""
    config = _write_config(tmp_path, AUTHOR_TABLE + 'seeds = ["/nowhere/a\\u0000b.txt"]\n')
    outcome = run_cli(config)
    assert outcome.code == 2, outcome.err
    assert "authors[0].seeds" in outcome.err
    assert "NUL" in outcome.err


def _directory(tmp_path: Path) -> Path:
    path = tmp_path / "syncd.toml"
    path.mkdir()
    return path


def _under_a_file(tmp_path: Path) -> Path:
    (tmp_path / "plain").write_text("x", encoding="utf-8")
    return tmp_path / "plain" / "syncd.toml"


def _symlink_loop(tmp_path: Path) -> Path:
    path = tmp_path / "syncd.toml"
    path.symlink_to(tmp_path / "other.toml")
    (tmp_path / "other.toml").symlink_to(path)
    return path


def _not_utf8(tmp_path: Path) -> Path:
    path = tmp_path / "syncd.toml"
    path.write_bytes(AUTHOR_TABLE.encode() + b"# caf\xe9\n")
    return path


# Paths root cannot read either (tests run as root, so chmod 000 proves nothing).
UNREADABLE: dict[str, tuple[Callable[[Path], Path], str]] = {
    "a-directory": (_directory, "cannot read config file"),
    "under-a-regular-file": (_under_a_file, "cannot read config file"),
    "symlink-loop": (_symlink_loop, "cannot read config file"),
    "not-utf8": (_not_utf8, "cannot read config file"),
    "missing": (lambda tmp_path: tmp_path / "nowhere.toml", "config file not found"),
}


@pytest.mark.parametrize("case", UNREADABLE.keys())
def test_unreadable_config_exits_2_naming_the_file(
    run_cli: Callable[[Path], Outcome], tmp_path: Path, case: str
) -> None:
    """A config path that cannot be read as a text file exits 2 naming the path and why."""
    make, needle = UNREADABLE[case]
    path = make(tmp_path)
    _assert_config_refused(run_cli(path), str(path), needle)


# --------------------------------------------------------------------------- numbers out of range


# Values that validated and then broke a command: (document, the key the message names).
OUT_OF_RANGE = {
    "timeout-inf": ("[arxiv]\ntimeout = inf\n", "arxiv.timeout"),
    "timeout-1e308": ("[arxiv]\ntimeout = 1e308\n", "arxiv.timeout"),
    "timeout-nan": ("[arxiv]\ntimeout = nan\n", "arxiv.timeout"),
    "request-interval": ("[arxiv]\nrequest_interval = 1e308\n", "arxiv.request_interval"),
    "backoff-base": ("[arxiv]\nbackoff_base = 1e9\n", "arxiv.backoff_base"),
    "backoff-max": ("[arxiv]\nbackoff_max = inf\n", "arxiv.backoff_max"),
    "max-response-bytes": (
        "[arxiv]\nmax_response_bytes = 1099511627776\n",
        "arxiv.max_response_bytes",
    ),
    "removal-after": ("[sync]\nremoval_after = 9223372036854775807\n", "sync.removal_after"),
    "interval-inf": ("[schedule]\ninterval = inf\n", "schedule.interval"),
    "jitter": ("[schedule]\njitter = 1e300\n", "schedule.jitter"),
    "ready-max-age": ("[http]\nready_max_age = 1e300\n", "http.ready_max_age"),
    "lease": ("[delivery]\nlease = 1e300\n", "delivery.lease"),
    "poll-interval": ("[delivery]\npoll_interval = inf\n", "delivery.poll_interval"),
    "sync-wait": ("[delivery]\nsync_wait = 1e300\n", "delivery.sync_wait"),
    "shutdown-grace": ("[delivery]\nshutdown_grace = 1e300\n", "delivery.shutdown_grace"),
    "retry-negative": ("[delivery]\nretry_schedule = [5, -1]\n", "delivery.retry_schedule[1]"),
    "retry-huge": ("[delivery]\nretry_schedule = [1e300]\n", "delivery.retry_schedule[0]"),
    "webhook-timeout": (GOOD_HOOK + "timeout = 1e300\n", "webhooks[0].timeout"),
}


@pytest.mark.parametrize("case", OUT_OF_RANGE.keys())
def test_number_out_of_range_exits_2_naming_the_key(
    run_cli: Callable[[Path], Outcome], tmp_path: Path, case: str
) -> None:
    """An infinite, nan or absurdly large number exits 2 naming its key, not later as a crash."""
    document, key = OUT_OF_RANGE[case]
    path = _write_config(tmp_path, AUTHOR_TABLE + document)
    _assert_config_refused(run_cli(path), str(path), f"  {key}: ")


def test_number_out_of_range_in_the_environment_exits_2(
    run_cli: Callable[[Path], Outcome], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An environment override is held to the same range as the file."""
    monkeypatch.setenv("SYNCD_SCHEDULE_JITTER", "1e300")
    _assert_config_refused(run_cli(_write_config(tmp_path, AUTHOR_TABLE)), "  schedule.jitter: ")


BAD_CRONS = {
    "minute-99": ("99 * * * *", "higher than the maximum value (59)"),
    "day-0": ("0 0 0 * *", "lower than the minimum value (1)"),
    "weekday-name": ("0 0 * * funday", "Invalid weekday name"),
    "february-31": ("0 0 31 2 *", "never fires"),
}


@pytest.mark.parametrize("case", BAD_CRONS.keys())
def test_bad_cron_exits_2_naming_schedule_cron(
    run_cli: Callable[[Path], Outcome], tmp_path: Path, case: str
) -> None:
    """A crontab line APScheduler refuses, or one that never fires, exits 2 naming schedule.cron."""
    cron, reason = BAD_CRONS[case]
    path = _write_config(tmp_path, AUTHOR_TABLE + f'[schedule]\ncron = "{cron}"\n')
    _assert_config_refused(run_cli(path), str(path), "  schedule.cron: ", reason)


# URLs that validated and then failed (a traceback) or lost everything: (url, reason).
BAD_DATABASE_URLS = {
    "sqlite-memory-bare": ("sqlite://", "in-memory SQLite"),
    "sqlite-memory-named": ("sqlite:///:memory:", "in-memory SQLite"),
    "sqlite-memory-uri": ("sqlite:///file::memory:?uri=true", "in-memory SQLite"),
    "sqlite-mode-memory": ("sqlite:///x.db?mode=memory&uri=true", "in-memory SQLite"),
    "port-not-a-number": (
        "postgresql://syncd:hunter2secret@127.0.0.1:notaport/x",
        "not a URL SQLAlchemy can parse",
    ),
    "port-out-of-range": ("postgresql://syncd:hunter2secret@127.0.0.1:99999/x", "out of range"),
}


@pytest.mark.parametrize(
    ("case", "where"),
    [
        (case, where)
        for case in BAD_DATABASE_URLS
        for where in ("file", "environment")
        # In the file a relative SQLite path is resolved: file::memory: becomes a file.
        if (case, where) != ("sqlite-memory-uri", "file")
    ],
)
def test_unusable_database_url_exits_2_naming_database_url(
    run_cli: Callable[[Path], Outcome],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    where: str,
) -> None:
    """An in-memory SQLite or unparseable URL exits 2 naming database.url, and the file or the
    variable it came from, never the password."""
    url, reason = BAD_DATABASE_URLS[case]
    if where == "file":
        monkeypatch.delenv("SYNCD_DATABASE_URL")
        path = _write_config(tmp_path, f'[database]\nurl = "{url}"\n' + AUTHOR_TABLE)
        source = str(path)
    else:
        monkeypatch.setenv("SYNCD_DATABASE_URL", url)
        path = _write_config(tmp_path, AUTHOR_TABLE)
        source = "environment variable SYNCD_DATABASE_URL"
    outcome = run_cli(path)
    _assert_config_refused(outcome, source, "  database.url: ", reason)
    assert "hunter2secret" not in outcome.err


# --------------------------------------------------------------------------- seed files


def _seed_bytes(path: Path) -> bytes:
    return path.read_bytes()


def _truncated(data: bytes) -> bytes:
    text = data.decode()
    return text[: text.rindex("cs.DC↗")].encode()  # the last record loses its category


def _duplicated(data: bytes) -> bytes:
    """The last record once more, and a count that agrees, so only the repetition is wrong."""
    paragraphs = data.decode().replace("9 records", "10 records").split("\n\n")
    return "\n\n".join([*paragraphs, *paragraphs[-4:]]).encode()


# name -> (the broken page's bytes, the line the message names)
BAD_SEEDS: dict[str, tuple[bytes, int]] = {
    "empty": (b"", 1),
    "only-a-bom-and-blank-lines": (b"\xef\xbb\xbf\r\n\r\n", 1),
    "binary": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", 1),
    "nul-inside-text": (_seed_bytes(SEEDS[0]).replace(b"arXiv2026", b"arXiv\x002026", 1), 9),
    "invalid-utf8": (_seed_bytes(SEEDS[0]).replace(b"LRMoE", b"LR\xffMoE", 1), 11),
    "truncated": (_truncated(_seed_bytes(SEEDS[0])), 73),
    "duplicated-record": (_duplicated(_seed_bytes(SEEDS[0])), 81),
}


# Both databases: PostgreSQL refuses a NUL byte in text that SQLite stores.
@ON_BOTH_DATABASES
@pytest.mark.parametrize("case", BAD_SEEDS.keys())
def test_bad_seed_file_exits_2_and_writes_nothing(syncd: Syncd, tmp_path: Path, case: str) -> None:
    """A broken seed file among good ones exits 2 naming file and line, and imports nothing."""
    content, line = BAD_SEEDS[case]
    bad = tmp_path / "000_broken.txt"
    bad.write_bytes(content)
    syncd.seeds = (bad, SEEDS[1])
    for command in ("seed", "sync"):
        outcome = syncd(command)
        assert outcome.code == 2, outcome.err
        assert f"{bad}:{line}: " in outcome.err
        assert syncd.counts() == {"revisions": 0, "events": 0, "runs": 0}
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.connect() as conn:
            assert conn.scalar(sa.select(sa.func.count()).select_from(papers_table)) == 0
    finally:
        engine.dispose()


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "000_fifo.txt"
    os.mkfifo(path)  # nobody ever writes to it: opening it to read would wait forever
    return path


def _dev_zero_link(tmp_path: Path) -> Path:
    path = tmp_path / "000_zero.txt"
    path.symlink_to("/dev/zero")
    return path


def _seed_directory(tmp_path: Path) -> Path:
    path = tmp_path / "000_folder.txt"
    path.mkdir()
    return path


def _oversize(tmp_path: Path) -> Path:
    path = tmp_path / "000_huge.txt"
    path.write_bytes(b"x" * (MAX_SEED_BYTES + 1))
    return path


# name -> (makes the seed path, what the message says about it)
UNREADABLE_SEEDS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "fifo": (_fifo, "not a regular file (a FIFO)"),
    "dev-zero": (lambda _: Path("/dev/zero"), "not a regular file (a character device)"),
    "link-to-dev-zero": (_dev_zero_link, "not a regular file (a character device)"),
    "directory": (_seed_directory, "not a regular file (a directory)"),
    "over-the-size-limit": (_oversize, "the file is larger than the 4 MiB (4194304 bytes)"),
}


@pytest.mark.timeout(20)
@pytest.mark.parametrize("case", UNREADABLE_SEEDS.keys())
def test_seed_that_is_not_a_small_regular_file_exits_2_at_once(
    syncd: Syncd, tmp_path: Path, case: str
) -> None:
    """A FIFO, device, folder or oversize seed exits 2 at once naming it, importing nothing."""
    make, reason = UNREADABLE_SEEDS[case]
    bad = make(tmp_path)
    syncd.seeds = (SEEDS[0], bad)
    for command in ("seed", "sync"):
        started = time.monotonic()
        outcome = syncd(command)
        assert time.monotonic() - started < 5
        assert outcome.code == 2, outcome.err
        assert outcome.err.startswith(f"syncd: error: {bad}: {reason}")
        assert outcome.err.count("\n") == 1  # one line, no traceback
        assert syncd.counts() == {"revisions": 0, "events": 0, "runs": 0}


def _crlf_bom(data: bytes) -> bytes:
    return b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n")


def test_seeds_with_crlf_and_bom_import_the_same(syncd: Syncd, tmp_path: Path) -> None:
    """Seed files saved with a BOM and CRLF line ends import exactly the papers of the originals."""
    assert syncd("seed").code == 0
    expected = syncd.papers()
    copies = []
    for source in SEEDS:
        copy = tmp_path / source.name
        copy.write_bytes(_crlf_bom(source.read_bytes()))
        copies.append(copy)
    syncd.seeds = tuple(copies)
    outcome = syncd("seed")
    assert outcome.code == 0, outcome.err
    assert "0 seed papers imported" in outcome.out
    assert syncd.papers() == expected


def test_same_records_in_a_second_document_add_nothing(syncd: Syncd, tmp_path: Path) -> None:
    """A seed page repeated under another file name links every record: nothing is added."""
    assert syncd("seed").code == 0
    counts, papers = syncd.counts(), syncd.papers()
    copy = tmp_path / "000a_copy.txt"
    copy.write_bytes(SEEDS[0].read_bytes())
    syncd.seeds = (SEEDS[0], copy, SEEDS[1])
    outcome = syncd("seed")
    assert outcome.code == 0, outcome.err
    assert syncd.counts() == counts
    assert syncd.papers() == papers
