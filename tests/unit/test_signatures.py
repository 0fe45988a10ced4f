"""What the reference verifier (``standardwebhooks``) makes of syncd's signatures.

The verifier refuses timestamps more than five minutes from its clock, so a
captured delivery replayed later fails; within those five minutes receivers
deduplicate on ``webhook-id`` (syncd keeps it across retries), which the
verifier leaves to them.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from syncd.delivery.payload import test_body, webhook_body
from syncd.delivery.sender import WebhookSender
from syncd.domain.signing import sign
from tests.helpers import StartReceiver
from tests.receiver import Receiver

OLD = "whsec_" + base64.b64encode(b"the secret being rotated out...").decode()
NEW = "whsec_" + base64.b64encode(b"the secret being rotated in....").decode()
OTHER = "whsec_" + base64.b64encode(b"a secret nobody configured.....").decode()
MSG_ID = "evt_0123456789abcdef"


def _signed(
    secrets: list[str], *, age: timedelta = timedelta(0), msg_id: str = MSG_ID
) -> tuple[bytes, dict[str, str]]:
    """A ``paper.added`` body and its headers, signed ``age`` ago."""
    when = datetime.now(UTC) - age
    body = webhook_body("paper.added", {"paper": {"key": "2604.06956"}}, when)
    stamp = int(when.timestamp())
    headers = {
        "webhook-id": msg_id,
        "webhook-timestamp": str(stamp),
        "webhook-signature": sign(secrets, msg_id, stamp, body),
    }
    return body, headers


def test_fresh_delivery_verifies() -> None:
    """A delivery signed just now verifies and yields its payload."""
    body, headers = _signed([OLD])
    assert Webhook(OLD).verify(body, headers)["type"] == "paper.added"


def test_delivery_four_minutes_old_still_verifies() -> None:
    """Inside the five-minute tolerance a slow network does not break verification."""
    body, headers = _signed([OLD], age=timedelta(minutes=4))
    assert Webhook(OLD).verify(body, headers)["type"] == "paper.added"


def test_replay_six_minutes_later_is_rejected() -> None:
    """A captured delivery replayed six minutes later is refused as too old."""
    body, headers = _signed([OLD], age=timedelta(minutes=6))
    with pytest.raises(WebhookVerificationError, match="too old"):
        Webhook(OLD).verify(body, headers)


def test_timestamp_six_minutes_ahead_is_rejected() -> None:
    """A timestamp from the future (a pre-signed replay) is refused as too new."""
    body, headers = _signed([OLD], age=-timedelta(minutes=6))
    with pytest.raises(WebhookVerificationError, match="too new"):
        Webhook(OLD).verify(body, headers)


def test_restamped_replay_is_rejected() -> None:
    """Moving an old delivery's timestamp to now breaks its signature."""
    body, headers = _signed([OLD], age=timedelta(minutes=6))
    fresh = {**headers, "webhook-timestamp": str(int(datetime.now(UTC).timestamp()))}
    with pytest.raises(WebhookVerificationError, match="No matching signature"):
        Webhook(OLD).verify(body, fresh)


Headers = dict[str, str]
Tamper = Callable[[bytes, Headers], tuple[bytes, Headers]]


def _flip_signature(headers: Headers) -> Headers:
    """The first base64 character of the signature changed (the last may only carry padding)."""
    signature = headers["webhook-signature"]  # "v1,<base64>"
    first = "B" if signature[3] == "A" else "A"
    return {**headers, "webhook-signature": signature[:3] + first + signature[4:]}


TAMPERS: dict[str, Tamper] = {
    "body": lambda body, headers: (body.replace(b"2604.06956", b"2604.06957"), headers),
    "trailing-space": lambda body, headers: (body + b" ", headers),
    "id": lambda body, headers: (body, {**headers, "webhook-id": "evt_fedcba9876543210"}),
    "timestamp": lambda body, headers: (
        body,
        {**headers, "webhook-timestamp": str(int(headers["webhook-timestamp"]) - 1)},
    ),
    "signature": lambda body, headers: (body, _flip_signature(headers)),
}


