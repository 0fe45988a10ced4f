"""Where webhooks may go: the destination policy, its config check, and the sender's guard."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from syncd.config import load_settings
from syncd.delivery.payload import test_body
from syncd.delivery.sender import DeliveryResult, WebhookSender
from syncd.delivery.transport import resolve_host
from syncd.domain.destinations import (
    BlockedDestinationError,
    DestinationPolicy,
    check_destination,
    numeric_addresses,
)
from syncd.errors import ConfigError
from tests.helpers import WEBHOOK_SECRET
from tests.receiver import Receiver

TOKEN = "t0ken-in-the-query"
BLOCKED_MESSAGE = (
    "destination 169.254.169.254 is blocked (link-local/metadata);"
    " allow it with [delivery] allow_destinations"
)


class FakeDns:
    """A resolver answering from a table, counting the questions."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append((host, port))
        if host not in self.answers:
            raise OSError(f"[Errno -2] Name or service not known: {host}")
        return list(self.answers[host])


# -- the policy ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack metadata
        "169.254.170.2",  # ECS task credentials
        "169.254.0.1",
        "169.254.255.255",
        "fe80::1",
        "fe80::1%2",
        "febf:ffff::1",
        "fd00:ec2::254",  # AWS metadata over IPv6
        "::ffff:169.254.169.254",
        "::ffff:a9fe:a9fe",
        "::169.254.169.254",
        "64:ff9b::a9fe:a9fe",
        "2002:a9fe:a9fe::1",
    ],
)
def test_link_local_and_metadata_addresses_are_blocked(address: str) -> None:
    """Link-local and metadata addresses, also embedded in IPv6, are blocked by default."""
    assert DestinationPolicy().blocked(address)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "::1",
        "10.1.2.3",
        "172.16.0.9",
        "192.168.1.20",
        "fd00::1",
        "fd00:ec2::253",
        "93.184.216.34",
        "2001:db8::1",
        "::ffff:127.0.0.1",
        "169.253.255.255",
        "169.255.0.0",
    ],
)
def test_loopback_private_and_public_addresses_are_allowed(address: str) -> None:
    """Loopback, private (receivers on the LAN) and public addresses are never blocked."""
    assert not DestinationPolicy().blocked(address)


def test_unparsable_address_is_blocked() -> None:
    """A resolver answer that is no IP address is refused rather than trusted."""
    assert DestinationPolicy().blocked("not-an-address")


def test_allow_list_takes_networks_addresses_and_host_names() -> None:
    """Listed networks and addresses are let through, mapped forms included; others stay blocked."""
    policy = DestinationPolicy.from_allow_list(
        ["169.254.10.0/24", "fd00:ec2::254", "Metadata.Internal."]
    )
    assert not policy.blocked("169.254.10.77")
    assert not policy.blocked("::ffff:169.254.10.77")
    assert not policy.blocked("fd00:ec2::254")
    assert policy.blocked("169.254.169.254")
    assert policy.hosts == frozenset({"metadata.internal"})
    policy.check("metadata.internal", ["169.254.169.254"])  # an allowed name goes anywhere
    with pytest.raises(BlockedDestinationError):
        policy.check("other.internal", ["169.254.169.254"])


@pytest.mark.parametrize(
    "entry", ["169.254.10.5/24", "300.1.1.1/8", "bad host!", "http://x.example", "", "-a.b"]
)
def test_allow_list_refuses_what_it_cannot_read(entry: str) -> None:
    """An entry that is no address, network or host name is a ValueError naming it."""
    with pytest.raises(ValueError, match="is n"):
        DestinationPolicy.from_allow_list([entry])


def test_one_blocked_address_blocks_the_name() -> None:
    """A name resolving to a receiver and to a metadata address is refused as a whole."""
    with pytest.raises(BlockedDestinationError) as info:
        DestinationPolicy().check("hooks.example", ["10.0.0.5", "169.254.169.254"])
    assert str(info.value) == (
        "destination hooks.example resolves to 169.254.169.254, which is blocked"
        " (link-local/metadata); allow it with [delivery] allow_destinations"
    )


# -- check_destination ----------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "https://169.254.169.254:443/",
        "http://[fd00:ec2::254]/latest",
        "http://[::ffff:169.254.169.254]/",
        "http://[fe80::1]:8080/hook",
        "http://2852039166/",  # 169.254.169.254 as one number
        "http://0xa9fea9fe/",
        "http://0251.0376.0251.0376/",
        "http://169.254.43518/",
        "http://[fe80::1%25eth0]/",  # a zone id, as RFC 6874 writes it in a URL
        "http://[fe80::1%25no-such-interface]:8080/hook",
        "http://[FE80::1%25Eth0]/",
        "http://[fe80::1%eth0]/",
        "http://[::ffff:169.254.169.254%25eth0]/",
        "HTTP://169.254.169.254/",
    ],
)
def test_blocked_literals_are_refused_without_dns(url: str) -> None:
    """IP literals in every spelling the C resolver accepts are checked, with no lookup."""
    with pytest.raises(BlockedDestinationError, match=r"\(link-local/metadata\); allow it"):
        check_destination(url)


