"""Tests for syncd.httpio: its place in the package, and the capped body read both clients use."""

from __future__ import annotations

import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from syncd.httpio import DeadlineTransport, read_capped


def syncd_modules_loaded_by(module: str) -> set[str]:
    """The ``syncd`` modules a fresh interpreter has loaded after importing ``module``."""
    code = (
        f"import sys, {module}\n"
        "print(' '.join(m for m in sys.modules if m == 'syncd' or m.startswith('syncd.')))"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return set(output.split())


def test_httpio_imports_nothing_else_of_syncd() -> None:
    """httpio loads at most syncd.errors: no configuration, metrics, storage or delivery."""
    assert syncd_modules_loaded_by("syncd.httpio") <= {"syncd", "syncd.httpio", "syncd.errors"}


def test_webhooks_do_not_import_the_arxiv_client() -> None:
    """The webhook sender gets its HTTP helpers from httpio, not from the arXiv client."""
    loaded = syncd_modules_loaded_by("syncd.delivery.sender")
    assert "syncd.httpio" in loaded
    assert not any(m == "syncd.arxiv" or m.startswith("syncd.arxiv.") for m in loaded)


def streamed(*chunks: bytes, then: Exception | None = None) -> httpx.Response:
    """A streamed 200 whose body arrives as ``chunks``, then raises ``then`` if given."""

    def body() -> Iterator[bytes]:
        yield from chunks
        if then is not None:
            raise then

    return httpx.Response(200, content=body())


def test_whole_body_past_the_deadline_is_a_read_timeout() -> None:
    """A body wanted whole that is still arriving at the deadline fails as a ReadTimeout."""
    with pytest.raises(httpx.ReadTimeout):
        read_capped(streamed(b"a", b"b"), 1024, time.monotonic() - 1.0)


def test_whole_body_over_the_limit_is_none() -> None:
    """A body wanted whole that passes the limit is refused (None), not truncated."""
    assert read_capped(streamed(b"a" * 600, b"b" * 600), 1024, time.monotonic() + 60) is None


def test_partial_body_stops_at_the_limit_or_deadline() -> None:
    """A partial read keeps the first ``limit`` bytes, or what came by the deadline."""
    deadline = time.monotonic() + 60
    assert read_capped(streamed(b"a" * 600, b"b" * 600), 1024, deadline, partial=True) == (
        b"a" * 600 + b"b" * 424
    )
    late = read_capped(streamed(b"a", b"b"), 1024, time.monotonic() - 1.0, partial=True)
    assert late == b"a"


def test_partial_body_keeps_what_arrived_before_a_failure() -> None:
    """A connection breaking mid-body leaves a partial read with the bytes already received."""
    response = streamed(b"ab", then=httpx.ReadError("reset"))
    assert read_capped(response, 1024, time.monotonic() + 60, raw=True, partial=True) == b"ab"


def test_transport_loads_the_ca_bundle_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building a DeadlineTransport builds one SSL context (tens of ms each), not two."""
    built: list[ssl.SSLContext] = []
    create = ssl.create_default_context

    def counting(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        built.append(create(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(ssl, "create_default_context", counting)
    DeadlineTransport(httpx.Limits(max_connections=1)).close()
    assert len(built) == 1
