"""Tests for syncd.delivery: pure parts directly, the sender against a real receiver on loopback."""

from __future__ import annotations

import base64
import email.utils
import json
import random
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError
from structlog.testing import capture_logs

from syncd.delivery.payload import event_body, test_body, webhook_body
from syncd.delivery.redaction import redact_url
from syncd.delivery.sender import WebhookSender, _later
from syncd.domain.model import Event
from syncd.domain.record import Record
from syncd.domain.retries import DEFAULT_RETRY_SCHEDULE, next_retry_delay
from syncd.domain.routing import accepts
from syncd.domain.signing import sign, signing_key
from syncd.domain.views import event_json
from syncd.errors import ConfigError
from syncd.httpclient import MAX_RETRY_AFTER
from tests.dripper import HeaderDripper
from tests.helpers import WEBHOOK_SECRET
from tests.receiver import Receiver

OLD_SECRET = WEBHOOK_SECRET  # the one the shared ``receiver`` holds
NEW_SECRET = "whsec_" + base64.b64encode(b"new signing secret, 24+ bytes").decode()
TOKEN = "tok3n-in-the-query"

# The example of the Standard Webhooks specification (and of Svix's libraries).
SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SPEC_MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SPEC_TIMESTAMP = 1614265330
SPEC_BODY = b'{"test": 2432232314}'
SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def signed_headers(secrets: list[str], msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(secrets, msg_id, timestamp, body),
    }


def now_seconds() -> int:
    return int(datetime.now(UTC).timestamp())


def make_event(**overrides: Any) -> Event:
    fields: dict[str, Any] = {
        "seq": 12,
        "id": "evt_2f1c",
        "type": "paper.revised",
        "created_at": datetime(2026, 11, 30, 8, 0, tzinfo=UTC),
        "author": "Zhida Jiang",
        "paper_key": "2604.06956",
        "arxiv_id": "2604.06956",
        "kinds": ("version", "title"),
        "changes": {"version": {"old": 1, "new": 2}, "title": {"old": "Ä", "new": "Ω"}},
        "record": Record(arxiv_id="2604.06956", version=2, title="Ω"),
    }
    fields.update(overrides)
    return Event(**fields)


# -- signing ------------------------------------------------------------------------


def test_sign_matches_the_specification_example() -> None:
    """The signature of the Standard Webhooks example message is the published one."""
    assert sign([SPEC_SECRET], SPEC_MSG_ID, SPEC_TIMESTAMP, SPEC_BODY) == SPEC_SIGNATURE


def test_signature_verifies_with_the_reference_package() -> None:
    """A message signed with one secret verifies with the standardwebhooks package."""
    body = webhook_body("paper.added", {"n": 1}, datetime.now(UTC))
    headers = signed_headers([OLD_SECRET], "msg_1", now_seconds(), body)
    assert Webhook(OLD_SECRET).verify(body, headers)["data"] == {"n": 1}


def test_two_secrets_verify_with_either_one() -> None:
    """During a rotation a receiver holding only the old or only the new secret verifies."""
    body = b'{"rotation":true}'
    headers = signed_headers([OLD_SECRET, NEW_SECRET], "msg_2", now_seconds(), body)
    assert len(headers["webhook-signature"].split(" ")) == 2
    assert Webhook(OLD_SECRET).verify(body, headers) == {"rotation": True}
    assert Webhook(NEW_SECRET).verify(body, headers) == {"rotation": True}


def test_a_receiver_with_another_secret_rejects() -> None:
    """A signature made with the old secret only does not verify with the new one."""
    body = b"{}"
    headers = signed_headers([OLD_SECRET], "msg_3", now_seconds(), body)
    with pytest.raises(WebhookVerificationError):
        Webhook(NEW_SECRET).verify(body, headers)


def test_tampered_body_fails_verification() -> None:
    """Changing one byte of the body breaks the signature."""
    body = b'{"a":1}'
    headers = signed_headers([OLD_SECRET], "msg_4", now_seconds(), body)
    with pytest.raises(WebhookVerificationError):
        Webhook(OLD_SECRET).verify(b'{"a":2}', headers)