def test_literal_message_is_the_documented_one() -> None:
    """The message names the address and the config key that allows it, and not the URL."""
    url = f"http://user:pa55word@169.254.169.254/latest?token={TOKEN}"
    with pytest.raises(BlockedDestinationError) as info:
        check_destination(url)
    assert str(info.value) == BLOCKED_MESSAGE
    assert isinstance(info.value, ConfigError)


def test_zone_id_is_decoded_for_the_socket() -> None:
    """A literal's %25-escaped zone id is given to the socket as the interface name itself."""
    assert numeric_addresses("fe80::1%25eth0") == ["fe80::1%eth0"]
    assert numeric_addresses("[FE80::1%25Eth0]") == ["fe80::1%Eth0"]
    assert numeric_addresses("2001:db8::1%25x") == ["2001:db8::1%x"]
    assert numeric_addresses("hooks%25example") is None


def test_host_names_pass_until_resolved() -> None:
    """Without a resolver a name passes; with one, each of its addresses is checked."""
    check_destination("https://hooks.example/in")
    dns = FakeDns({"hooks.example": ["10.0.0.5"], "meta.example": ["::ffff:169.254.169.254"]})
    check_destination("https://hooks.example/in", resolve=dns)
    with pytest.raises(BlockedDestinationError, match=r"meta\.example resolves to"):
        check_destination("http://meta.example:8080/in", resolve=dns)
    assert dns.asked == [("hooks.example", 443), ("meta.example", 8080)]


def test_allowed_destinations_pass() -> None:
    """Literals in an allowed network and allowed names are accepted."""
    check_destination("http://169.254.10.9/x", ["169.254.10.0/24"])
    check_destination("http://[::ffff:169.254.10.9]/x", ["169.254.10.0/24"])
    dns = FakeDns({"metadata.internal": ["169.254.169.254"]})
    check_destination("http://metadata.internal/x", ["metadata.internal"], resolve=dns)


@pytest.mark.parametrize(
    "url", [f"ftp://hooks.example/x?token={TOKEN}", "file:///etc/passwd", "gopher://x/", "x"]
)
def test_other_schemes_are_refused(url: str) -> None:
    """Only http and https: anything else is a ConfigError that does not quote the URL."""
    with pytest.raises(ConfigError, match="http:// or https://") as info:
        check_destination(url)
    assert TOKEN not in str(info.value)


# -- the config -----------------------------------------------------------------------


def _config(tmp_path: Path, url: str, delivery: str = "") -> Path:
    path = tmp_path / "syncd.toml"
    path.write_text(
        f'[[authors]]\nname = "Zhida Jiang"\n{delivery}\n'
        f'[[webhooks]]\nname = "ok"\nurl = "http://127.0.0.1:9000/h"\nsecret = "{WEBHOOK_SECRET}"\n'
        f'[[webhooks]]\nname = "meta"\nurl = "{url}"\nsecret = "{WEBHOOK_SECRET}"\n',
        encoding="utf-8",
    )
    return path


def test_config_refuses_a_blocked_literal_naming_the_key(tmp_path: Path) -> None:
    """A webhook URL at 169.254.169.254 stops the config load at webhooks[1].url."""
    url = f"http://u:pa55word@169.254.169.254/latest?token={TOKEN}"
    with pytest.raises(ConfigError) as info:
        load_settings(_config(tmp_path, url))
    message = str(info.value)
    assert f"webhooks[1].url: {BLOCKED_MESSAGE}" in message
    assert TOKEN not in message and "pa55word" not in message
    assert "webhooks[0]" not in message


@pytest.mark.parametrize("url", ["http://[fe80::1%25eth0]/h", "http://[fe80::1%25nowhere]:81/"])
def test_config_refuses_a_literal_with_a_zone_id(tmp_path: Path, url: str) -> None:
    """A link-local literal with a zone id stops the config load at webhooks[1].url."""
    with pytest.raises(ConfigError, match=r"webhooks\[1\]\.url: destination fe80::1%"):
        load_settings(_config(tmp_path, url))


@pytest.mark.parametrize("url", ["HTTP://127.0.0.1:9000/h", "Https://hooks.example/h"])
def test_config_takes_schemes_in_any_case(tmp_path: Path, url: str) -> None:
    """Schemes are case-insensitive: HTTP:// and Https:// URLs are accepted as they are."""
    settings = load_settings(_config(tmp_path, url))
    assert settings.webhooks[1].url == url


