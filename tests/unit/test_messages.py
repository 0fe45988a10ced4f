"""Chat messages and Apprise notifications: shapes, limits and escaping of hostile arXiv strings.

Limits are checked with ``tests.chatreceiver``'s own reading of the platforms'
documentation, never with the renderer's constants, so a wrong constant in
syncd cannot hide behind a matching wrong check.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from syncd.delivery.messages import message_body, sample_body
from syncd.domain.model import Event
from syncd.domain.record import Record
from syncd.domain.textcontrols import without_bidi_controls
from syncd.domain.vocabulary import DeliveryFormat, EventType
from syncd.render.describe import describe
from syncd.render.field_diffs import field_diffs
from syncd.render.markdown import MARKDOWN
from syncd.render.mrkdwn import SLACK
from syncd.render.neutral import ZERO_WIDTH_SPACE
from syncd.render.notification import BodyFormat, notification
from syncd.render.text import PLAIN, fit_text, render_diffs
from tests.chatreceiver import DiscordReceiver, SlackReceiver, discord_problem, slack_problem
from tests.hypothesis_profiles import examples
from tests.inert import (
    BIDI_CONTROL,
    assert_discord_inert,
    assert_mail_html_inert,
    assert_markdown_inert,
    assert_slack_inert,
)

PUBLIC = "https://syncd.example.org"
WHEN = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
MIXED_SCRIPTS = "שלום עולם مرحبا 👩‍🔬🧪 e\u0301 Z\u0351\u0358a\u0336lgo"
HOSTILE = [
    "<!channel> <!here> <!everyone>",
    "<http://evil.example|click here>",
    "@everyone @here <@123> <@&456> <#789> <t:1700000000>",
    "*bold* _italic_ ~strike~ `code` ||spoiler|| __under__",
    "[a link](http://evil.example) ![img](http://x/y.png)",
    "# heading\n> quote\n- item\n+ item\n1. item",
    "AT&T &amp; &lt;b&gt; \\*escaped\\*",
    MIXED_SCRIPTS,
    # What Mattermost and Rocket.Chat act on: their mentions, Slack's forms they
    # translate (<!channel> anywhere in a text, even escaped), Markdown links.
    "Results @channel @here @all @everyone [arxiv.org](//evil.example)",
    "<!channel> <@U024BE7LH> <#C024BE7LR> <https://evil.example|arxiv.org>",
    "[arxiv.org]\n\n[arxiv.org]: https://evil.example <https://evil.example>",
    # Unclosed bidi controls would reverse or reorder syncd's words after them.
    "Evil \u202ereversed \u2067isolated \u202bembedded \u200fmarked",
]


def event(
    *,
    type: str = EventType.REVISED,
    title: str = "A study of things",
    abstract: str = "We study things.",
    changes: dict[str, Any] | None = None,
    kinds: tuple[str, ...] = ("title",),
    author: str = "Ada Lovelace",
    authors: tuple[str, ...] = ("Ada Lovelace",),
    seq: int = 1,
    arxiv_id: str | None = "2401.00001",
    withdrawn: bool = False,
) -> Event:
    record = Record(
        arxiv_id=arxiv_id,
        version=2,
        title=title,
        abstract=abstract,
        authors=authors,
        authors_complete=True,
        withdrawn=withdrawn,
    )
    if changes is None:
        changes = {"title": {"old": "A study", "new": title}}
    return Event(
        seq=seq,
        id=f"evt_{seq}",
        type=type,
        created_at=WHEN + timedelta(seconds=seq),
        author=author,
        paper_key=arxiv_id or f"seed:{seq}",
        arxiv_id=arxiv_id,
        kinds=kinds,
        changes=changes,
        record=record,
    )


def hostile_event(text: str, seq: int = 1) -> Event:
    """An event whose every arXiv and seed string is ``text``."""
    return event(
        title=text,
        abstract=text,
        author=text,
        authors=(text, "Bob"),
        seq=seq,
        kinds=("title", "abstract", "authors", "comment"),
        changes={
            "title": {"old": "Old title", "new": text},
            "abstract": {"old": "An abstract.", "new": f"An abstract. {text}"},
            "authors": {"old": ["Bob"], "new": [text, "Bob"]},
            "comment": {"old": None, "new": text},
        },
    )


def body(format: DeliveryFormat, events: list[Event], public_url: str | None = PUBLIC) -> Any:
    return json.loads(message_body(format, events, public_url=public_url))


# ---- escaping


class TestEscaping:
    def test_slack_escape_reads_the_same(self) -> None:
        """Entities for & < >; formatting characters between zero-width spaces."""
        escaped = SLACK.escape("<!channel> *bold* a & b")
        assert escaped == ("&lt;!channel&gt; \u200b*\u200bbold\u200b*\u200b a &amp; b")

    def test_markdown_escape_reads_the_same(self) -> None:
        escaped = MARKDOWN.escape("@everyone [a](http://x) *b*")
        assert escaped == "@\u200beveryone \\[a\\]\u200b(http://x) \\*b\\*"
        assert MARKDOWN.escape("- item") == "\\- item"

    @given(st.text())
    @example("a\u061cb")
    def test_slack_escape_is_inert_and_reversible(self, text: str) -> None:
        """Slack's escape leaves no markup live and undoes to the text without bidi controls."""
        escaped = SLACK.escape(text)
        assert "<" not in escaped and ">" not in escaped
        for match in re.finditer(r"[*_~`]", escaped):
            before, after = escaped[match.start() - 1 : match.start()], escaped[match.end() :][:1]
            assert before == after == ZERO_WIDTH_SPACE
        unescaped = (
            escaped.replace(f"{ZERO_WIDTH_SPACE}", "")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
        )
        assert unescaped == without_bidi_controls(text).replace(ZERO_WIDTH_SPACE, "")

    @given(st.text())
    @example("a\u061cb")
    def test_markdown_escape_is_inert_and_reversible(self, text: str) -> None:
        """Markdown's escape leaves no markup live and undoes to the text without bidi controls."""
        escaped = MARKDOWN.escape(text)
        assert not re.search(r"@(everyone|here)", escaped)
        assert not re.search(r"(?<!\\)[<\[*_~`|]", escaped.replace("\\\\", ""))
        unescaped = re.sub(r"\\(.)", r"\1", escaped, flags=re.DOTALL)
        expected = without_bidi_controls(text).replace(ZERO_WIDTH_SPACE, "")
        assert unescaped.replace(ZERO_WIDTH_SPACE, "") == expected


