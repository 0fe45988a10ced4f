"""Tests for tests/receiver.py, the loopback webhook receiver the delivery tests rely on."""

from __future__ import annotations

import base64
import socket
from datetime import UTC, datetime

import httpx
import pytest
from standardwebhooks import Webhook

from tests.receiver import Receiver

SECRET = "whsec_" + base64.b64encode(b"receiver test secret 0123").decode()


def post(
    url: str, *, secret: str = SECRET, msg_id: str = "msg_1", timeout: float = 2.0
) -> httpx.Response:
    """POST a message signed by the reference package itself."""
    body = '{"type":"webhook.test","data":{}}'
    now = datetime.now(UTC)
    headers = {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(secret).sign(msg_id, now, body),
    }
    with httpx.Client(timeout=timeout) as client:
        return client.post(url, content=body.encode(), headers=headers)


def refuses(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:port."""
    with socket.socket() as sock:
        try:
            sock.connect(("127.0.0.1", port))
        except ConnectionRefusedError:
            return True
    return False


def test_verified_post_is_delivered() -> None:
    """A correctly signed POST is verified, parsed, answered 204 and counted as delivered."""
    with Receiver([SECRET]) as receiver:
        assert post(receiver.url).status_code == 204
        [got] = receiver.delivered
    assert got.verified and got.error is None and got.msg_id == "msg_1"
    assert got.json == {"type": "webhook.test", "data": {}}


def test_unverified_post_gets_401_and_keeps_the_script() -> None:
    """A bad signature is answered 401 and does not use up a scripted response."""
    other = "whsec_" + base64.b64encode(b"another secret altogether").decode()
    with Receiver([SECRET]) as receiver:
        receiver.respond_with(500)
        assert post(receiver.url, secret=other).status_code == 401
        assert post(receiver.url).status_code == 500
        first, second = receiver.received
    assert not first.verified and first.error is not None and first.status_sent == 401
    assert second.verified and second.status_sent == 500


def test_script_runs_in_order_then_always() -> None:
    """Queued answers are used in order, each ``times`` times, then the ``always`` status."""
    with Receiver([SECRET]) as receiver:
        receiver.respond_with(503, times=2, retry_after=5)
        receiver.respond_with(410)
        receiver.always(202)
        answers = [post(receiver.url) for _ in range(5)]
    assert [a.status_code for a in answers] == [503, 503, 410, 202, 202]
    assert answers[0].headers["retry-after"] == "5"


def test_wrong_path_is_404() -> None:
    """Only /hook is a webhook endpoint."""
    with Receiver([SECRET]) as receiver:
        assert post(receiver.url.replace("/hook", "/other")).status_code == 404
        assert receiver.delivered == []


def test_go_down_refuses_and_come_up_reuses_the_port() -> None:
    """Down means connections are refused; back up, the same URL works again."""
    with Receiver([SECRET]) as receiver:
        url = receiver.url
        receiver.go_down()
        assert refuses(receiver.port)
        receiver.come_up()
        assert receiver.url == url
        assert post(url).status_code == 204


def test_start_and_stop_repeatedly() -> None:
    """A receiver can be started and stopped many times; stopping twice is harmless."""
    receiver = Receiver([SECRET])
    with pytest.raises(RuntimeError, match="not been started"):
        _ = receiver.url
    for number in range(3):
        with receiver:
            assert post(receiver.url, msg_id=f"msg_{number}").status_code == 204
        receiver.stop()
    assert [r.msg_id for r in receiver.delivered] == ["msg_0", "msg_1", "msg_2"]


def test_wait_for_times_out() -> None:
    """wait_for returns False when too few deliveries arrive in time."""
    with Receiver([SECRET]) as receiver:
        post(receiver.url)
        assert receiver.wait_for(1, timeout=0.5)
        assert not receiver.wait_for(2, timeout=0.1)


def test_answer_to_a_departed_sender_is_not_a_delivery() -> None:
    """When the sender gave up before a delayed answer, nothing counts as delivered."""
    with Receiver([SECRET]) as receiver:
        receiver.respond_with(200, delay=0.4)
        with pytest.raises(httpx.ReadTimeout):
            post(receiver.url, timeout=0.1)
        assert not receiver.wait_for(1, timeout=0.6)
        [got] = receiver.received
    assert got.verified and got.status_sent == 0