def test_wrong_timestamp_or_id_fails_verification() -> None:
    """The timestamp and the message id are covered by the signature."""
    body = b"{}"
    stamp = now_seconds()
    headers = signed_headers([OLD_SECRET], "msg_5", stamp, body)
    with pytest.raises(WebhookVerificationError):
        Webhook(OLD_SECRET).verify(body, {**headers, "webhook-timestamp": str(stamp + 1)})
    with pytest.raises(WebhookVerificationError):
        Webhook(OLD_SECRET).verify(body, {**headers, "webhook-id": "msg_6"})


def test_stale_timestamp_fails_verification() -> None:
    """A correctly signed message from an hour ago is refused as a replay."""
    body = b"{}"
    headers = signed_headers([OLD_SECRET], "msg_7", now_seconds() - 3600, body)
    with pytest.raises(WebhookVerificationError):
        Webhook(OLD_SECRET).verify(body, headers)


def test_secret_without_prefix_or_padding_is_accepted() -> None:
    """Bare base64, unpadded base64 and a trailing newline give the same key as whsec_."""
    encoded = SPEC_SECRET.removeprefix("whsec_")
    unpadded = base64.b64encode(b"0123456789abcdefghijklmnop").decode().rstrip("=")
    assert signing_key(encoded) == signing_key(SPEC_SECRET)
    assert signing_key(SPEC_SECRET + "\n") == signing_key(SPEC_SECRET)
    assert signing_key("whsec_" + unpadded) == b"0123456789abcdefghijklmnop"


@pytest.mark.parametrize(
    "secret", ["whsec_not base64 at all!", "whsec_abcde", "sk-ünïcode-secret", "whsec_-_-_-_-_"]
)
def test_invalid_secret_raises_config_error_without_quoting_it(secret: str) -> None:
    """A secret that is not base64 is a ConfigError whose message does not contain it."""
    with pytest.raises(ConfigError, match="not valid base64") as info:
        sign([secret], "msg_8", 0, b"{}")
    assert secret.removeprefix("whsec_") not in str(info.value)


def test_empty_secret_raises_config_error() -> None:
    """A prefix with nothing after it is refused."""
    with pytest.raises(ConfigError, match="empty"):
        signing_key("whsec_")


def test_invalid_second_secret_is_named_by_position() -> None:
    """With several secrets the error says which one is wrong, not what it is."""
    with pytest.raises(ConfigError, match="secret 2 of 2") as info:
        sign([OLD_SECRET, "whsec_$$$$"], "msg_9", 0, b"{}")
    assert "$$$$" not in str(info.value)


def test_no_secret_is_a_config_error() -> None:
    """Signing needs at least one secret."""
    with pytest.raises(ConfigError, match="at least one secret"):
        sign([], "msg_10", 0, b"{}")


# -- bodies -------------------------------------------------------------------------


def test_webhook_body_is_compact_utf8_json() -> None:
    """The payload is compact JSON with raw UTF-8 and a UTC ISO-8601 timestamp."""
    stamp = datetime(2026, 11, 30, 9, 30, tzinfo=UTC)
    body = webhook_body("paper.added", {"title": "Ωmega"}, stamp)
    expected = '{"type":"paper.added","timestamp":"2026-11-30T09:30:00Z","data":{"title":"Ωmega"}}'
    assert body == expected.encode("utf-8")


def test_webhook_body_converts_to_utc_and_refuses_naive_times() -> None:
    """An aware time in another zone is written in UTC; a naive one is refused."""
    stamp = datetime(2026, 11, 30, 10, 0, tzinfo=timezone(timedelta(hours=2)))
    assert json.loads(webhook_body("t", {}, stamp))["timestamp"] == "2026-11-30T08:00:00Z"
    with pytest.raises(ValueError, match="timezone-aware"):
        webhook_body("t", {}, datetime(2026, 11, 30, 10, 0))


