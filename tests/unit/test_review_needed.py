"""``author.review_needed`` as every target shows it: how many wait, and where to review them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from syncd.delivery.messages import message_body
from syncd.domain.model import Event
from syncd.domain.views import event_json
from syncd.domain.vocabulary import EVENT_TYPES, DeliveryFormat, EventType
from syncd.render.describe import describe, event_headline, event_path
from syncd.render.notification import notification
from tests.chatreceiver import discord_problem, slack_problem

LINE = "Review needed for Ke Zhang: 3 new papers held (12 waiting)"
REVIEW = "https://syncd.example.org/authors/Ke%20Zhang#candidates"


def _review(**author: Any) -> Event:
    fields = {
        "name": "Ke Zhang",
        "candidates": 3,
        "candidate_ids": ["2611.00011", "2611.00012", "2611.00013"],
        "waiting": 12,
    }
    return Event(
        seq=7,
        id="evt_7",
        type=EventType.REVIEW_NEEDED,
        created_at=datetime(2026, 12, 1, tzinfo=UTC),
        author="Ke Zhang",
        # filed under the first paper held, which the event is not about alone
        paper_key="2611.00011",
        arxiv_id="2611.00011",
        kinds=(),
        changes={"author": fields | author},
        record=None,
    )


def test_it_is_an_event_type_endpoints_may_filter_on() -> None:
    """`events = ["author.review_needed"]` is a filter a [[webhooks]] table may hold."""
    assert "author.review_needed" in EVENT_TYPES


def test_the_line_says_how_many_and_the_summary_how_to_review() -> None:
    """Headline: how many were held and how many wait; summary: which, and the command;
    the link goes to the candidates on the author's page."""
    event = _review()
    described = describe(event, public_url="https://syncd.example.org")
    assert described.headline == described.title == LINE
    assert described.arxiv_id is None
    assert described.summary == (
        "held for review: 2611.00011, 2611.00012, 2611.00013;"
        " to decide them: syncd authors review 'Ke Zhang'"
    )
    assert [(link.label, link.url) for link in described.links] == [("review", REVIEW)]
    assert event_headline(event.type, None, None, None, (), changes=event.changes) == LINE
    assert event_path(event) == "/authors/Ke%20Zhang#candidates"


def test_all_held_are_new_and_one_is_one_paper() -> None:
    """One paper held, none before: "1 new paper held", no "waiting"; no link without public_url."""
    event = _review(candidates=1, candidate_ids=["2611.00011"], waiting=1)
    described = describe(event, public_url=None)
    assert described.headline == "Review needed for Ke Zhang: 1 new paper held"
    assert described.links == ()


@pytest.mark.parametrize("format", [DeliveryFormat.SLACK, DeliveryFormat.DISCORD])
def test_chat_messages_carry_the_line_and_the_link(format: DeliveryFormat) -> None:
    """Slack and Discord bodies carry the line, the command and the link, within their limits."""
    body = message_body(format, [_review()], public_url="https://syncd.example.org")
    text = body.decode()
    assert LINE in text and REVIEW in text and "syncd authors review" in text
    problem = slack_problem if format == DeliveryFormat.SLACK else discord_problem
    assert problem(body) is None
    digest = message_body(format, [_review(), _review()], public_url=None)
    assert problem(digest) is None


def test_apprise_notification_carries_the_line() -> None:
    """An Apprise notification's title or body has the line; its body the review link."""
    title, body = notification([_review()], public_url="https://syncd.example.org")
    assert LINE in title or LINE in body
    assert REVIEW in body


def test_the_payload_is_about_no_paper() -> None:
    """The webhook payload: no paper, no record; the author's counts and held ids."""
    payload = event_json(_review())
    assert payload["type"] == "author.review_needed"
    assert payload["paper"] is None and payload["record"] is None
    assert payload["changes"]["author"]["waiting"] == 12
    json.dumps(payload)