def test_config_allows_listed_destinations(tmp_path: Path) -> None:
    """allow_destinations lets a blocked literal through; host names are not resolved at load."""
    allow = '[delivery]\nallow_destinations = ["169.254.169.254"]'
    settings = load_settings(_config(tmp_path, "http://169.254.169.254/x", allow))
    assert settings.delivery.allow_destinations == ("169.254.169.254",)
    load_settings(_config(tmp_path, "http://no-such-host.invalid/x"))


def test_config_refuses_a_bad_allow_list_entry(tmp_path: Path) -> None:
    """A malformed allow_destinations entry is named under its key."""
    allow = '[delivery]\nallow_destinations = ["169.254.0.0/33"]'
    with pytest.raises(ConfigError, match=r"delivery\.allow_destinations: .*169\.254\.0\.0/33"):
        load_settings(_config(tmp_path, "http://127.0.0.1:1/x", allow))


def test_allow_list_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SYNCD_DELIVERY_ALLOW_DESTINATIONS (a JSON list) overrides the file like other keys."""
    monkeypatch.setenv("SYNCD_DELIVERY_ALLOW_DESTINATIONS", json.dumps(["169.254.0.0/16"]))
    settings = load_settings(_config(tmp_path, "http://169.254.169.254/x"))
    assert settings.delivery.allow_destinations == ("169.254.0.0/16",)


# -- the sender -----------------------------------------------------------------------


def _send(sender: WebhookSender, url: str) -> DeliveryResult:
    msg_id, body = test_body(datetime.now(UTC))
    return sender.send(url, [WEBHOOK_SECRET], msg_id, body)


def test_name_resolving_to_metadata_is_a_failed_attempt(receiver: Receiver) -> None:
    """A name that resolves to 169.254.169.254 is a failed attempt, nothing sent, clear error."""
    dns = FakeDns({"hooks.example": ["169.254.169.254"]})
    with WebhookSender(timeout=2.0, resolve=dns) as sender:
        started = time.monotonic()
        result = _send(sender, f"http://hooks.example:{receiver.port}/hook?token={TOKEN}")
    assert (result.outcome, result.status, result.retry_after) == ("retry", None, None)
    assert result.error == (
        "destination hooks.example resolves to 169.254.169.254, which is blocked"
        " (link-local/metadata); allow it with [delivery] allow_destinations"
    )
    assert time.monotonic() - started < 1.0
    assert dns.asked == [("hooks.example", receiver.port)]
    assert receiver.received == []


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254:{port}/hook",
        "http://[::ffff:169.254.169.254]:{port}/hook",
        "http://2852039166:{port}/hook",
        "http://[fe80::1%25eth0]:{port}/hook",
        "http://[fe80::1%25no-such-interface]:{port}/hook",
    ],
)
def test_blocked_literal_is_refused_at_send_time_too(receiver: Receiver, url: str) -> None:
    """A literal that skipped the config check is refused before any connection."""
    dns = FakeDns({})
    with WebhookSender(timeout=2.0, resolve=dns) as sender:
        result = _send(sender, url.format(port=receiver.port))
    assert result.outcome == "retry" and result.error is not None
    assert "is blocked (link-local/metadata)" in result.error
    assert dns.asked == []


def test_uppercase_scheme_is_delivered(receiver: Receiver) -> None:
    """A URL written HTTP:// is sent like its lower-case spelling."""
    with WebhookSender(timeout=2.0) as sender:
        result = _send(sender, receiver.url.replace("http://", "HTTP://", 1))
    assert result.outcome == "delivered", result.error
    assert len(receiver.delivered) == 1


def test_connection_goes_to_the_checked_address(receiver: Receiver) -> None:
    """The name is resolved once per connection, and the POST reaches the address checked."""
    # hooks.example exists only in the fake resolver, so the delivery can only
    # succeed if the socket connects to the address the guard checked.
    dns = FakeDns({"hooks.example": ["127.0.0.1"]})
    with WebhookSender(timeout=2.0, resolve=dns) as sender:
        first = _send(sender, f"http://hooks.example:{receiver.port}/hook")
        dns.answers["hooks.example"] = ["169.254.169.254"]  # rebinding, too late for the pool
        second = _send(sender, f"http://hooks.example:{receiver.port}/hook")
    assert (first.outcome, second.outcome) == ("delivered", "delivered")
    assert dns.asked == [("hooks.example", receiver.port)]
    assert {r.headers["host"] for r in receiver.delivered} == {f"hooks.example:{receiver.port}"}
    with WebhookSender(timeout=2.0, resolve=dns) as fresh:
        third = _send(fresh, f"http://hooks.example:{receiver.port}/hook")
    assert third.outcome == "retry" and third.error is not None and "blocked" in third.error
    assert len(receiver.received) == 2


