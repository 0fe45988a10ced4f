"""Diffs people can read (syncd.render.describe and html): folded, stacked, notices whole."""

from __future__ import annotations

import re

from syncd.render.describe import event_headline, kind_words
from syncd.render.field_diffs import (
    ELIDED,
    Segment,
    collapsed,
    field_diffs,
    kind_label,
    word_segments,
)
from syncd.render.html import changes_html

WORDS = " ".join(f"w{n}" for n in range(100))
NOTICE = "This paper has been withdrawn by the authors."


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def test_a_one_word_edit_of_a_long_text_shows_a_few_words_around_it() -> None:
    """Unchanged runs are cut to six words either side of the change, the rest ``…``."""
    line = collapsed(word_segments(WORDS, WORDS.replace("w50", "fifty")))
    shown = " ".join(s.text for s in line if s.kind != "own" or s.text == ELIDED)
    assert shown == f"{ELIDED} w44 w45 w46 w47 w48 w49 w50 fifty w51 w52 w53 w54 w55 w56 {ELIDED}"
    assert [s.text for s in line if s.kind in ("removed", "added")] == ["w50", "fifty"]


def test_a_short_or_unchanged_text_is_not_folded() -> None:
    short = word_segments("a b c", "a x c")
    assert collapsed(short) == short
    same = (Segment("text", WORDS),)
    assert collapsed(same) == same


def test_the_whole_text_opens_without_script() -> None:
    """The page shows the excerpt, and the whole diff inside a <details>."""
    html = str(changes_html({"abstract": {"old": WORDS, "new": WORDS.replace("w50", "fifty")}}))
    excerpt, whole = html.split("<details", 1)
    assert 'class="excerpt"' in excerpt and "w20" not in _text(excerpt)
    assert "<summary>The whole abstract with its changes</summary>" in whole
    assert _text(whole).count("w") > 99


def test_a_rewrite_is_old_above_new_not_word_soup() -> None:
    """Less than half the words in common: old and new whole, one line each."""
    (diff,) = field_diffs({"abstract": {"old": "a b c d e f", "new": "u v w x y f"}})
    assert diff.stacked
    assert [[(s.kind, s.text) for s in line] for line in diff.lines] == [
        [("own", "was: "), ("removed", "a b c d e f")],
        [("own", "now: "), ("added", "u v w x y f")],
    ]
    assert '<div class="stacked"><p>was: <del>' in str(
        changes_html({"abstract": {"old": "a b c d e f", "new": "u v w x y f"}})
    )


def test_an_edit_stays_interleaved() -> None:
    (diff,) = field_diffs({"title": {"old": "a b c d e f", "new": "a b c d e g"}})
    assert not diff.stacked and len(diff.lines) == 1


def test_a_withdrawal_notice_is_shown_whole_not_diffed() -> None:
    """The notice replaces the abstract: no word of the old abstract is struck."""
    changes = {
        "abstract": {"old": WORDS, "new": NOTICE},
        "withdrawn": {"old": False, "new": True},
    }
    abstract = field_diffs(changes)[0]
    assert abstract.lines == (
        (Segment("own", "arXiv's withdrawal notice: "), Segment("added", NOTICE)),
    )
    abstract_html = str(changes_html(changes)).split("<dt>Withdrawn</dt>")[0]
    assert "<del>" not in abstract_html and "w50" not in abstract_html


def test_an_abstract_back_after_a_withdrawal_is_shown_whole() -> None:
    changes = {
        "abstract": {"old": NOTICE, "new": WORDS},
        "withdrawn": {"old": True, "new": False},
    }
    assert field_diffs(changes)[0].lines == (
        (Segment("own", "restored: "), Segment("added", WORDS)),
    )


def test_a_missing_value_is_not_struck() -> None:
    """``(none)`` is syncd's word for nothing, not arXiv text that was removed."""
    assert str(changes_html({"doi": {"old": None, "new": "10.1/x"}})).endswith(
        '<dd class="change-doi">(none) → <ins><bdi>10.1/x</bdi></ins></dd></dl>'
    )


def test_kinds_read_as_words() -> None:
    assert kind_label("journal_ref") == "Journal reference"
    assert kind_words(["version", "journal_ref", "doi"]) == "version, journal reference, DOI"
    assert event_headline("paper.revised", "A", "2601.00001", 2, ["journal_ref"]).endswith(
        "v2: journal reference"
    )


def test_latex_is_shown_as_written() -> None:
    text = r"We bound $\alpha_{n}^{2}$ by $O(n\log n)$."
    html = str(changes_html({"abstract": {"old": text, "new": f"{text} Tight."}}))
    assert r"$\alpha_{n}^{2}$" in html and r"$O(n\log n)$" in html