# ---- one event


class TestOneEvent:
    def test_slack_shape(self) -> None:
        """A header with title and id, what happened, the diff in mrkdwn, the links."""
        payload = body(DeliveryFormat.SLACK, [event(title="A new study")])
        header, summary, diff, links = payload["blocks"]
        assert header["text"] == {"type": "plain_text", "text": "A new study (2401.00001)"}
        assert summary["text"]["text"] == "Revised, v2; changed: title"
        assert diff["text"]["text"] == "*Title*\nA *new* study"
        assert links["elements"][0]["text"] == (
            "<https://arxiv.org/abs/2401.00001|arXiv:2401.00001>"
            " · <https://syncd.example.org/papers/2401.00001|history>"
        )
        assert payload["text"] == "A new study (2401.00001) v2: title"

    def test_discord_shape(self) -> None:
        """One embed: title, abstract page, diff in Markdown, colour, fields, timestamp."""
        payload = body(DeliveryFormat.DISCORD, [event(title="A new study")])
        [embed] = payload["embeds"]
        assert embed["title"] == "A new study (2401.00001)"
        assert embed["url"] == "https://arxiv.org/abs/2401.00001"
        assert embed["description"] == ("Revised, v2; changed: title\n\n**Title**\nA **new** study")
        assert embed["color"] == 0xD29922
        assert embed["timestamp"] == "2026-12-01T03:00:01+00:00"
        assert [f["name"] for f in embed["fields"]] == ["Version", "Changed", "Author"]
        assert payload["allowed_mentions"] == {"parse": []}

    @pytest.mark.parametrize(
        ("type", "withdrawn", "colour"),
        [
            (EventType.ADDED, False, 0x2EA043),
            (EventType.LINKED, False, 0x1F6FEB),
            (EventType.REMOVED, False, 0xCF222E),
            (EventType.REVISED, True, 0x8B949E),
        ],
    )
    def test_discord_colour_by_type(self, type: str, withdrawn: bool, colour: int) -> None:
        kinds = ("withdrawn",) if withdrawn else ()
        changes = {"withdrawn": {"old": False, "new": True}} if withdrawn else {}
        payload = body(
            DeliveryFormat.DISCORD,
            [event(type=type, withdrawn=withdrawn, kinds=kinds, changes=changes)],
        )
        assert payload["embeds"][0]["color"] == colour

    def test_a_new_paper_shows_its_authors_and_abstract(self) -> None:
        added = event(type=EventType.ADDED, changes={}, kinds=(), abstract="We *study* it.")
        diff = body(DeliveryFormat.SLACK, [added])["blocks"][2]["text"]["text"]
        assert diff == (
            "*Authors*\nAda Lovelace\n*Abstract*\nWe \u200b*\u200bstudy\u200b*\u200b it."
        )

    def test_without_public_url_only_arxiv_is_linked(self) -> None:
        payload = body(DeliveryFormat.SLACK, [event()], public_url=None)
        assert payload["blocks"][-1]["elements"][0]["text"] == (
            "<https://arxiv.org/abs/2401.00001|arXiv:2401.00001>"
        )

    @pytest.mark.parametrize("text", HOSTILE)
    def test_hostile_strings_are_inert(self, text: str) -> None:
        slack = body(DeliveryFormat.SLACK, [hostile_event(text)])
        discord = body(DeliveryFormat.DISCORD, [hostile_event(text)])
        assert_slack_inert(slack)
        assert_discord_inert(discord)
        assert slack_problem(json.dumps(slack).encode()) is None
        assert discord_problem(json.dumps(discord).encode()) is None
        for events in ([hostile_event(text)], [hostile_event(text, seq) for seq in (1, 2)]):
            title, markdown = notification(events, public_url=PUBLIC)
            assert_markdown_inert(title)
            assert_markdown_inert(markdown)
            assert_mail_html_inert(
                notification(events, public_url=PUBLIC, body_format=BodyFormat.HTML)[1]
            )

    def test_the_slack_header_shows_the_title_as_it_is(self) -> None:
        """A plain_text header is not mrkdwn: escaping it would show ``&amp;`` and split marks."""
        payload = body(DeliveryFormat.SLACK, [event(title="AT&T <b> *x* _y_ ~z~ `w`")])
        assert payload["blocks"][0]["text"] == {
            "type": "plain_text",
            "text": "AT&T <b> *x* _y_ ~z~ `w` (2401.00001)",
        }

    def test_right_to_left_emoji_and_combining_characters_survive(self) -> None:
        text = MIXED_SCRIPTS
        slack = body(DeliveryFormat.SLACK, [event(title=text)])
        assert slack["blocks"][0]["text"]["text"] == f"{text} (2401.00001)"
        discord = body(DeliveryFormat.DISCORD, [event(title=text)])
        assert discord["embeds"][0]["title"] == f"{text} (2401.00001)"

    def test_a_10000_character_abstract_is_cut_at_a_word_with_a_link(self) -> None:
        """The diff fits its section (3,000) or description (4,096), ending … and the link."""
        long = " ".join(f"word{i}" for i in range(2000))[:10_000]
        changes = {"abstract": {"old": "Short.", "new": long}}
        huge = event(abstract=long, changes=changes, kinds=("abstract",), title="T" * 10_000)
        slack = body(DeliveryFormat.SLACK, [huge])
        diff = slack["blocks"][2]["text"]["text"]
        assert len(diff) <= 3000
        assert diff.endswith(" … <https://syncd.example.org/papers/2401.00001|full change>")
        assert re.search(r" word\d+\* …", diff)  # the added run is cut at a word, closed
        assert len(slack["blocks"][0]["text"]["text"]) <= 150
        discord = body(DeliveryFormat.DISCORD, [huge])
        assert len(discord["embeds"][0]["description"]) <= 4096
        assert len(discord["embeds"][0]["title"]) <= 256
        assert slack_problem(json.dumps(slack).encode()) is None
        assert discord_problem(json.dumps(discord).encode()) is None

    def test_a_title_with_a_long_part_before_its_colon_is_cut_everywhere(self) -> None:
        """Headlines keep a title's part before its colon whole; messages cut it."""
        long = event(title="&" * 10_000 + ": and more")
        assert slack_problem(message_body(DeliveryFormat.SLACK, [long], public_url=None)) is None
        assert (
            discord_problem(message_body(DeliveryFormat.DISCORD, [long], public_url=None)) is None
        )
        title, _ = notification([long], public_url=None)
        assert len(title) <= 200

    def test_blank_title_and_author_leave_no_empty_text(self) -> None:
        """A whitespace title reads as the paper's key; a blank author as a dash."""
        blank = event(title=" ", author=" ", changes={}, kinds=())
        slack = message_body(DeliveryFormat.SLACK, [blank], public_url=None)
        discord = message_body(DeliveryFormat.DISCORD, [blank], public_url=None)
        assert slack_problem(slack) is None and discord_problem(discord) is None
        assert json.loads(discord)["embeds"][0]["fields"][2]["value"] == "—"
        assert json.loads(slack)["blocks"][0]["text"]["text"] == "2401.00001 (2401.00001)"

    def test_a_word_longer_than_the_room_is_cut_between_characters(self) -> None:
        assert fit_text("x" * 10_000, SLACK, 20) == "x" * 18 + " …"
        assert fit_text("&" * 100, SLACK, 20) == "&amp;" * 3 + " …"

    def test_standard_endpoints_get_no_chat_message(self) -> None:
        with pytest.raises(ValueError, match="standard"):
            message_body(DeliveryFormat.STANDARD, [event()], public_url=None)
        with pytest.raises(ValueError, match="at least one"):
            message_body(DeliveryFormat.SLACK, [], public_url=None)


