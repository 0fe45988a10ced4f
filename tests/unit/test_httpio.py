"""Tests for syncd.httpclient: its place in the package, the capped body read both clients use,
and the headers they read from a remote, which no value may make raise."""

from __future__ import annotations

import math
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncd.httpclient import (
    MAX_RETRY_AFTER,
    DeadlineTransport,
    parse_http_date,
    parse_retry_after,
    read_capped,
    response_time,
    retry_seconds,
)

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
# An HTTP-date whose year (or hour, or zone) does not fit a C long: email.utils
# raises OverflowError for it, where a year past 9999 is a ValueError.
HUGE_YEAR = "Mon, 01 Jan 99999999999999999999999 00:00:00 GMT"
HUGE_HOUR = "Mon, 01 Jan 2026 99999999999999999999:00:00 GMT"
HUGE_ZONE = "Mon, 01 Jan 2026 00:00:00 +99999999999999999999"


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


def test_httpclient_imports_nothing_else_of_syncd() -> None:
    """httpclient loads at most syncd.errors: no configuration, metrics, storage or delivery."""
    assert syncd_modules_loaded_by("syncd.httpclient") <= {
        "syncd",
        "syncd.httpclient",
        "syncd.errors",
    }


def test_webhooks_do_not_import_the_arxiv_client() -> None:
    """The webhook sender gets its HTTP helpers from httpclient, not from the arXiv client."""
    loaded = syncd_modules_loaded_by("syncd.delivery.sender")
    assert "syncd.httpclient" in loaded
    assert not any(
        m == "syncd.sources.arxiv" or m.startswith("syncd.sources.arxiv.") for m in loaded
    )


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


# -- headers from a remote ----------------------------------------------------------


@pytest.mark.parametrize(
    "digits",
    [
        pytest.param("9" * 309, id="309-digits-overflow-a-float"),
        pytest.param("9" * 400, id="400-digits"),
        pytest.param("9" * 4301, id="4301-digits-past-the-int-string-limit"),
        pytest.param("1" + "0" * 15, id="a-billion-years"),
    ],
)
def test_a_huge_delta_seconds_is_capped(digits: str) -> None:
    """A Retry-After of more seconds than any float (or int() takes) waits the cap."""
    assert parse_retry_after(digits, NOW) == MAX_RETRY_AFTER


def test_leading_zeros_are_not_a_huge_number() -> None:
    """5000 zeros before a 5 are still five seconds."""
    assert parse_retry_after("0" * 5000 + "5", NOW) == 5.0


@pytest.mark.parametrize(
    "value",
    [
        HUGE_YEAR,
        HUGE_HOUR,
        HUGE_ZONE,
        "Mon, 01 Jan 99999 00:00:00 GMT",
        "-5",
        "-0",
        "NaN",
        "nan",
        "inf",
        "Infinity",
        "1e999",
        "5e3",
        "+5",
        "0x10",
    ],
)
def test_an_unreadable_retry_after_is_ignored(value: str) -> None:
    """Negative, NaN-like, non-decimal and out-of-range dates are no Retry-After at all."""
    assert parse_retry_after(value, NOW) is None


@pytest.mark.parametrize("value", [HUGE_YEAR, HUGE_HOUR, HUGE_ZONE, "Mon, 01 Jan 99999 0:0:0 GMT"])
def test_an_out_of_range_date_is_no_date(value: str) -> None:
    """An HTTP-date no datetime can hold is unreadable (None), never an exception."""
    assert parse_http_date(value) is None


@pytest.mark.parametrize("value", [HUGE_YEAR, HUGE_HOUR, HUGE_ZONE, "9" * 4301, "yesterday"])
def test_an_unreadable_server_date_is_our_clock(value: str) -> None:
    """A ``Date`` header that is no date gives our own clock's time."""
    before = datetime.now(UTC)
    assert before <= response_time(httpx.Headers({"date": value})) <= datetime.now(UTC)


def test_a_far_retry_after_date_is_capped() -> None:
    """A date 8000 years away (or a server ``Date`` 8000 years back) waits the cap."""
    assert parse_retry_after("Fri, 31 Dec 9999 23:59:59 -2359", NOW) == MAX_RETRY_AFTER
    ancient = response_time(httpx.Headers({"date": "Mon, 01 Jan 1900 00:00:00 GMT"}))
    assert parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", ancient) == MAX_RETRY_AFTER


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, 0.0),
        (2.5, 2.5),
        (10**400, MAX_RETRY_AFTER),
        (math.inf, MAX_RETRY_AFTER),
        (float(MAX_RETRY_AFTER) + 1, MAX_RETRY_AFTER),
        (-1, None),
        (-math.inf, None),
        (math.nan, None),
        (True, None),
        ("5", None),
        (None, None),
        ([5], None),
    ],
)
def test_retry_seconds_takes_only_real_waits(value: object, expected: float | None) -> None:
    """A wait a remote gave as a number: negative, NaN or not a number is none; more is capped."""
    assert retry_seconds(value) == expected


def _a_finite_wait(wait: float | None) -> bool:
    return wait is None or (math.isfinite(wait) and 0.0 <= wait <= MAX_RETRY_AFTER)


_RETRY_AFTER_TEXTS = st.one_of(
    st.text(),
    st.text("0123456789", min_size=1, max_size=5000),
    st.builds(
        "{}, {} {} {} {}:{}:{} {}".format,
        st.sampled_from(["Mon", "Fri", "Xyz"]),
        st.integers(-(10**30), 10**30),
        st.sampled_from(["Jan", "Feb", "Dec", "Foo"]),
        st.integers(-(10**30), 10**30),
        st.integers(-(10**25), 10**25),
        st.integers(-99, 99),
        st.integers(-99, 99),
        st.sampled_from(["GMT", "UTC", "-0000", "+2359", "-2359", "+99999999999999999999"]),
    ),
)


@given(_RETRY_AFTER_TEXTS, _RETRY_AFTER_TEXTS)
def test_any_retry_after_and_date_give_a_finite_wait_or_none(value: str, date: str) -> None:
    """Whatever a remote sends as Retry-After and Date, the wait is None or in [0, cap]."""
    try:
        headers = httpx.Headers({"date": date})
    except UnicodeEncodeError:
        headers = httpx.Headers()  # not a header httpx could have received
    assert _a_finite_wait(parse_retry_after(value, response_time(headers)))
