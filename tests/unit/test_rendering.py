"""syncd.render (describe, html): word-level diffs, name lists and headlines, always escaped."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from syncd.domain.record import Record
from syncd.render.describe import event_headline, short_title
from syncd.render.html import changes_html, names_diff, record_html, word_diff


def _text(html: str) -> str:
    """What a browser shows of ``html``: tags dropped, entities decoded."""
    plain = re.sub(r"<[^>]+>", "", html)
    return (
        plain.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#34;", '"')
        .replace("&#39;", "'")
        .replace("&amp;", "&")
    )


class TestWordDiff:
    def test_changed_words_are_marked(self) -> None:
        """Removed words are in <del>, added ones in <ins>, the rest as it was."""
        html = word_diff("Training on 1,500 accelerators", "Training across 1,500 GPUs")
        assert str(html) == (
            "<bdi>Training</bdi> <del><bdi>on</bdi></del> <ins><bdi>across</bdi></ins>"
            " <bdi>1,500</bdi> <del><bdi>accelerators</bdi></del> <ins><bdi>GPUs</bdi></ins>"
        )

    def test_equal_text_has_no_marks(self) -> None:
        """Equal text comes back escaped and unmarked."""
        assert str(word_diff("a < b", "a < b")) == "<bdi>a &lt; b</bdi>"

    def test_markup_in_either_side_is_escaped(self) -> None:
        """<script> and <img onerror> from arXiv are text, inside or outside the marks."""
        html = str(word_diff("safe", "safe <script>alert(1)</script> <img src=x onerror=alert(2)>"))
        assert "<script>" not in html
        assert "<img" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html

    def test_none_is_empty(self) -> None:
        """A missing side (a seed without abstract) diffs as empty text."""
        assert str(word_diff(None, "New")) == "<ins><bdi>New</bdi></ins>"

    @given(st.text(max_size=60), st.text(max_size=60))
    def test_both_sides_can_be_read_back(self, old: str, new: str) -> None:
        """Dropping <ins> gives the old words, dropping <del> the new ones."""
        html = str(word_diff(old, new))
        without_ins = re.sub(r"<ins>.*?</ins>", "", html)
        without_del = re.sub(r"<del>.*?</del>", "", html)
        assert _text(without_ins).split() == old.split()
        assert _text(without_del).split() == new.split()


class TestNames:
    def test_added_removed_and_moved(self) -> None:
        """Authors added, removed and moved are each named once."""
        html = str(names_diff(["Ada", "Bob", "Cy"], ["Bob", "Ada", "Dee"]))
        assert "added: <ins><bdi>Dee</bdi></ins>" in html
        assert "removed: <del><bdi>Cy</bdi></del>" in html
        assert "moved: <bdi>Bob</bdi> (#2 → #1), <bdi>Ada</bdi> (#1 → #2)" in html

    def test_sets_do_not_move(self) -> None:
        """Categories are a set: a new order is no change."""
        assert "moved" not in str(names_diff(["cs.LG", "cs.DC"], ["cs.DC", "cs.LG"], ordered=False))

    def test_names_are_escaped(self) -> None:
        """A name holding markup shows as text."""
        assert "&lt;b&gt;" in str(names_diff([], ["<b>Eve</b>"]))


class TestChanges:
    def test_every_field_of_an_event(self) -> None:
        """A stored change set renders each field with its label, in order."""
        changes = {
            "version": {"old": 1, "new": 2},
            "title": {"old": "A study", "new": "A new study"},
            "authors": {"old": ["Ada"], "new": ["Ada", "Bob"], "added": ["Bob"], "removed": []},
            "doi": {"old": None, "new": "10.1/x"},
            "withdrawn": {"old": False, "new": True},
        }
        html = str(changes_html(changes))
        labels = re.findall(r"<dt>([^<]+)</dt>", html)
        assert labels == ["Version", "Title", "Authors", "DOI", "Withdrawn"]
        assert "<del><bdi>1</bdi></del> → <ins><bdi>2</bdi></ins>" in html
        assert "<bdi>A</bdi> <ins><bdi>new</bdi></ins> <bdi>study</bdi>" in html
        assert "(none) → <ins><bdi>10.1/x</bdi></ins>" in html
        assert "<del><bdi>no</bdi></del> → <ins><bdi>yes</bdi></ins>" in html

    def test_a_record_is_escaped(self) -> None:
        """A new paper's record shows its abstract as text, markup and all."""
        record = Record(title="T", abstract='<img src=x onerror="alert(1)">', authors=("Ada",))
        html = str(record_html(record))
        assert "<img" not in html
        assert "<bdi>Ada</bdi> et al." in html  # the list is not known to be complete