def test_event_body_carries_event_json() -> None:
    """An event's payload holds its type, creation time and event_json as data."""
    event = make_event()
    payload = json.loads(event_body(event))
    assert payload == {
        "type": "paper.revised",
        "timestamp": "2026-11-30T08:00:00Z",
        "data": json.loads(json.dumps(event_json(event))),
    }


def test_test_body_has_fresh_ids() -> None:
    """Each test message gets its own msg_test_ id and the fixed test data."""
    now = datetime.now(UTC)
    first_id, body = test_body(now)
    second_id, _ = test_body(now)
    assert first_id.startswith("msg_test_") and first_id != second_id
    assert json.loads(body)["type"] == "webhook.test"
    assert json.loads(body)["data"] == {"message": "syncd webhook test"}


# -- retry schedule -----------------------------------------------------------------


def test_schedule_covers_about_three_days() -> None:
    """The whole schedule with jitter sums to the nominal ~3.5 days within ±20 %."""
    nominal = sum(DEFAULT_RETRY_SCHEDULE)
    assert 3 * 86400 <= nominal <= 4 * 86400
    for seed in range(20):
        rng = random.Random(seed)
        delays = [next_retry_delay(n, None, rng) for n in range(1, len(DEFAULT_RETRY_SCHEDULE) + 1)]
        assert all(d is not None for d in delays)
        total = sum(d for d in delays if d is not None)
        assert 0.8 * nominal <= total <= 1.2 * nominal


def test_each_step_is_jittered_within_twenty_percent() -> None:
    """Every delay stays within ±20 % of its step, and the jitter really varies."""
    rng = random.Random(7)
    for attempt, step in enumerate(DEFAULT_RETRY_SCHEDULE, start=1):
        samples = {next_retry_delay(attempt, None, rng) for _ in range(50)}
        assert all(d is not None and 0.8 * step <= d <= 1.2 * step for d in samples)
        assert len(samples) > 1


def test_exhausted_schedule_means_dead_letter() -> None:
    """After the last scheduled attempt there is no next one."""
    rng = random.Random(1)
    assert next_retry_delay(len(DEFAULT_RETRY_SCHEDULE) + 1, None, rng) is None
    assert next_retry_delay(100, 60.0, rng) is None
    assert next_retry_delay(2, None, rng, schedule=(1.0,)) is None


def test_attempts_are_counted_from_one() -> None:
    """Zero failed attempts is a caller bug."""
    with pytest.raises(ValueError, match="at least 1"):
        next_retry_delay(0, None, random.Random(1))


def test_retry_after_is_a_floor() -> None:
    """A Retry-After longer than the scheduled step is waited in full."""
    delay = next_retry_delay(1, 15.0, random.Random(1))
    assert delay == 15.0


def test_short_retry_after_does_not_shorten_the_step() -> None:
    """A Retry-After shorter than the step leaves the jittered step in force."""
    delay = next_retry_delay(2, 1.0, random.Random(1))
    assert delay is not None and delay >= 0.8 * 300


def test_retry_after_is_capped() -> None:
    """A huge Retry-After is capped at four steps, and never beyond a day."""
    year = 365 * 86400.0
    assert next_retry_delay(1, year, random.Random(1)) == 20.0
    assert next_retry_delay(5, year, random.Random(1)) == 72000.0
    assert next_retry_delay(6, year, random.Random(1)) == 86400.0
    assert next_retry_delay(10, year, random.Random(1)) == 86400.0


def test_negative_retry_after_is_ignored() -> None:
    """A Retry-After in the past does not produce a negative wait."""
    delay = next_retry_delay(1, -50.0, random.Random(1))
    assert delay is not None and delay >= 4.0


# -- filters and redaction ------------------------------------------------------------


