"""E-mail through Apprise: HTML and plain text written for mail, received by a real SMTP server.

Apprise's ``mailto://`` sends to ``tests.smtpreceiver`` on loopback; each
mail is parsed back with the standard library's ``email`` package.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from email.message import EmailMessage

import apprise
import pytest

from syncd.apprise_urls import body_format
from syncd.delivery.apprise_sender import AppriseSender
from syncd.domain.model import Event
from syncd.render.describe import sample_event
from syncd.render.notification import BodyFormat, notification
from tests.smtpreceiver import SmtpReceiver

PUBLIC = "https://syncd.example.org"
# What Markdown would leave in a body: strike, bold, a link, an escape.
MARKDOWN_SYNTAX = re.compile(r"~~|\*\*|\]\(|\\[\\*_~`|>#\[\]<-]")


@pytest.fixture
def smtp() -> Iterator[SmtpReceiver]:
    with SmtpReceiver() as running:
        yield running


def _mail(smtp: SmtpReceiver, events: list[Event], query: str = "") -> EmailMessage:
    """The one mail that sending ``events`` to ``smtp`` delivers, as the worker sends them."""

    def message(written_in: BodyFormat) -> tuple[str, str]:
        return notification(events, public_url=PUBLIC, body_format=written_in)

    result = AppriseSender.allowing().send(smtp.url(query), 5, "evt_1", message)
    assert (result.outcome, result.error) == ("delivered", None)
    (mail,) = smtp.wait_for(1)
    return mail


def _part(mail: EmailMessage, subtype: str) -> str:
    part = mail.get_body((subtype,))
    assert part is not None, f"no text/{subtype} part"
    assert part.get_content_type() == f"text/{subtype}"
    content = part.get_content()
    assert isinstance(content, str)
    return content


def _sample() -> Event:
    """A revised paper: its version 1 -> 2 and words added to its title."""
    return sample_event(datetime(2026, 3, 1, tzinfo=UTC))


class TestOneChange:
    def test_html_and_plain_text_alternatives(self, smtp: SmtpReceiver) -> None:
        """multipart/alternative: the HTML diff in <del>/<ins>, plain text with PLAIN's marks."""
        mail = _mail(smtp, [_sample()])
        assert mail.get_content_type() == "multipart/alternative"
        html = _part(mail, "html")
        assert re.search(r"<del [^>]*>.*?1.*?</del> → <ins [^>]*>.*?2.*?</ins>", html)
        assert re.search(r"<ins [^>]*>.*?with a revised title.*?</ins>", html)
        assert f'href="{PUBLIC}/papers/2401.00001"' in html
        assert "<style" not in html  # mail clients drop style sheets: inline only
        assert not MARKDOWN_SYNTAX.search(html)
        text = _part(mail, "plain")
        assert "[-1-] → {+2+}" in text
        assert "{+with a revised title+}" in text
        assert f"history: {PUBLIC}/papers/2401.00001" in text
        assert "<" not in text
        assert not MARKDOWN_SYNTAX.search(text)

    def test_the_subject_is_the_headline_as_plain_text(self, smtp: SmtpReceiver) -> None:
        mail = _mail(smtp, [_sample()])
        title, _ = notification([_sample()], public_url=PUBLIC, body_format=BodyFormat.HTML)
        assert mail["Subject"] == title
        assert mail["Subject"].startswith("A sample paper: … (2401.00001) v2")
        assert not MARKDOWN_SYNTAX.search(mail["Subject"])

    def test_arxiv_strings_are_escaped_in_the_html(self, smtp: SmtpReceiver) -> None:
        """A title holding markup shows as text: escaped in the HTML, as written in the text."""
        hostile = "<img src=x onerror=alert(1)> **bold** & [a](b)"
        event = sample_event(datetime(2026, 3, 1, tzinfo=UTC))
        changed = {**event.changes, "title": {"old": "A title", "new": hostile}}
        mail = _mail(smtp, [_with_changes(event, changed)])
        html = _part(mail, "html")
        assert "<img" not in html
        assert "&lt;img src=x onerror=alert(1)&gt;" in html
        assert "<img src=x onerror=alert(1)>" in _part(mail, "plain")

    def test_format_text_in_the_url_sends_plain_text_only(self, smtp: SmtpReceiver) -> None:
        """?format=text asks for plain mail: one text/plain part, PLAIN's marks, no markup."""
        mail = _mail(smtp, [_sample()], "&format=text")
        assert mail.get_content_type() == "text/plain"
        text = _part(mail, "plain")
        assert "[-1-] → {+2+}" in text
        assert not MARKDOWN_SYNTAX.search(text)
        assert "<" not in text.replace("<\u200b", "")


class TestDigest:
    def test_a_digest_lists_every_change_in_both_parts(self, smtp: SmtpReceiver) -> None:
        """Three changes in one mail: each headline in the HTML and the text, subject counts."""
        events = [_renamed(_sample(), f"Paper number {n}", f"2401.0000{n}") for n in range(1, 4)]
        mail = _mail(smtp, events)
        assert mail["Subject"] == "3 changes to Ada Lovelace's papers"
        html, text = _part(mail, "html"), _part(mail, "plain")
        for n in range(1, 4):
            assert f"Paper number {n}" in html
            assert f"Paper number {n}" in text
            assert f"{PUBLIC}/papers/2401.0000{n}" in text
        assert html.count("<hr ") == 2
        assert not MARKDOWN_SYNTAX.search(html + text)


class TestFormatByService:
    @pytest.mark.parametrize(
        ("url", "expected"),
        [
            ("mailto://127.0.0.1:2525?from=a@example.org", "html"),
            ("mailtos://user:pass@example.org", "html"),
            ("mailto://127.0.0.1:2525?from=a@example.org&format=text", "text"),
            ("sendgrid://abcd:user@example.com", "html"),
            ("discord://1234/abcd", "markdown"),
            ("slack://T1/B1/C1", "markdown"),
            ("json://127.0.0.1/x", "markdown"),
            ("ntfy://127.0.0.1/topic", "text"),
        ],
    )
    def test_the_plugin_says_what_it_reads(self, url: str, expected: str) -> None:
        """Markdown where the service renders it, else its own format: HTML for mail, or text."""
        assert body_format(apprise.Apprise.instantiate(url)) == expected


def _with_changes(event: Event, changes: dict[str, dict[str, object]]) -> Event:
    return replace(event, changes=changes)


def _renamed(event: Event, title: str, arxiv_id: str) -> Event:
    record = replace(event.record, title=title, arxiv_id=arxiv_id) if event.record else None
    return replace(event, record=record, arxiv_id=arxiv_id, paper_key=arxiv_id)
