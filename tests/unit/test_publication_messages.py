"""How the four publication events read in every target: words, shapes, links and escaping.

``paper.published``, ``paper.publication_changed``, ``paper.corrected`` and
``paper.retracted`` carry a link and a notice from Crossref or OpenAlex; a
venue, a DOI or a type is a stranger's string, so each target must keep it
inert, as it keeps arXiv's.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from lxml import etree

from syncd.delivery.messages import message_body
from syncd.delivery.payload import digest_body, event_body
from syncd.domain.model import Event
from syncd.domain.publications import LinkState, link_json, notice_json
from syncd.domain.vocabulary import DeliveryFormat, EventType
from syncd.render.describe import describe, event_headline
from syncd.render.email import email_html
from syncd.render.notification import BodyFormat, notification
from syncd.render.publications import doi_url
from syncd.web.feeds import FeedHead, atom_feed
from syncd.web.fragments import Fragments
from tests.chatreceiver import discord_problem, slack_problem
from tests.inert import (
    BIDI_CONTROL,
    assert_discord_inert,
    assert_mail_html_inert,
    assert_markdown_inert,
    assert_slack_inert,
)
from tests.publications import (
    CORRECTION,
    CORRECTION_DOI,
    CROSSREF_LINK,
    DOI,
    RETRACTION,
    RETRACTION_DOI,
    SCORED_LINK,
    WHEN,
    link,
    noticed,
    publication_event,
    published,
)

PUBLIC = "https://syncd.example.org"
ARXIV_LINK = "<https://arxiv.org/abs/2403.01234|arXiv:2403.01234>"
DOI_LINK = f"<https://doi.org/{DOI}|DOI {DOI}>"
HOSTILE = [
    "<!channel> @everyone <@123> <http://evil.example|click>",
    "*bold* _it_ ~s~ `c` [a link](http://evil.example) # heading",
    "Evil \u202ereversed \u2067isolated",
    "</p><script>alert(1)</script><a href='javascript:x'>",
]


def changed() -> Event:
    """``paper.publication_changed``: from a scored match to Crossref's link in Nature."""
    new = link(venue="Nature", doi="10.1038/s41586-024-07001-1")
    changes = {"publication": new, "previous": link_json(SCORED_LINK)}
    return publication_event(EventType.PUBLICATION_CHANGED, changes)


class TestWords:
    @pytest.mark.parametrize(
        ("publication", "found"),
        [
            (link(), "found by Crossref's preprint link"),
            (link(how="crossref-relation-arxiv-id"), "found by Crossref's preprint link"),
            (link(how="arxiv-doi", source="arxiv", match="arxiv"), "found by arXiv's own record"),
            (
                link_json(SCORED_LINK),
                "a bibliographic match scored 0.93 (title 0.97, all authors in common, year +1)",
            ),
            (
                link_json(
                    replace(
                        SCORED_LINK,
                        evidence=replace(
                            SCORED_LINK.evidence, score=0.71, author_share=0.5, year_gap=0
                        ),
                    )
                ),
                "a bibliographic match scored 0.71 (title 0.97, 50 % of authors in common,"
                " same year)",
            ),
            (link(how="person", state="confirmed"), "confirmed by a person"),
            (
                link_json(replace(SCORED_LINK, state=LinkState.CONFIRMED)),
                "a bibliographic match scored 0.93 (title 0.97, all authors in common, year +1),"
                " confirmed by a person",
            ),
            (
                link(how="openalex-merged", source="openalex"),
                "found by OpenAlex, which holds the preprint and this version as one work",
            ),
        ],
    )
    def test_published_says_where_and_how_it_was_found(
        self, publication: dict[str, object], found: str
    ) -> None:
        event = publication_event(EventType.PUBLISHED, {"publication": publication})
        described = describe(event, public_url=None)
        assert described.summary == (
            f"Published in Nature Machine Intelligence (DOI {DOI}), {found}"
        )
        assert described.headline == (
            "Augmenting large language models with chemistry tools (2403.01234):"
            " published in Nature Machine Intelligence"
        )

    def test_a_publication_without_venue_or_doi(self) -> None:
        no_venue = describe(published(venue=None), public_url=None)
        assert no_venue.summary.startswith(f"Published as DOI {DOI}, found by")
        assert no_venue.headline.endswith(f": published as DOI {DOI}")
        journal_ref = published(
            doi=None, venue="Phys. Rev. D 99, 123 (2019)", how="arxiv-journal-ref"
        )
        assert describe(journal_ref, public_url=None).summary == (
            "Published in Phys. Rev. D 99, 123 (2019), found by arXiv's own record (its journal"
            " reference)"
        )
        assert [link.label for link in describe(journal_ref, public_url=None).links] == [
            "arXiv:2403.01234"
        ]

    def test_a_changed_publication_names_both(self) -> None:
        described = describe(changed(), public_url=None)
        assert described.summary == (
            "Now published in Nature (DOI 10.1038/s41586-024-07001-1), found by Crossref's"
            f" preprint link; previously in Nature Machine Intelligence (DOI {DOI})"
        )
        assert described.headline.endswith(": now published in Nature")
        [diff] = described.diffs
        assert [(s.kind, s.text) for s in diff.lines[0]] == [
            ("removed", f"in Nature Machine Intelligence (DOI {DOI})"),
            ("own", " → "),
            ("added", "in Nature (DOI 10.1038/s41586-024-07001-1)"),
        ]

    def test_a_correction_and_a_retraction_name_the_notice(self) -> None:
        corrected = describe(noticed(CORRECTION), public_url=PUBLIC)
        assert corrected.headline.endswith(": correction to the published version")
        assert corrected.summary == (
            f"Correction to the version published in Nature Machine Intelligence (DOI {DOI}):"
            f" notice DOI {CORRECTION_DOI}, dated 2024-08-01"
        )
        retracted = describe(noticed(RETRACTION), public_url=PUBLIC)
        assert retracted.headline.endswith(": published version retracted")
        assert retracted.summary == (
            f"Retraction of the version published in Nature Machine Intelligence (DOI {DOI}):"
            f" notice DOI {RETRACTION_DOI}, dated 2025-03-14"
        )
        [diff] = retracted.diffs
        assert diff.label == "Retraction"
        assert ["".join(s.text for s in line) for line in diff.lines] == [
            f"DOI {RETRACTION_DOI}",
            "dated 2025-03-14",
            "recorded by Retraction Watch",
        ]
        assert [(link.label, link.url) for link in retracted.links] == [
            ("arXiv:2403.01234", "https://arxiv.org/abs/2403.01234"),
            (f"DOI {DOI}", f"https://doi.org/{DOI}"),
            (f"notice DOI {RETRACTION_DOI}", f"https://doi.org/{RETRACTION_DOI}"),
            ("history", f"{PUBLIC}/papers/2403.01234"),
        ]

    def test_event_headline_reads_the_changes(self) -> None:
        headline = event_headline(
            EventType.RETRACTED, "ChemCrow: tools", "2403.01234", 2, (), changes={}
        )
        assert headline == "ChemCrow: … (2403.01234): published version retracted"

    def test_a_doi_link_escapes_what_a_url_would_read(self) -> None:
        assert doi_url("10.1002/(sici)1097-4636<x>?a#b") == (
            "https://doi.org/10.1002/%28sici%291097-4636%3Cx%3E%3Fa%23b"
        )