def test_system_resolver_is_the_default(receiver: Receiver) -> None:
    """By default ``localhost`` is resolved with getaddrinfo and reaches the receiver."""
    assert "127.0.0.1" in resolve_host("localhost", receiver.port)
    with WebhookSender(timeout=2.0) as sender:
        result = _send(sender, f"http://localhost:{receiver.port}/hook")
    assert result.outcome == "delivered", result.error


def test_next_address_is_tried_when_one_refuses(receiver: Receiver) -> None:
    """Like socket.create_connection, a refused address falls through to the next checked one."""
    # The receiver listens on 127.0.0.1 only, so 127.0.0.2 refuses the same port.
    dns = FakeDns({"hooks.example": ["127.0.0.2", "127.0.0.1"]})
    with WebhookSender(timeout=2.0, resolve=dns) as sender:
        result = _send(sender, f"http://hooks.example:{receiver.port}/hook")
    assert result.outcome == "delivered"
    assert len(receiver.delivered) == 1


def test_unresolvable_name_is_a_connection_error(receiver: Receiver) -> None:
    """A name the resolver does not know is a ConnectError attempt, as without the guard."""
    with WebhookSender(timeout=2.0, resolve=FakeDns({})) as sender:
        result = _send(sender, f"http://nowhere.example:{receiver.port}/hook?token={TOKEN}")
    assert (result.outcome, result.status) == ("retry", None)
    assert result.error is not None and result.error.startswith("ConnectError")
    assert TOKEN not in result.error


def test_allowed_name_is_not_blocked() -> None:
    """An allowed name resolving to a link-local address gets a real connection attempt."""
    dns = FakeDns({"metadata.internal": ["169.254.1.1"]})
    with WebhookSender(
        timeout=0.3, resolve=dns, allow_destinations=["metadata.internal"]
    ) as sender:
        result = _send(sender, "http://metadata.internal:9/hook")
    assert result.outcome == "retry" and result.error is not None
    assert "blocked" not in result.error
    assert dns.asked == [("metadata.internal", 9)]


def test_a_custom_transport_is_checked_before_sending() -> None:
    """With an injected transport the destination is checked right before each send."""
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(str(request.url))
        return httpx.Response(204, stream=httpx.ByteStream(b""))

    dns = FakeDns({"hooks.example": ["10.0.0.5"], "meta.example": ["169.254.169.254"]})
    transport = httpx.MockTransport(handler)
    with WebhookSender(timeout=2.0, transport=transport, resolve=dns) as sender:
        assert _send(sender, "http://hooks.example/hook").outcome == "delivered"
        blocked = _send(sender, "http://meta.example/hook")
        unknown = _send(sender, "http://nowhere.example/hook")
    assert blocked.outcome == "retry" and "is blocked" in (blocked.error or "")
    assert unknown.outcome == "retry" and (unknown.error or "").startswith("ConnectError")
    assert calls == ["http://hooks.example/hook"]


# -- redirects ------------------------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirect_to_another_receiver_is_never_followed(receiver: Receiver, status: int) -> None:
    """A 3xx pointing at a second receiver is a failed attempt; the second gets nothing."""
    with Receiver([WEBHOOK_SECRET]) as second:
        receiver.always(status, headers={"Location": second.url})
        with WebhookSender(timeout=2.0) as sender:
            results = [_send(sender, receiver.url) for _ in range(3)]
        time.sleep(0.2)  # a follow-up request, if any, would have arrived by now
        assert second.received == []
    assert [(r.outcome, r.status) for r in results] == [("retry", status)] * 3
    assert len(receiver.received) == 3
    assert all(
        f"redirects are not followed (Location: {second.url})" in (r.error or "") for r in results
    )


def test_redirect_to_metadata_is_not_followed_either(receiver: Receiver) -> None:
    """A receiver cannot bounce syncd to the metadata service with a redirect."""
    receiver.always(307, headers={"Location": "http://169.254.169.254/latest/meta-data/"})
    seen: list[str] = []
    lock = threading.Lock()

    def resolve(host: str, port: int) -> Sequence[str]:
        with lock:
            seen.append(host)
        return ["127.0.0.1"]

    with WebhookSender(timeout=2.0, resolve=resolve) as sender:
        result = _send(sender, receiver.url)
    assert (result.outcome, result.status) == ("retry", 307)
    assert seen == []  # the receiver's literal address needs no lookup, and nothing else ran
    assert len(receiver.received) == 1