# ---- digests


class TestDigest:
    def test_slack_digest_of_three(self) -> None:
        events = [event(seq=n, title=f"Paper {n}", arxiv_id=f"2401.0000{n}") for n in (1, 2, 3)]
        payload = body(DeliveryFormat.SLACK, events)
        header, *entries = payload["blocks"]
        assert header["text"]["text"] == "3 changes to Ada Lovelace's papers"
        assert len(entries) == 3
        assert entries[0]["text"]["text"].startswith(
            "*<https://arxiv.org/abs/2401.00001|Paper 1 (2401.00001) v2: title>*\n*Title*\n"
        )

    def test_discord_digest_of_three(self) -> None:
        events = [event(seq=n, title=f"Paper {n}", arxiv_id=f"2401.0000{n}") for n in (1, 2, 3)]
        payload = body(DeliveryFormat.DISCORD, events)
        assert payload["content"] == "**3 changes to Ada Lovelace's papers**"
        assert [e["url"] for e in payload["embeds"]] == [
            f"https://arxiv.org/abs/2401.0000{n}" for n in (1, 2, 3)
        ]

    def test_authors_in_a_digest(self) -> None:
        events = [event(seq=1), event(seq=2, author="Bob")]
        payload = body(DeliveryFormat.SLACK, events)
        assert payload["blocks"][0]["text"]["text"] == "2 changes to tracked papers"

    @pytest.mark.parametrize("public_url", [PUBLIC, None])
    def test_a_digest_of_1000_events_stays_within_the_limits(self, public_url: str | None) -> None:
        """As many entries as fit, then "…and K more" (linking the events page if any)."""
        events = [hostile_event(HOSTILE[n % len(HOSTILE)], seq=n) for n in range(1000)]
        slack = body(DeliveryFormat.SLACK, events, public_url)
        discord = body(DeliveryFormat.DISCORD, events, public_url)
        assert slack_problem(json.dumps(slack).encode()) is None
        assert discord_problem(json.dumps(discord).encode()) is None
        assert_slack_inert(slack)
        assert_discord_inert(discord)
        shown = len(slack["blocks"]) - 2
        more = slack["blocks"][-1]["text"]["text"]
        assert more.startswith(f"…and {1000 - shown} more")
        assert more.endswith("|all changes>") == (public_url is not None)
        assert discord["embeds"][-1]["title"] == f"…and {1000 - (len(discord['embeds']) - 1)} more"
        assert ("url" in discord["embeds"][-1]) == (public_url is not None)

    def test_a_long_public_url_fills_a_discord_digest_by_its_total(self) -> None:
        """Each embed's link to the whole change is kept whole, so with a 1,500-character
        public URL an embed outgrows its caps: the 6,000-character total cuts the digest
        before the count of embeds does, and "…and K more" is grey."""
        long_url = f"{PUBLIC}/{'p' * 1500}"
        long_diff = {"abstract": {"old": "old " * 200, "new": "new " * 200}}
        events = [event(seq=n, changes=long_diff, kinds=("abstract",)) for n in range(20)]
        payload = body(DeliveryFormat.DISCORD, events, long_url)
        assert discord_problem(json.dumps(payload).encode()) is None
        embeds = payload["embeds"]
        assert len(embeds) < 10
        assert embeds[-1]["title"] == f"…and {20 - (len(embeds) - 1)} more"
        assert embeds[-1]["color"] == 0x8B949E

    def test_a_digest_that_fits_has_no_more_line(self) -> None:
        events = [event(seq=n) for n in range(49)]
        assert len(body(DeliveryFormat.SLACK, events)["blocks"]) == 50
        events = [event(seq=n) for n in range(10)]
        assert len(body(DeliveryFormat.DISCORD, events)["embeds"]) == 10