@pytest.mark.parametrize(
    ("events", "kinds", "event_type", "event_kinds", "expected"),
    [
        ((), (), "paper.revised", ("title",), True),
        (("paper.revised",), (), "paper.revised", ("title",), True),
        (("paper.added",), (), "paper.revised", ("title",), False),
        ((), ("title",), "paper.revised", ("version", "title"), True),
        ((), ("doi",), "paper.revised", ("version", "title"), False),
        ((), ("doi",), "paper.added", (), True),
        ((), ("doi",), "paper.removed", (), True),
        ((), ("doi",), "webhook.test", (), True),
        (("paper.added",), ("doi",), "paper.removed", (), False),
        (("paper.linked",), ("abstract",), "paper.linked", ("abstract",), True),
        (("paper.linked",), ("abstract",), "paper.linked", ("title",), False),
    ],
)
def test_accepts(
    events: tuple[str, ...],
    kinds: tuple[str, ...],
    event_type: str,
    event_kinds: tuple[str, ...],
    expected: bool,
) -> None:
    """Endpoint filters: types must match when given; kinds must overlap when both have some."""
    assert accepts(events, kinds, event_type, event_kinds) is expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://hooks.example.org/in", "https://hooks.example.org/in"),
        ("https://user:pw@hooks.example.org/in?token=x#frag", "https://hooks.example.org/in"),
        ("HTTP://Hooks.Example.org:8443/a/b?x=1", "http://hooks.example.org:8443/a/b"),
        ("http://[::1]:9000/hook?k=v", "http://[::1]:9000/hook"),
        ("http://127.0.0.1:9000", "http://127.0.0.1:9000"),
        ("http://host:notaport/x", "<invalid URL>"),
        ("no url at all", "<invalid URL>"),
    ],
)
def test_redact_url(url: str, expected: str) -> None:
    """Redaction keeps scheme, host, port and path, and drops credentials, query and fragment."""
    assert redact_url(url) == expected


# -- the sender against a real receiver -----------------------------------------------


@pytest.fixture
def sender() -> Iterator[WebhookSender]:
    """A sender with a short timeout, so a slow receiver costs little."""
    with WebhookSender(timeout=2.0, user_agent="syncd-test/1") as client:
        yield client


def secret_url(receiver: Receiver) -> str:
    """The receiver's URL with credentials and a token that must never show up in errors."""
    return receiver.url.replace("://", "://hookuser:hookpass@") + f"?token={TOKEN}"


def assert_clean(text: str | None) -> None:
    """No secret and no part of the query or userinfo in ``text``."""
    assert text is not None
    for forbidden in (OLD_SECRET, OLD_SECRET.removeprefix("whsec_"), TOKEN, "hookpass", "token="):
        assert forbidden not in text


def test_sender_delivers_to_a_2xx(receiver: Receiver, sender: WebhookSender) -> None:
    """A 2xx is delivered, and the receiver sees verified Standard Webhooks headers."""
    now = datetime.now(UTC)
    msg_id, body = test_body(now)
    result = sender.send(secret_url(receiver), [OLD_SECRET], msg_id, body, now=now)
    assert (result.outcome, result.status, result.error) == ("delivered", 204, None)
    assert result.duration_seconds < 2.0
    [got] = receiver.delivered
    assert got.msg_id == msg_id and got.body == body and got.timestamp == int(now.timestamp())
    assert got.json is not None and got.json["type"] == "webhook.test"
    assert got.headers["content-type"] == "application/json"
    assert got.headers["user-agent"] == "syncd-test/1"


def test_sender_signs_for_a_rotating_receiver(sender: WebhookSender) -> None:
    """Receivers holding only the new or only the old secret both accept a rotating sender."""
    for held in (OLD_SECRET, NEW_SECRET):
        with Receiver([held]) as server:
            msg_id, body = test_body(datetime.now(UTC))
            result = sender.send(server.url, [OLD_SECRET, NEW_SECRET], msg_id, body)
            assert result.outcome == "delivered"
            assert len(server.delivered) == 1


def test_wrong_secret_is_refused_by_the_receiver(receiver: Receiver, sender: WebhookSender) -> None:
    """A receiver that cannot verify answers 401, which the sender retries."""
    msg_id, body = test_body(datetime.now(UTC))
    result = sender.send(receiver.url, [NEW_SECRET], msg_id, body)
    assert (result.outcome, result.status) == ("retry", 401)
    assert receiver.delivered == [] and receiver.received[0].verified is False