class TestHeadlines:
    def test_a_revision(self) -> None:
        """A revised event reads as short title, id, version and kinds."""
        headline = event_headline(
            "paper.revised",
            "NestPipe: Large-Scale Recommendation Training",
            "2604.06956",
            2,
            ["title", "authors", "abstract"],
        )
        assert headline == "NestPipe: … (2604.06956) v2: title, authors, abstract"

    def test_other_types(self) -> None:
        """Added, linked and removed events say so in words."""
        assert event_headline("paper.added", "A", "2601.00001", 1, []).endswith("v1: new paper")
        assert event_headline("paper.linked", "A", "2601.00001", 1, ["title"]).endswith(
            "v1: linked to arXiv, title"
        )
        assert event_headline("paper.removed", "A", "2601.00001", None, []).endswith(
            "(2601.00001): no longer in the author's arXiv results"
        )

    def test_long_titles_without_colon_are_cut(self) -> None:
        """A title with no colon is cut to 60 characters with an ellipsis."""
        title = "word " * 30
        assert len(short_title(title)) == 60
        assert short_title(title).endswith("…")


class TestBidiIsolation:
    """An unclosed U+202E (or U+2067) in an arXiv string reverses nothing of syncd's own."""

    def test_every_arxiv_string_of_a_diff_is_isolated(self) -> None:
        changes = {
            "title": {"old": "A study", "new": "A \u202enew study"},
            "doi": {"old": "10.1/\u202ex", "new": "10.1/y"},
            "authors": {"old": ["Ada", "Bob"], "new": ["Bob", "Ada", "Eve\u2067"]},
        }
        html = str(changes_html(changes))
        assert "<bdi>A</bdi> <ins><bdi>\u202enew</bdi></ins> <bdi>study</bdi>" in html
        assert "<del><bdi>10.1/\u202ex</bdi></del> → <ins><bdi>10.1/y</bdi></ins>" in html
        assert "added: <ins><bdi>Eve\u2067</bdi></ins>" in html
        assert "moved: <bdi>Bob</bdi> (#2 → #1), <bdi>Ada</bdi> (#1 → #2)" in html
        # No bidi control stands outside a <bdi>: stripping them leaves none.
        assert not re.search("[\u202e\u2067]", re.sub(r"<bdi>.*?</bdi>", "", html))

    def test_every_arxiv_string_of_a_record_is_isolated(self) -> None:
        record = Record(
            title="T\u202e",
            abstract="An \u2067abstract",
            authors=("Ada\u202e", "Bob"),
            primary_category="cs.LG",
        )
        html = str(record_html(record))
        assert '<p class="title"><bdi>T\u202e</bdi></p>' in html
        assert '<p class="authors"><bdi>Ada\u202e</bdi>, <bdi>Bob</bdi> et al.</p>' in html
        assert '<p class="abstract"><bdi>An \u2067abstract</bdi></p>' in html
        assert '<p class="categories"><bdi>cs.LG</bdi></p>' in html

    def test_a_headline_carries_no_bidi_control(self) -> None:
        """A headline is plain text in every target (feeds, chat, pages): no control in it."""
        headline = event_headline("paper.revised", "Evil\u202e title", "2601.00001", 2, ["title"])
        assert headline == "Evil title (2601.00001) v2: title"


def test_a_name_listed_twice_on_one_side_does_not_break_the_diff() -> None:
    """Author lists can repeat a name; the kept names then differ in number, not order."""
    assert str(names_diff(["Ada"], ["Ada", "Ada"])) == '<ul class="names"></ul>'
    moved = str(names_diff(["Ada", "Bob"], ["Bob", "Ada", "Ada"]))
    assert "moved: <bdi>Bob</bdi> (#2 → #1)" in moved