@pytest.mark.parametrize("tamper", TAMPERS.values(), ids=TAMPERS.keys())
def test_tampered_delivery_is_rejected(tamper: Tamper) -> None:
    """Changing the body, the id, the timestamp or the signature fails verification."""
    body, headers = _signed([OLD])
    forged_body, forged_headers = tamper(body, headers)
    assert (forged_body, forged_headers) != (body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(OLD).verify(forged_body, forged_headers)


def test_missing_headers_are_rejected() -> None:
    """A delivery stripped of any one Standard Webhooks header is refused."""
    body, headers = _signed([OLD])
    for name in headers:
        stripped = {k: v for k, v in headers.items() if k != name}
        with pytest.raises(WebhookVerificationError, match="Missing required headers"):
            Webhook(OLD).verify(body, stripped)


def test_wrong_secret_is_rejected() -> None:
    """A receiver holding another secret cannot verify."""
    body, headers = _signed([OLD])
    with pytest.raises(WebhookVerificationError):
        Webhook(OTHER).verify(body, headers)


def test_rotation_overlap_verifies_with_either_secret() -> None:
    """Signed with [old, new], a delivery verifies with the old secret alone and the new alone."""
    body, headers = _signed([OLD, NEW])
    assert len(headers["webhook-signature"].split(" ")) == 2
    assert Webhook(OLD).verify(body, headers)["type"] == "paper.added"
    assert Webhook(NEW).verify(body, headers)["type"] == "paper.added"
    with pytest.raises(WebhookVerificationError):
        Webhook(OTHER).verify(body, headers)


def test_after_rotation_the_old_secret_fails() -> None:
    """Signed with [new] only, a delivery verifies with the new secret and fails with the old."""
    body, headers = _signed([NEW])
    assert Webhook(NEW).verify(body, headers)["type"] == "paper.added"
    with pytest.raises(WebhookVerificationError):
        Webhook(OLD).verify(body, headers)


def test_rotation_order_does_not_matter() -> None:
    """Signed with [new, old], the old secret still verifies (receivers try every signature)."""
    body, headers = _signed([NEW, OLD])
    assert Webhook(OLD).verify(body, headers)["type"] == "paper.added"


@pytest.fixture
def receivers(receiver_for: StartReceiver) -> tuple[Receiver, Receiver]:
    """Two receivers mid-rotation: one still on the old secret, one already on the new."""
    return receiver_for(OLD), receiver_for(NEW)


def test_sender_retry_hours_later_is_signed_afresh(
    receivers: tuple[Receiver, Receiver],
) -> None:
    """A retry of an old event carries a new timestamp, so it verifies; the id stays the same."""
    old, new = receivers
    created = datetime.now(UTC) - timedelta(hours=5)
    body = webhook_body("paper.added", {"n": 1}, created)
    with WebhookSender(timeout=2.0) as sender:
        for receiver in (old, new):
            result = sender.send(receiver.url, [OLD, NEW], MSG_ID, body)
            assert result.outcome == "delivered", result.error
    for receiver in (old, new):
        (got,) = receiver.delivered
        assert got.msg_id == MSG_ID
        assert got.timestamp is not None
        assert abs(got.timestamp - datetime.now(UTC).timestamp()) < 60


def test_sender_after_rotation_is_refused_by_an_old_receiver(
    receivers: tuple[Receiver, Receiver],
) -> None:
    """Once the old secret is dropped, a receiver still holding only it answers 401."""
    old, new = receivers
    msg_id, body = test_body(datetime.now(UTC))
    with WebhookSender(timeout=2.0) as sender:
        assert sender.send(new.url, [NEW], msg_id, body).outcome == "delivered"
        refused = sender.send(old.url, [NEW], msg_id, body)
    assert (refused.outcome, refused.status) == ("retry", 401)
    assert old.delivered == [] and old.received[0].verified is False