def test_server_error_is_retried(receiver: Receiver, sender: WebhookSender) -> None:
    """A 500 is a retry whose error names the status and quotes the answer, scrubbed."""
    receiver.respond_with(500, body=f"boom at /hook?token={TOKEN} for hookpass".encode())
    msg_id, body = test_body(datetime.now(UTC))
    result = sender.send(secret_url(receiver), [OLD_SECRET], msg_id, body)
    assert (result.outcome, result.status, result.retry_after) == ("retry", 500, None)
    assert result.error is not None and result.error.startswith("HTTP 500")
    assert "boom at /hook" in result.error
    assert_clean(result.error)


def test_gone_asks_to_disable(receiver: Receiver, sender: WebhookSender) -> None:
    """A 410 is 'gone': the caller disables the endpoint."""
    receiver.respond_with(410)
    msg_id, body = test_body(datetime.now(UTC))
    result = sender.send(receiver.url, [OLD_SECRET], msg_id, body)
    assert (result.outcome, result.status) == ("gone", 410)


def test_other_4xx_is_retried(receiver: Receiver, sender: WebhookSender) -> None:
    """Like Standard Webhooks and Svix, a 400 is retried rather than dropped."""
    receiver.respond_with(400)
    msg_id, body = test_body(datetime.now(UTC))
    assert sender.send(receiver.url, [OLD_SECRET], msg_id, body).outcome == "retry"


def test_429_retry_after_seconds(receiver: Receiver, sender: WebhookSender) -> None:
    """A 429's Retry-After in seconds is reported."""
    receiver.respond_with(429, retry_after=7)
    msg_id, body = test_body(datetime.now(UTC))
    result = sender.send(receiver.url, [OLD_SECRET], msg_id, body)
    assert (result.outcome, result.status, result.retry_after) == ("retry", 429, 7.0)
    assert result.error is not None and "Retry-After 7 s" in result.error


def test_503_retry_after_http_date(receiver: Receiver, sender: WebhookSender) -> None:
    """A 503's Retry-After as an HTTP date is turned into seconds."""
    when = datetime.now(UTC) + timedelta(seconds=120)
    receiver.respond_with(503, retry_after=email.utils.format_datetime(when, usegmt=True))
    msg_id, body = test_body(datetime.now(UTC))
    result = sender.send(receiver.url, [OLD_SECRET], msg_id, body)
    assert result.outcome == "retry" and result.retry_after is not None
    assert 110 <= result.retry_after <= 121


@pytest.mark.parametrize(
    "retry_after",
    [
        pytest.param("9" * 400, id="400-digits"),
        pytest.param("9" * 4301, id="4301-digits"),
        pytest.param("Fri, 31 Dec 9999 23:59:59 GMT", id="year-9999"),
    ],
)
def test_a_huge_retry_after_is_a_capped_wait(
    receiver: Receiver, sender: WebhookSender, retry_after: str
) -> None:
    """A 429 asking for more seconds than a float holds is a retry that waits the cap."""
    receiver.respond_with(429, retry_after=retry_after)
    msg_id, body = test_body(datetime.now(UTC))
    result = sender.send(receiver.url, [OLD_SECRET], msg_id, body)
    assert (result.outcome, result.status, result.retry_after) == ("retry", 429, MAX_RETRY_AFTER)


@pytest.mark.parametrize(
    "retry_after",
    ["Mon, 01 Jan 99999999999999999999999 00:00:00 GMT", "-1", "NaN", "1e999"],
)
def test_an_unreadable_retry_after_is_ignored(
    receiver: Receiver, sender: WebhookSender, retry_after: str
) -> None:
    """A Retry-After that is no delay (a year no date holds, a sign, NaN) is a plain retry."""
    receiver.respond_with(503, retry_after=retry_after)
    msg_id, body = test_body(datetime.now(UTC))
    result = sender.send(receiver.url, [OLD_SECRET], msg_id, body)
    assert (result.outcome, result.status, result.retry_after) == ("retry", 503, None)


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        (None, None, None),
        (None, 3.0, 3.0),
        (3.0, None, 3.0),
        (0.0, None, 0.0),
        (None, 0.0, 0.0),
        (2.0, 2.0, 2.0),
        (5.0, 2.0, 5.0),
        (2.0, 5.0, 5.0),
    ],
)
def test_the_later_of_two_asked_waits(
    first: float | None, second: float | None, expected: float | None
) -> None:
    """A Retry-After header and a Discord body's retry_after: the longer wait, or the one said."""
    assert _later(first, second) == expected


