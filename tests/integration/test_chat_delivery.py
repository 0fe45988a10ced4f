"""Slack- and Discord-format endpoints through the outbox, to receivers shaped like them."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from syncd.delivery.sender import WebhookSender
from syncd.httpclient import MAX_RETRY_AFTER
from syncd.storage.schema import deliveries_table
from tests import receiver as receiver_module
from tests.chatreceiver import DiscordReceiver, SlackReceiver
from tests.helpers import webhook_config
from tests.integration.conftest import Syncd
from tests.receiver import Receiver

SCHEDULE = "[0.05, 0.05, 0.05]"
# Where Slack keeps an incoming webhook's credentials: in the URL's path.
TOKEN_PATH = "/services/T0A1B2C3D/B4E5F6G7H/q9WvXyZ8tOkEnInThEpAtH"


def _chat_hook(
    syncd: Syncd,
    receiver: Receiver,
    format: str,
    *,
    group: str | None = None,
    schedule: str = SCHEDULE,
    filters: str = "",
) -> None:
    grouping = f'group = "{group}"' if group else ""
    syncd.sections = webhook_config(
        receiver.url,
        name=f"lab-{format}",
        schedule=schedule,
        endpoint=f'format = "{format}"\n{grouping}\n{filters}',
    )


def _last_errors(syncd: Syncd) -> list[str | None]:
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.connect() as conn:
            return list(conn.scalars(sa.select(deliveries_table.c.last_error)))
    finally:
        engine.dispose()


def _unsigned_json(received: Receiver) -> None:
    for posted in received.received:
        assert posted.headers["content-type"] == "application/json"
        assert not any(name.startswith("webhook-") for name in posted.headers)


def test_a_first_sync_is_one_slack_message(syncd: Syncd, slack: SlackReceiver) -> None:
    """Seven linked papers reach a Slack endpoint (grouped by cycle by default) as one
    unsigned message within Slack's limits, counted as one delivery."""
    _chat_hook(syncd, slack, "slack")
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    assert "1 attempt, 0 pending, 0 dead-lettered" in outcome.out
    (message,) = slack.received
    assert message.verified, message.error
    assert message.status_sent == 200
    _unsigned_json(slack)
    (endpoint,) = syncd.json("webhooks", "list")
    assert (endpoint["pending"], endpoint["delivered"], endpoint["dead"]) == (0, 1, 0)


def test_an_event_grouped_discord_endpoint_gets_one_message_per_event(
    syncd: Syncd, discord: DiscordReceiver
) -> None:
    """group = "event": one embed message per event, each within Discord's limits, 204."""
    _chat_hook(syncd, discord, "discord", group="event")
    assert syncd("sync").code == 0
    assert len(discord.received) == 7
    assert all(r.verified and r.status_sent == 204 for r in discord.received)
    _unsigned_json(discord)


def test_filters_apply_to_chat_digests(syncd: Syncd, slack: SlackReceiver) -> None:
    """An endpoint taking only paper.removed gets no message for a cycle of links."""
    _chat_hook(syncd, slack, "slack", filters='events = ["paper.removed"]')
    assert syncd("sync").code == 0
    assert slack.received == []
    (endpoint,) = syncd.json("webhooks", "list")
    assert (endpoint["pending"], endpoint["delivered"]) == (0, 0)


def test_slack_rate_limit_waits_for_retry_after(syncd: Syncd, slack: SlackReceiver) -> None:
    """A 429 with Retry-After: 1 holds the retry back a second, past the 0.5 s step."""
    _chat_hook(syncd, slack, "slack", schedule="[0.5]")
    slack.rate_limit(retry_after=1)
    assert syncd("sync").code == 0
    limited, accepted = slack.received
    assert (limited.status_sent, accepted.status_sent) == (429, 200)
    assert accepted.body == limited.body
    assert accepted.time - limited.time >= 1.0


def test_discord_rate_limit_waits_for_its_json_retry_after(
    syncd: Syncd, discord: DiscordReceiver
) -> None:
    """A Discord 429 saying retry_after 0.8 in its JSON body alone holds the retry back,
    past the 0.5 s step (at most 0.6 with its jitter)."""
    _chat_hook(syncd, discord, "discord", schedule="[0.5]")
    discord.rate_limit(retry_after=0.8, header=False)
    assert syncd("sync").code == 0
    limited, accepted = discord.received
    assert (limited.status_sent, accepted.status_sent) == (429, 204)
    assert accepted.time - limited.time >= 0.8


