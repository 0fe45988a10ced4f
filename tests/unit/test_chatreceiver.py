"""Tests for tests/chatreceiver.py: the Slack- and Discord-shaped receivers and their limits."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.chatreceiver import DiscordReceiver, SlackReceiver, discord_problem, slack_problem


def post(url: str, payload: Any) -> httpx.Response:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    with httpx.Client(timeout=5.0) as client:
        return client.post(url, content=body, headers={"content-type": "application/json"})


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def embed(**fields: Any) -> dict[str, Any]:
    return {"title": "t", "description": "d", **fields}


# ---- Slack


def test_slack_accepts_a_message_and_answers_ok() -> None:
    """A body within the limits is answered 200 ``ok`` and counted as delivered."""
    message = {"text": "fallback", "blocks": [section("*hi*")]}
    with SlackReceiver() as slack:
        answer = post(slack.url, message)
        [got] = slack.delivered
    assert (answer.status_code, answer.text) == (200, "ok")
    assert got.json == message and got.error is None


def test_slack_scripted_errors_and_rate_limit() -> None:
    """Scripted error codes come with Slack's status; a 429 carries Retry-After."""
    with SlackReceiver() as slack:
        slack.fail_with("channel_is_archived")
        slack.fail_with("no_service")
        slack.rate_limit(retry_after=3)
        answers = [post(slack.url, {"text": "x"}) for _ in range(4)]
    assert [(a.status_code, a.text) for a in answers] == [
        (410, "channel_is_archived"),
        (404, "no_service"),
        (429, "rate_limited"),
        (200, "ok"),
    ]
    assert answers[2].headers["retry-after"] == "3"


def test_slack_refuses_an_oversized_message_without_using_the_script() -> None:
    """A section over 3,000 characters is 400 ``invalid_blocks``; the script waits."""
    with SlackReceiver() as slack:
        slack.respond_with(500)
        refused = post(slack.url, {"text": "x", "blocks": [section("a" * 3001)]})
        scripted = post(slack.url, {"text": "x"})
        first, _ = slack.received
    assert (refused.status_code, refused.text) == (400, "invalid_blocks")
    assert scripted.status_code == 500
    assert first.error is not None and "3001" in first.error and slack.delivered == []


def test_slack_refuses_what_is_not_json() -> None:
    with SlackReceiver() as slack:
        answer = post(slack.url, b"text=hello")
    assert (answer.status_code, answer.text) == (400, "invalid_payload")


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ({"text": "x", "blocks": [section("a")] * 50}, None),
        ({"text": "x", "blocks": [section("a")] * 51}, "51 blocks"),
        ({"blocks": [section("a" * 3000)]}, None),
        ({"blocks": [{"type": "header", "text": {"type": "plain_text", "text": "h" * 150}}]}, None),
        (
            {"blocks": [{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}]},
            "151",
        ),
        ({"blocks": [{"type": "header", "text": {"type": "mrkdwn", "text": "h"}}]}, "text type"),
        ({"text": "a" * 39_999}, None),
        ({"text": "a" * 10_000, "blocks": [section("b" * 3000)] * 10}, "40000"),
        (
            {"blocks": [{"type": "context", "elements": [{"type": "mrkdwn", "text": "c"}] * 11}]},
            "context",
        ),
        (
            {"blocks": [{"type": "section", "fields": [{"type": "mrkdwn", "text": "f"}] * 11}]},
            "fields",
        ),
        ({"blocks": [{"type": "image"}]}, "unknown block type"),
        ({"blocks": [section("")]}, "empty text"),
        ({}, "no_text"),
    ],
)
def test_slack_limits(payload: dict[str, Any], problem: str | None) -> None:
    """Each documented Slack limit, just inside and just past it."""
    found = slack_problem(json.dumps(payload).encode())
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


# ---- Discord


def test_discord_accepts_a_message_with_204() -> None:
    message = {"embeds": [embed(color=0x2EA043)], "allowed_mentions": {"parse": []}}
    with DiscordReceiver() as discord:
        answer = post(discord.url, message)
        [got] = discord.delivered
    assert answer.status_code == 204 and got.json == message


def test_discord_rate_limit_in_body_and_header() -> None:
    """A 429 says retry_after as float seconds in its JSON and, if asked, its header."""
    with DiscordReceiver() as discord:
        discord.rate_limit(1.5)
        discord.rate_limit(2.5, header=False)
        first, second = (post(discord.url, {"content": "x"}) for _ in range(2))
    assert first.status_code == 429 and first.headers["retry-after"] == "1.5"
    assert first.json() == {
        "message": "You are being rate limited.",
        "retry_after": 1.5,
        "global": False,
    }
    assert "retry-after" not in second.headers and second.json()["retry_after"] == 2.5


def test_discord_refuses_empty_and_oversized_messages() -> None:
    """An empty message is 50006; one past a limit 50035; neither uses up the script."""
    with DiscordReceiver() as discord:
        discord.fail_with(10015, "Unknown Webhook", status=404)
        empty = post(discord.url, {"embeds": []})
        oversized = post(discord.url, {"embeds": [embed(title="t" * 257)]})
        scripted = post(discord.url, {"content": "x"})
    assert empty.status_code == 400 and empty.json()["code"] == 50006
    assert empty.json()["message"] == "Cannot send an empty message"
    assert oversized.status_code == 400 and oversized.json()["code"] == 50035
    assert scripted.status_code == 404 and scripted.json()["code"] == 10015
    assert oversized.headers["content-type"] == "application/json"


def fields(count: int, value: str = "v") -> list[dict[str, str]]:
    return [{"name": "n", "value": value}] * count


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ({"embeds": [embed()] * 10}, None),
        ({"embeds": [embed()] * 11}, "at most 10"),
        ({"embeds": [embed(title="t" * 256, description="d" * 4096)]}, None),
        ({"embeds": [embed(description="d" * 4097)]}, "4097"),
        ({"embeds": [embed(fields=fields(25))]}, None),
        ({"embeds": [embed(fields=fields(26))]}, "fields"),
        ({"embeds": [embed(fields=fields(1, "v" * 1025))]}, "1025"),
        ({"embeds": [embed(fields=fields(1, " "))]}, "empty"),
        ({"embeds": [embed(description="d" * 3000), embed(description="d" * 2998)]}, None),
        ({"embeds": [embed(description="d" * 3000), embed(description="d" * 2999)]}, "6001"),
        ({"embeds": [embed(color=0x1000000)]}, "color"),
        ({"embeds": [embed(url="javascript:alert(1)")]}, "url"),
        ({"embeds": [embed(timestamp="yesterday")]}, "timestamp"),
        ({"embeds": [embed(timestamp="2026-12-01T03:00:00+00:00")]}, None),
        ({"content": "c" * 2001}, "content"),
        ({"content": "x", "allowed_mentions": {"parse": ["everyone"]}}, None),
        ({"content": "x", "allowed_mentions": {"parse": ["channels"]}}, "allowed_mentions"),
    ],
)
def test_discord_limits(payload: dict[str, Any], problem: str | None) -> None:
    """Each documented Discord limit, just inside and just past it."""
    found = discord_problem(json.dumps(payload).encode())
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found
