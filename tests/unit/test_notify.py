"""[[notify]] tables: their configuration, and one Apprise send to a real loopback server."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import apprise
import pytest

from syncd.config import load_settings
from syncd.delivery.apprise_sender import AppriseSender
from syncd.domain.destinations import DestinationPolicy
from syncd.domain.vocabulary import DeliveryFormat, DeliveryGroup
from syncd.errors import ConfigError
from syncd.render.notification import BodyFormat
from syncd.service.app import endpoints_from
from tests.recorder import Recorder

TOKEN = "tok3n-Sekrit-4711"
INSTALLATION_KEY = b"an installation key of 32 bytes!"
PASSWORD = "pa55-Sekrit-0815"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "syncd.toml"
    path.write_text('[[authors]]\nname = "A. Author"\n' + text, encoding="utf-8")
    return path


def _fixed(title: str, body: str) -> Callable[[BodyFormat], tuple[str, str]]:
    """A message that is ``(title, body)`` in whatever format it is asked for."""
    return lambda _: (title, body)


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    with Recorder() as running:
        yield running


class TestConfig:
    def test_each_url_is_a_target_grouped_by_cycle(self, tmp_path: Path) -> None:
        """Targets are named <name>#N, unsigned, Apprise-formatted, one message per cycle."""
        path = _write(
            tmp_path,
            f"""
[[notify]]
name = "lab"
urls = ["json://127.0.0.1:9/hook", "tgram://123456789:{TOKEN}/4242"]
events = ["paper.revised"]
kinds = ["title"]
timeout = 3
""",
        )
        settings = load_settings(path)
        endpoints = endpoints_from(settings, lambda: INSTALLATION_KEY)
        assert sorted(endpoints) == ["lab#1", "lab#2"]
        second = endpoints["lab#2"]
        assert second.spec.format == DeliveryFormat.APPRISE
        assert second.spec.group == DeliveryGroup.CYCLE
        assert (second.spec.events, second.spec.kinds) == (("paper.revised",), ("title",))
        assert (second.secrets, second.timeout) == ((), 3)
        assert TOKEN not in repr(settings) + repr(endpoints)

    def test_group_event_is_kept(self, tmp_path: Path) -> None:
        path = _write(tmp_path, '[[notify]]\nname = "n"\nurls = ["json://h/"]\ngroup = "event"\n')
        endpoints = endpoints_from(load_settings(path), lambda: INSTALLATION_KEY)
        assert endpoints["n#1"].spec.group == DeliveryGroup.EVENT

    @pytest.mark.parametrize(
        ("table", "needle"),
        [
            ('urls = ["json://h/", "nosuchservice://{token}@h/"]', "notify[0].urls[1]: "),
            ('urls = ["tgram://"]', "notify[0].urls[0]: "),
            ("urls = []", "notify[0].urls: "),
            ('urls = ["json://h/"]\nkinds = ["color"]', "notify[0].kinds: "),
            ('urls = ["json://h/"]\nevents = ["paper.eaten"]', "notify[0].events: "),
            ('urls = ["json://h/"]\nsecret = "{token}"', "notify[0].secret: "),
        ],
    )
    def test_invalid_tables_name_the_key_and_never_the_url(
        self, tmp_path: Path, table: str, needle: str
    ) -> None:
        path = _write(tmp_path, f'[[notify]]\nname = "n"\n{table.format(token=TOKEN)}\n')
        with pytest.raises(ConfigError) as raised:
            load_settings(path)
        assert needle in str(raised.value)
        assert TOKEN not in str(raised.value)

    def test_names_are_distinct_from_webhooks_and_targets(self, tmp_path: Path) -> None:
        path = _write(
            tmp_path,
            """
[[webhooks]]
name = "lab"
url = "https://hooks.slack.com/services/T/B/x"
format = "slack"

[[notify]]
name = "lab"
urls = ["json://h/"]

[[notify]]
name = "ops"
urls = ["json://h/", "json://h/2"]

[[notify]]
name = "ops#2"
urls = ["json://h/"]
""",
        )
        with pytest.raises(ConfigError, match=r"two delivery targets: lab, ops#2$"):
            load_settings(path)

    def test_a_blocked_address_is_refused_at_load_unless_allowed(self, tmp_path: Path) -> None:
        table = (
            f'[[notify]]\nname = "n"\nurls = ["json://h/", "json://u:{TOKEN}@169.254.169.254/"]\n'
        )
        with pytest.raises(ConfigError) as raised:
            load_settings(_write(tmp_path, table))
        assert "notify[0].urls[1]: destination 169.254.169.254 is blocked" in str(raised.value)
        assert TOKEN not in str(raised.value)
        allowed = '[delivery]\nallow_destinations = ["169.254.169.254"]\n' + table
        assert len(load_settings(_write(tmp_path, allowed)).notify) == 1

    def test_a_webhook_cannot_take_the_apprise_format(self, tmp_path: Path) -> None:
        path = _write(tmp_path, '[[webhooks]]\nurl = "https://h/"\nformat = "apprise"\n')
        with pytest.raises(ConfigError, match=r"webhooks\[0\]\.format: .*\[\[notify\]\]"):
            load_settings(path)

    def test_without_the_extra_a_notify_table_is_exit_2_naming_it(self, tmp_path: Path) -> None:
        path = _write(tmp_path, f'[[notify]]\nname = "n"\nurls = ["tgram://1:{TOKEN}/2"]\n')
        done = _without_apprise(
            "from syncd.cli import main\n"
            f"sys.exit(main(['--config', {str(path)!r}, 'webhooks', 'list']))\n"
        )
        assert done.returncode == 2
        assert "notify[0]: " in done.stderr
        assert "pip install 'syncd[apprise]'" in done.stderr
        assert TOKEN not in done.stderr + done.stdout

    def test_without_the_extra_webhooks_alone_still_load(self, tmp_path: Path) -> None:
        path = _write(tmp_path, "")
        done = _without_apprise(
            f"from syncd.config import load_settings\nprint(load_settings({str(path)!r}).notify)\n"
        )
        assert (done.returncode, done.stdout) == (0, "()\n"), done.stderr