@pytest.mark.parametrize(("header", "body", "expected"), [(1, 2.5, 2.5), (3, 0.5, 3.0)])
def test_discord_429_takes_the_longer_of_header_and_body(
    discord: DiscordReceiver, header: int, body: float, expected: float
) -> None:
    """With both a Retry-After header and a JSON retry_after, the longer wait counts."""
    discord.respond_with(
        429,
        retry_after=header,
        body=json.dumps({"retry_after": body, "global": False}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with WebhookSender(timeout=2) as sender:
        result = sender.send(discord.url, (), "evt_x", b'{"content":"x"}', format="discord")
    assert (result.outcome, result.status, result.retry_after) == ("retry", 429, expected)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        pytest.param(b'{"retry_after": 1e999}', MAX_RETRY_AFTER, id="1e999"),
        pytest.param(b'{"retry_after": Infinity}', MAX_RETRY_AFTER, id="Infinity"),
        pytest.param(b'{"retry_after": ' + b"9" * 400 + b"}", MAX_RETRY_AFTER, id="400-digits"),
        pytest.param(b'{"retry_after": NaN}', None, id="NaN"),
        pytest.param(b'{"retry_after": -1}', None, id="negative"),
        pytest.param(b'{"retry_after": "5"}', None, id="a-string"),
        pytest.param(b"[" * 60_000, None, id="nested-past-the-recursion-limit"),
    ],
)
def test_a_discord_429_body_asks_a_capped_wait_or_none(
    discord: DiscordReceiver, answer: bytes, expected: float | None
) -> None:
    """A JSON retry_after past any float is the longest wait; one that is no wait, or a
    body no parser finishes, is none: each a plain retry, never an exception."""
    discord.respond_with(429, body=answer, headers={"Content-Type": "application/json"})
    with WebhookSender(timeout=2) as sender:
        result = sender.send(discord.url, (), "evt_x", b'{"content":"x"}', format="discord")
    assert (result.outcome, result.status, result.retry_after) == ("retry", 429, expected)


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def test_a_discord_wait_of_1e999_leaves_every_log_line_json(
    syncd: Syncd, discord: DiscordReceiver
) -> None:
    """Every log line of a sync whose Discord endpoint asks for 1e999 s is strict JSON:
    no Infinity or NaN, which JSON has not."""
    _chat_hook(syncd, discord, "discord", schedule="[0.05]")
    discord.always(
        429, body=b'{"retry_after": 1e999}', headers={"Content-Type": "application/json"}
    )
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    lines = [json.loads(line, parse_constant=_no_constant) for line in outcome.err.splitlines()]
    attempts = [line for line in lines if line["event"] == "webhook_attempt"]
    assert [line["retry_after"] for line in attempts] == [MAX_RETRY_AFTER, MAX_RETRY_AFTER]


def test_invalid_payload_follows_the_schedule_to_the_dead_letter(
    syncd: Syncd, slack: SlackReceiver
) -> None:
    """Slack's 400 invalid_payload is a failed attempt: retried on schedule, then dead."""
    _chat_hook(syncd, slack, "slack")
    slack.fail_with("invalid_payload", times=4)
    outcome = syncd("sync")
    assert "0 pending, 1 dead-lettered" in outcome.out
    assert [r.status_sent for r in slack.received] == [400] * 4
    (error,) = _last_errors(syncd)
    assert error is not None and "invalid_payload" in error
    assert syncd("webhooks", "redeliver", "--dead").out.strip() == "1 delivery queued"
    assert syncd("sync").code == 0
    assert [r.status_sent for r in slack.received][-1] == 200


def test_channel_gone_disables_the_endpoint(syncd: Syncd, slack: SlackReceiver) -> None:
    """Slack's 410 channel_is_archived disables the endpoint; the digest waits, not dead."""
    _chat_hook(syncd, slack, "slack")
    slack.fail_with("channel_is_archived")
    assert syncd("sync").code == 0
    (endpoint,) = syncd.json("webhooks", "list")
    assert endpoint["disabled_at"] is not None
    assert (endpoint["pending"], endpoint["dead"]) == (1, 0)
    assert syncd("sync").code == 0
    assert len(slack.received) == 1


def test_webhooks_test_sends_a_sample_in_the_endpoint_format(
    syncd: Syncd, slack: SlackReceiver, discord: DiscordReceiver
) -> None:
    """`webhooks test NAME` posts a sample chat message and shows the status and answer."""
    _chat_hook(syncd, slack, "slack")
    done = syncd("webhooks", "test", "lab-slack")
    assert done.code == 0, done.err
    assert done.out == "lab-slack: delivered a sample slack message (HTTP 200)\nok\n"
    (sample,) = slack.received
    assert sample.verified, sample.error
    _unsigned_json(slack)
    slack.fail_with("invalid_payload")
    failed = syncd("webhooks", "test", "lab-slack")
    assert failed.code == 1
    assert "HTTP 400" in failed.err and "invalid_payload" in failed.err
    assert syncd("webhooks", "test", "nobody").code == 2
    _chat_hook(syncd, discord, "discord")
    done = syncd("webhooks", "test", "lab-discord")
    assert done.out == "lab-discord: delivered a sample discord message (HTTP 204)\n"
    assert discord.received[0].verified


def test_a_chat_url_never_shows(
    syncd: Syncd, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The token in a Slack URL's path is in no output, log line or stored error, even
    when the receiver echoes the URL and redirects to it."""
    monkeypatch.setattr(receiver_module, "HOOK_PATH", TOKEN_PATH)
    with SlackReceiver() as slack:
        token = TOKEN_PATH.rsplit("/", 1)[1]
        echo = f"invalid_payload for POST {slack.url}".encode()
        slack.always(400, body=echo)
        _chat_hook(syncd, slack, "slack", schedule="[0.05]")
        synced = syncd("sync")
        slack.always(302, headers={"Location": slack.url})
        tested = syncd("webhooks", "test", "lab-slack")
        listed = syncd("webhooks", "list")
        listed_json = syncd("webhooks", "list", "--json")
    assert synced.code == 0 and tested.code == 1
    assert all(r.path == TOKEN_PATH for r in slack.received)
    errors = _last_errors(syncd)
    assert errors and all(error is not None and "HTTP 400" in error for error in errors)
    shown = [synced.out, synced.err, tested.out, tested.err, listed.out, listed_json.out]
    shown += [error or "" for error in errors]
    assert "HTTP 302" in tested.err
    for text in shown:
        assert token not in text
        assert "/services/" not in text