# ---- properties

# Pieces of text, so the hostile ones come often: text(characters | sampled_from)
# merges both into one alphabet and draws a "<" once in a hundred texts.
_texts = st.lists(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
    | st.sampled_from([*"<>&*_~`@#[]()|\\ ", "\u202e", "\u2067", "\u200f", *HOSTILE]),
    max_size=25,
).map("".join)
_long_texts = st.one_of(_texts, _texts.map(lambda t: (t + " ") * 40))


@st.composite
def _events(draw: st.DrawFn, seq: int = 1) -> Event:
    title, abstract, author, other = (draw(_long_texts) for _ in range(4))
    kind = draw(st.sampled_from([EventType.ADDED, EventType.REVISED, EventType.REMOVED]))
    changes = draw(
        st.sampled_from(
            [
                {},
                {"title": {"old": other, "new": title}},
                {"abstract": {"old": other, "new": abstract}},
                {"authors": {"old": [other], "new": [author, other]}},
                {"doi": {"old": None, "new": other}, "withdrawn": {"old": False, "new": True}},
            ]
        )
    )
    arxiv_id = draw(st.sampled_from(["2401.00001", "math.GT/0309136", None]))
    return event(
        type=kind,
        title=title,
        abstract=abstract,
        author=author,
        authors=(author,),
        changes=changes,
        kinds=tuple(changes),
        seq=seq,
        arxiv_id=arxiv_id,
    )


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_events(), min_size=1, max_size=60),
    st.sampled_from([PUBLIC, None]),
)
# An escaped "<" is text, not the start of a mention (hypothesis seed 12 found it).
@example(
    [event(type=EventType.ADDED, changes={}, kinds=(), author="<0", authors=("<0",), abstract="")],
    None,
)
def test_any_events_make_bodies_within_every_limit(
    events: list[Event], public_url: str | None
) -> None:
    """Whatever arXiv says, every body is one the platform accepts, and nothing in it is live."""
    slack = message_body(DeliveryFormat.SLACK, events, public_url=public_url)
    discord = message_body(DeliveryFormat.DISCORD, events, public_url=public_url)
    assert slack_problem(slack) is None
    assert discord_problem(discord) is None
    assert_slack_inert(json.loads(slack))
    assert_discord_inert(json.loads(discord))
    title, text = notification(events, public_url=public_url)
    assert_markdown_inert(title)
    assert_markdown_inert(text)
    _, html = notification(events, public_url=public_url, body_format=BodyFormat.HTML)
    assert_mail_html_inert(html)
    _, plain = notification(events, public_url=public_url, body_format=BodyFormat.TEXT)
    assert not BIDI_CONTROL.search(plain)