class TestTargets:
    def test_slack(self) -> None:
        payload = json.loads(message_body(DeliveryFormat.SLACK, [published()], public_url=PUBLIC))
        header, summary, diff, links = payload["blocks"]
        assert header["text"]["text"] == (
            "Augmenting large language models with chemistry tools (2403.01234)"
        )
        assert summary["text"]["text"] == (
            f"Published in Nature Machine Intelligence (DOI {DOI}),"
            " found by Crossref's preprint link"
        )
        assert diff["text"]["text"] == (
            "*Published version*\nNature Machine Intelligence · journal article\n"
            "published 2024-05-08\ntitle: Augmenting large language models with chemistry tools"
        )
        assert links["elements"][0]["text"] == (
            f"{ARXIV_LINK} · {DOI_LINK} · <{PUBLIC}/papers/2403.01234|history>"
        )
        assert slack_problem(json.dumps(payload).encode()) is None

    def test_discord(self) -> None:
        for event, colour in ((published(), 0x1B7C83), (noticed(RETRACTION), 0x82071E)):
            payload = json.loads(message_body(DeliveryFormat.DISCORD, [event], public_url=PUBLIC))
            [embed] = payload["embeds"]
            assert embed["color"] == colour
            assert [field["name"] for field in embed["fields"]] == ["Author"]
            assert embed["description"].startswith(describe(event, public_url=None).summary)
            assert discord_problem(json.dumps(payload).encode()) is None

    def test_apprise_markdown_and_text(self) -> None:
        title, markdown = notification([noticed(CORRECTION)], public_url=PUBLIC)
        assert title.endswith(": correction to the published version")
        assert f"[notice DOI {CORRECTION_DOI}](https://doi.org/{CORRECTION_DOI})" in markdown
        assert f"**Correction**\nDOI {CORRECTION_DOI}\ndated 2024-08-01" in markdown
        _, text = notification([published()], public_url=None, body_format=BodyFormat.TEXT)
        assert text.splitlines()[0] == (
            f"Published in Nature Machine Intelligence (DOI {DOI}),"
            " found by Crossref's preprint link"
        )
        assert f"DOI {DOI}: https://doi.org/{DOI}" in text

    def test_email(self) -> None:
        html = email_html([noticed(RETRACTION)], public_url=PUBLIC)
        assert_mail_html_inert(html)
        assert f'href="https://doi.org/{RETRACTION_DOI}"' in html
        assert "Retraction of the version published in Nature Machine Intelligence" in html
        assert "recorded by Retraction Watch" in html

    def test_digests_mix_them_with_other_events(self) -> None:
        events = [
            replace(published(), seq=1),
            replace(noticed(CORRECTION), seq=2, id="evt_c"),
            replace(noticed(RETRACTION), seq=3, id="evt_r"),
        ]
        slack = json.loads(message_body(DeliveryFormat.SLACK, events, public_url=PUBLIC))
        entries = [block["text"]["text"] for block in slack["blocks"][1:]]
        assert entries[0].startswith(
            "*<https://arxiv.org/abs/2403.01234|Augmenting large language models with chemistry"
            " tools (2403.01234): published in Nature Machine Intelligence>*"
        )
        assert "published version retracted" in entries[2]
        assert slack_problem(json.dumps(slack).encode()) is None
        discord = json.loads(message_body(DeliveryFormat.DISCORD, events, public_url=PUBLIC))
        assert discord_problem(json.dumps(discord).encode()) is None
        _, markdown = notification(events, public_url=PUBLIC)
        assert markdown.count("published version retracted") == 1
        html = email_html(events, public_url=PUBLIC)
        assert html.count(f'href="https://doi.org/{DOI}"') == 3
        data = json.loads(digest_body(events))["data"]["events"]
        assert [e["type"] for e in data] == [
            "paper.published",
            "paper.corrected",
            "paper.retracted",
        ]

    def test_standard_webhooks_carry_the_link_and_notice(self) -> None:
        payload = json.loads(event_body(noticed(CORRECTION)))
        assert payload["type"] == "paper.corrected"
        assert payload["data"]["changes"] == {
            "publication": link_json(CROSSREF_LINK),
            "notice": notice_json(CORRECTION),
        }
        assert payload["data"]["paper"] == {"key": "2403.01234", "arxiv_id": "2403.01234"}
        assert payload["data"]["kinds"] == []

    def test_the_feed_entry_and_the_page_fragment(self) -> None:
        head = FeedHead("tag:x", "Changes", "/feeds/events.atom", "/events")
        document = atom_feed(head, [noticed(RETRACTION)], WHEN, PUBLIC, Fragments())
        entry = etree.fromstring(document).find("{http://www.w3.org/2005/Atom}entry")
        assert entry is not None
        atom = "{http://www.w3.org/2005/Atom}"
        assert entry.findtext(f"{atom}title") == (
            "Augmenting large language models with chemistry tools (2403.01234):"
            " published version retracted"
        )
        content = entry.findtext(f"{atom}content") or ""
        assert content.startswith('<p class="summary">Retraction of the version published in')
        assert (
            f'<dd class="change-notice">DOI <bdi>{RETRACTION_DOI}</bdi><br>'
            "dated <bdi>2025-03-14</bdi><br>recorded by <bdi>Retraction Watch</bdi></dd>"
        ) in content
        assert f'<a href="https://doi.org/{RETRACTION_DOI}">' in content
        assert entry.find(f"{atom}category").get("term") == "paper.retracted"  # type: ignore[union-attr]


