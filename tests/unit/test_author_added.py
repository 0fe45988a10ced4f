"""``author.added`` as every target shows it: one line, "Now following Ke Zhang: 43 papers"."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from syncd.delivery.messages import message_body
from syncd.domain.model import Event
from syncd.domain.views import event_json
from syncd.domain.vocabulary import DeliveryFormat, EventType
from syncd.render.describe import describe, event_headline
from syncd.render.notification import notification
from tests.chatreceiver import discord_problem, slack_problem

LINE = "Now following Ke Zhang: 43 papers (5 held for review)"


def _added(**author: Any) -> Event:
    fields = {
        "name": "Ke Zhang",
        "orcid": "0000-0002-7970-7855",
        "arxiv_author_id": None,
        "papers": 43,
        "claimed": 12,
        "candidates": 5,
        "candidate_ids": ["2601.00011", "2601.00012", "2601.00013", "2601.00014", "2601.00015"],
        "needs_review": False,
    }
    return Event(
        seq=1,
        id="evt_1",
        type=EventType.AUTHOR_ADDED,
        created_at=datetime(2026, 12, 1, tzinfo=UTC),
        author="Ke Zhang",
        # filed under one of the author's papers, which the event is not about
        paper_key="2601.00001",
        arxiv_id="2601.00001",
        kinds=(),
        changes={"author": fields | author},
        record=None,
    )


def test_the_line_in_every_place_a_headline_is_read() -> None:
    event = _added()
    described = describe(event, public_url="https://syncd.example.org")
    assert described.headline == described.title == LINE
    assert described.arxiv_id is None
    assert "12 papers claimed on arXiv" in described.summary
    assert "2601.00011" in described.summary
    urls = [link.url for link in described.links]
    assert urls == [
        "https://arxiv.org/a/0000-0002-7970-7855",
        "https://orcid.org/0000-0002-7970-7855",
        "https://syncd.example.org/authors/Ke%20Zhang",
    ]
    headline = event_headline(event.type, None, None, None, (), changes=event.changes)
    assert headline == LINE


def test_nothing_held_and_one_paper() -> None:
    described = describe(_added(papers=1, candidates=0, candidate_ids=[]), public_url=None)
    assert described.headline == "Now following Ke Zhang: 1 paper"


def test_needs_review_is_said() -> None:
    event = _added(orcid=None, papers=0, needs_review=True)
    described = describe(event, public_url=None)
    assert described.headline == "Now following Ke Zhang: 0 papers (5 held for review)"
    assert "needs review" in described.summary
    assert described.links == ()


@pytest.mark.parametrize("format", [DeliveryFormat.SLACK, DeliveryFormat.DISCORD])
def test_chat_messages_carry_the_line(format: DeliveryFormat) -> None:
    body = message_body(format, [_added()], public_url=None)
    assert LINE in body.decode()
    problem = slack_problem if format == DeliveryFormat.SLACK else discord_problem
    assert problem(body) is None
    digest = message_body(format, [_added(), _added()], public_url=None)
    assert problem(digest) is None


def test_a_discord_embed_shows_the_author_and_no_paper_fields() -> None:
    """An author's event has no version and no changed field: its embed shows the author."""
    body = message_body(DeliveryFormat.DISCORD, [_added()], public_url=None)
    (embed,) = json.loads(body)["embeds"]
    assert embed["fields"] == [{"name": "Author", "value": "Ke Zhang", "inline": True}]


def test_apprise_notification_carries_the_line() -> None:
    title, body = notification([_added()], public_url=None)
    assert LINE in title or LINE in body


def test_the_payload_is_about_no_paper() -> None:
    payload = event_json(_added())
    assert payload["type"] == "author.added"
    assert payload["paper"] is None
    assert payload["record"] is None
    assert payload["changes"]["author"]["papers"] == 43
    json.dumps(payload)