def test_retry_after_of_a_500_is_ignored(receiver: Receiver, sender: WebhookSender) -> None:
    """Only 429 and 503 carry a Retry-After worth honouring."""
    receiver.respond_with(500, retry_after=60)
    msg_id, body = test_body(datetime.now(UTC))
    assert sender.send(receiver.url, [OLD_SECRET], msg_id, body).retry_after is None


def test_redirect_is_not_followed(receiver: Receiver, sender: WebhookSender) -> None:
    """A 301 is a failed attempt; the Location is reported redacted and never requested."""
    receiver.respond_with(301, headers={"Location": f"/elsewhere?token={TOKEN}"})
    msg_id, body = test_body(datetime.now(UTC))
    result = sender.send(secret_url(receiver), [OLD_SECRET], msg_id, body)
    assert (result.outcome, result.status) == ("retry", 301)
    assert len(receiver.received) == 1
    assert result.error is not None
    assert f"Location: http://127.0.0.1:{receiver.port}/elsewhere)" in result.error
    assert_clean(result.error)


@pytest.mark.parametrize("location", ["//[", "//[zz]/", "http://[::1"])
def test_an_unreadable_location_is_a_failed_attempt(
    receiver: Receiver, sender: WebhookSender, location: str
) -> None:
    """A Location no URL parser takes (an unclosed or bad IPv6 bracket) is a failed attempt
    that says so (httpx refuses some itself), never an exception out of send."""
    receiver.respond_with(302, headers={"Location": location})
    msg_id, body = test_body(datetime.now(UTC))
    result = sender.send(receiver.url, [OLD_SECRET], msg_id, body)
    assert result.outcome == "retry" and result.error is not None
    assert "(Location: <invalid URL>)" in result.error or "Invalid URL" in result.error


def test_slow_receiver_times_out(receiver: Receiver) -> None:
    """A receiver answering after the timeout is a retry with a timeout error."""
    receiver.respond_with(200, delay=1.5)
    msg_id, body = test_body(datetime.now(UTC))
    with WebhookSender(timeout=0.3) as sender:
        result = sender.send(secret_url(receiver), [OLD_SECRET], msg_id, body)
    assert (result.outcome, result.status) == ("retry", None)
    assert result.error is not None and "Timeout" in result.error
    assert 0.25 <= result.duration_seconds < 1.0
    assert_clean(result.error)