class TestStrangersStrings:
    @pytest.mark.parametrize("text", HOSTILE)
    def test_a_hostile_venue_type_and_doi_are_inert_everywhere(self, text: str) -> None:
        hostile = link(venue=text, type=text, title=text, doi=f"10.1/{text}")
        notice = notice_json(CORRECTION) | {"type": text, "doi": f"10.2/{text}", "source": text}
        events = [
            publication_event(EventType.PUBLISHED, {"publication": hostile}, title=text),
            publication_event(
                EventType.PUBLICATION_CHANGED,
                {"publication": hostile, "previous": hostile},
                seq=2,
            ),
            publication_event(
                EventType.CORRECTED, {"publication": hostile, "notice": notice}, seq=3
            ),
        ]
        for shown in (events[:1], events[1:2], events[2:], events):
            slack = json.loads(message_body(DeliveryFormat.SLACK, shown, public_url=PUBLIC))
            discord = json.loads(message_body(DeliveryFormat.DISCORD, shown, public_url=PUBLIC))
            assert_slack_inert(slack)
            assert_discord_inert(discord)
            assert slack_problem(json.dumps(slack).encode()) is None
            assert discord_problem(json.dumps(discord).encode()) is None
            title, markdown = notification(shown, public_url=PUBLIC)
            assert_markdown_inert(title)
            assert_markdown_inert(markdown)
            assert_mail_html_inert(email_html(shown, public_url=PUBLIC))
        fragments = Fragments()
        for event in events:
            html = str(fragments.event(event))
            assert "<script" not in html and "<a href='" not in html
            assert not BIDI_CONTROL.search(html)

    def test_a_long_venue_is_cut_in_running_text(self) -> None:
        event = published(venue="Proceedings " * 100)
        described = describe(event, public_url=None)
        assert len(described.headline) < 250
        assert "…" in described.summary


def test_every_publication_event_renders_in_every_format() -> None:
    """No target falls back to a record diff or a KeyError for the new types."""
    events = [published(), changed(), noticed(CORRECTION), noticed(RETRACTION)]
    for event in events:
        for format in (DeliveryFormat.SLACK, DeliveryFormat.DISCORD):
            assert message_body(format, [event], public_url=None)
        for body_format in BodyFormat:
            assert notification([event], public_url=None, body_format=body_format)[1]