def _without_apprise(script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a fresh Python where importing ``apprise`` fails, as when not installed.

    (``None`` in ``sys.modules`` makes ``import apprise`` raise ImportError.)
    """
    return subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['apprise'] = None\n" + script],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


class TestAppriseSender:
    @pytest.mark.parametrize(
        ("scheme", "path", "sent_path"),
        [("json", "/hook", "/hook"), ("form", "/hook", "/hook"), ("ntfy", "/alerts", "/")],
    )
    def test_title_and_body_arrive(
        self, recorder: Recorder, scheme: str, path: str, sent_path: str
    ) -> None:
        """json:// and form:// post to the path; ntfy:// on a host of its own posts the topic."""
        url = f"{scheme}://127.0.0.1:{recorder.port}{path}"
        result = AppriseSender.allowing().send(
            url, 5, "evt_1", _fixed("Title *v2*", "- **added** x\n- y")
        )
        assert (result.outcome, result.error) == ("delivered", None)
        (received,) = recorder.received
        assert (received.method, received.path) == ("POST", sent_path)
        fields = received.fields()
        assert (fields["title"], fields["message"]) == ("Title *v2*", "- **added** x\n- y")
        if scheme == "ntfy":
            assert fields["topic"] == "alerts"

    def test_a_failure_is_a_retry_with_a_scrubbed_error(self, recorder: Recorder) -> None:
        """Apprise's reason is kept; the URL's password, path and query are not."""
        recorder.status = 500
        url = f"json://user:{PASSWORD}@127.0.0.1:{recorder.port}/{TOKEN}?-X-Key={TOKEN}"
        result = AppriseSender.allowing().send(url, 5, "evt_1", _fixed("t", "b"))
        assert result.outcome == "retry"
        assert result.error is not None
        assert "500" in result.error
        assert PASSWORD not in result.error
        assert TOKEN not in result.error
        assert len(recorder.received) == 1

    def test_a_token_in_the_host_is_scrubbed_from_errors(self) -> None:
        """Telegram's bot token is the URL's "host": a connection error must not name it."""
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            port = closed.getsockname()[1]
        url = f"json://{TOKEN}.localhost:{port}/x"
        sender = AppriseSender(DestinationPolicy(), resolve=lambda host, port: ["127.0.0.1"])
        result = sender.send(url, 5, "evt_1", _fixed("t", "b"))
        assert result.outcome == "retry"
        assert result.error
        assert TOKEN.lower() not in result.error.lower()

    def test_a_blocked_address_is_refused_before_sending(self) -> None:
        result = AppriseSender.allowing().send(
            "json://169.254.169.254/x", 5, "evt_1", _fixed("t", "b")
        )
        assert result.outcome == "retry"
        # The host is a part of the URL, and errors name none (it may be a token).
        assert "destination [redacted] is blocked" in (result.error or "")

    def test_a_host_name_is_checked_where_it_resolves(self, recorder: Recorder) -> None:
        """The name resolves to a metadata address: refused, and nothing reaches the server."""
        sender = AppriseSender(DestinationPolicy(), resolve=lambda host, port: ["169.254.169.254"])
        result = sender.send(
            f"json://receiver.test:{recorder.port}/x", 5, "evt_1", _fixed("t", "b")
        )
        assert result.outcome == "retry"
        assert "resolves to 169.254.169.254, which is blocked" in (result.error or "")
        assert recorder.received == []

    def test_an_allowed_destination_is_sent_to(self, recorder: Recorder) -> None:
        """Allowed by name, a host is not checked at all (here it would say blocked)."""
        sender = AppriseSender(
            DestinationPolicy.from_allow_list(["localhost"]),
            resolve=lambda host, port: ["169.254.169.254"],
        )
        url = f"json://localhost:{recorder.port}/x"
        assert sender.send(url, 5, "evt_1", _fixed("t", "b")).outcome == "delivered"
        assert len(recorder.received) == 1

    def test_a_token_host_is_not_resolved(self) -> None:
        """Telegram's "host" is its bot token: never looked up in the DNS."""
        looked_up: list[str] = []

        def resolve(host: str, port: int) -> list[str]:
            looked_up.append(host)
            return ["127.0.0.1"]

        sender = AppriseSender(DestinationPolicy(), resolve=resolve)
        sender._check_destination(apprise.Apprise.instantiate(f"tgram://123456789:{TOKEN}/4242"))
        assert looked_up == []

    def test_a_silent_server_is_given_up_at_the_timeout(self) -> None:
        """A server that accepts and never answers: a failed attempt, not a hung worker.

        The kernel completes the handshake for the backlog; nobody reads or answers.
        """
        with socket.socket() as listening:
            listening.bind(("127.0.0.1", 0))
            listening.listen()
            url = f"json://127.0.0.1:{listening.getsockname()[1]}/x"
            result = AppriseSender.allowing().send(url, 0.5, "evt_1", _fixed("t", "b"))
        assert result.outcome == "retry"
        assert result.error