@pytest.fixture
def dripping_receiver() -> Iterator[str]:
    """A receiver that answers 204, one byte every 0.1 s (about 5 s for the whole answer)."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            for byte in b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n":
                if stop.wait(0.1):
                    return
                try:
                    connection.send(bytes([byte]))
                except OSError:
                    return  # the sender gave up, as it should

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
    finally:
        stop.set()
        listener.close()
        server.join(5)


def test_dripping_receiver_times_out_on_the_whole_attempt(dripping_receiver: str) -> None:
    """``timeout`` bounds the attempt, not each read: a byte every 0.1 s cannot hold it."""
    msg_id, body = test_body(datetime.now(UTC))
    started = time.monotonic()
    with WebhookSender(timeout=0.5) as sender:
        result = sender.send(dripping_receiver, [OLD_SECRET], msg_id, body)
    assert (result.outcome, result.status) == ("retry", None)
    assert result.error is not None and "Timeout" in result.error
    assert time.monotonic() - started < 1.5


def test_dripped_headers_time_out_with_the_attempt() -> None:
    """Header bytes dripped every 0.2 s cannot hold a timeout=1 attempt much past 1 s."""
    msg_id, body = test_body(datetime.now(UTC))
    with (
        HeaderDripper(interval=0.2, lifetime=5.0) as server,
        WebhookSender(timeout=1.0) as sender,
    ):
        result = sender.send(server.url, [OLD_SECRET], msg_id, body)
    assert (result.outcome, result.status) == ("retry", None)
    assert result.error is not None and "Timeout" in result.error
    assert 0.9 <= result.duration_seconds < 2.0


def test_down_receiver_is_a_connection_error(receiver: Receiver, sender: WebhookSender) -> None:
    """A refused connection is a retry; the same URL works again once the receiver is back."""
    msg_id, body = test_body(datetime.now(UTC))
    assert sender.send(receiver.url, [OLD_SECRET], msg_id, body).outcome == "delivered"
    receiver.go_down()
    result = sender.send(secret_url(receiver), [OLD_SECRET], msg_id, body)
    assert (result.outcome, result.status) == ("retry", None)
    assert result.error is not None and "ConnectError" in result.error
    assert_clean(result.error)
    receiver.come_up()
    assert sender.send(receiver.url, [OLD_SECRET], msg_id, body).outcome == "delivered"
    assert receiver.wait_for(2, timeout=1.0)


def test_large_answer_is_read_only_in_part(receiver: Receiver, sender: WebhookSender) -> None:
    """A megabyte of error page yields a short error; a 2xx with one is still delivered."""
    receiver.respond_with(500, body=b"x" * (1 << 20))
    receiver.respond_with(200, body=b"y" * (1 << 20))
    msg_id, body = test_body(datetime.now(UTC))
    failed = sender.send(receiver.url, [OLD_SECRET], msg_id, body)
    assert failed.error is not None and len(failed.error) < 300
    assert sender.send(receiver.url, [OLD_SECRET], msg_id, body).outcome == "delivered"


def test_unusable_url_is_a_retry_not_an_exception(sender: WebhookSender) -> None:
    """A URL httpx cannot send to is reported like any other failed attempt."""
    msg_id, body = test_body(datetime.now(UTC))
    for url in (f"ftp://example.invalid/x?token={TOKEN}", f"http://[::1?token={TOKEN}"):
        result = sender.send(url, [OLD_SECRET], msg_id, body)
        assert (result.outcome, result.status) == ("retry", None)
        assert_clean(result.error)


def test_bad_secret_raises_before_sending(receiver: Receiver, sender: WebhookSender) -> None:
    """An invalid secret is a ConfigError and nothing reaches the receiver."""
    msg_id, body = test_body(datetime.now(UTC))
    with pytest.raises(ConfigError):
        sender.send(receiver.url, ["whsec_%%%"], msg_id, body)
    assert receiver.received == []


def test_one_log_line_per_attempt(receiver: Receiver, sender: WebhookSender) -> None:
    """Each attempt logs webhook_attempt with id, outcome, status and duration, redacted."""
    receiver.respond_with(503, body=f"echo {TOKEN}".encode())
    msg_id, body = test_body(datetime.now(UTC))
    with capture_logs() as logs:
        sender.send(secret_url(receiver), [OLD_SECRET], msg_id, body)
        sender.send(secret_url(receiver), [OLD_SECRET], msg_id, body)
    assert [line["event"] for line in logs] == ["webhook_attempt", "webhook_attempt"]
    failed, delivered = logs
    assert (failed["event_id"], failed["outcome"], failed["status"]) == (msg_id, "retry", 503)
    assert (delivered["outcome"], delivered["status"], delivered["log_level"]) == (
        "delivered",
        204,
        "info",
    )
    assert isinstance(delivered["duration_ms"], float)
    assert_clean(repr(logs))


def test_results_and_sender_reprs_hold_no_secret(receiver: Receiver, sender: WebhookSender) -> None:
    """Neither the sender nor a result mentions the secret or the URL's token."""
    msg_id, body = test_body(datetime.now(UTC))
    result = sender.send(secret_url(receiver), [OLD_SECRET], msg_id, body)
    assert_clean(repr(result) + repr(sender))