@given(
    st.lists(_events(), min_size=1, max_size=3),
    st.integers(min_value=40, max_value=5000),
    st.sampled_from([SLACK, MARKDOWN, PLAIN]),
)
@settings(max_examples=examples(80), deadline=None)
def test_render_diffs_never_passes_its_limit(events: list[Event], limit: int, style: Any) -> None:
    diffs = [d for e in events for d in field_diffs(e.changes)]
    assert len(render_diffs(diffs, style, limit, " more")) <= limit


# ---- Apprise


class TestNotification:
    def test_one_event(self) -> None:
        title, text = notification([event(title="A new study")], public_url=PUBLIC)
        assert title == "A new study (2401.00001) v2: title"
        assert text == (
            "Revised, v2; changed: title\n\n**Title**\nA **new** study\n\n"
            "[arXiv:2401.00001](https://arxiv.org/abs/2401.00001)"
            " · [history](https://syncd.example.org/papers/2401.00001)"
        )

    def test_a_digest_lists_50_then_how_many_more(self) -> None:
        events = [event(seq=n) for n in range(60)]
        title, text = notification(events, public_url=None)
        assert title == "60 changes to Ada Lovelace's papers"
        assert text.count("**[") == 50 and text.endswith("…and 10 more")

    def test_a_title_is_neutral_yet_reads_the_same(self) -> None:
        """Not Markdown-escaped (a mail subject would show backslashes), yet no link."""
        title, _ = notification([event(title="[arxiv.org](//evil.example)")], public_url=None)
        assert title.startswith(f"[arxiv.org]{ZERO_WIDTH_SPACE}(//evil.example)")

    def test_mentions_in_a_title_ping_nobody(self) -> None:
        title, _ = notification([event(title="@everyone look")], public_url=None)
        assert title.startswith(f"@{ZERO_WIDTH_SPACE}everyone look")


# ---- what the receivers say


def test_sample_bodies_are_accepted_by_the_receivers() -> None:
    """The sample `webhooks test` sends: a revised title, accepted by both platforms' shapes."""
    with SlackReceiver() as slack, DiscordReceiver() as discord, httpx.Client() as client:
        slack_answer = client.post(
            slack.url, content=sample_body(DeliveryFormat.SLACK, public_url=PUBLIC)
        )
        discord_answer = client.post(
            discord.url, content=sample_body(DeliveryFormat.DISCORD, public_url=None)
        )
    assert (slack_answer.status_code, slack_answer.text) == (200, "ok")
    assert discord_answer.status_code == 204
    [sent] = slack.delivered
    assert (
        sent.json is not None and "with a revised title" in sent.json["blocks"][0]["text"]["text"]
    )


def test_descriptions_carry_the_links() -> None:
    described = describe(event(arxiv_id="math.GT/0309136"), public_url=PUBLIC)
    assert [link.url for link in described.links] == [
        "https://arxiv.org/abs/math.GT/0309136",
        "https://syncd.example.org/papers/math.GT/0309136",
    ]
