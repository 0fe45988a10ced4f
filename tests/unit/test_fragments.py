"""syncd.web.fragments: rendered changes kept per event and revision, within a bound."""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import UTC, datetime

from syncd.domain.history import HistoryStep
from syncd.domain.model import Event, Revision
from syncd.domain.record import Record
from syncd.web.fragments import MAX_BYTES, Fragments

WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def _event(number: int, title: str = "New") -> Event:
    changes = {"title": {"old": "Old", "new": title}}
    return Event(
        number, f"evt_{number}", "paper.revised", WHEN, "A", "k", None, ("title",), changes, None
    )


def test_an_event_is_rendered_once() -> None:
    """Asking again for the same event gives the first rendering back."""
    kept = Fragments()
    first = kept.event(_event(1))
    assert "<ins><bdi>New</bdi></ins>" in first
    # An event never changes; were it rendered again, this title would show.
    assert kept.event(_event(1, title="Other")) is first


def test_the_least_recently_used_go_first() -> None:
    """Past its bytes the fragment used longest ago is dropped and rendered anew."""
    kept = Fragments(max_bytes=3 * sys.getsizeof(Fragments().event(_event(1))))
    kept.event(_event(1))
    kept.event(_event(2))
    kept.event(_event(1))  # now 2 is the oldest
    kept.event(_event(3))
    kept.event(_event(4))
    assert "Other" not in kept.event(_event(1, title="Other"))
    assert "Other" in kept.event(_event(2, title="Other"))


def test_large_fragments_are_bounded_by_bytes_not_count() -> None:
    """200 KB fragments: the cache holds what fits in its bytes, the most recent ones."""
    cap = 2_000_000
    kept = Fragments(max_bytes=cap)
    big = "word " * 40_000  # a 200 KB title
    for number in range(100):
        kept.event(_event(number, title=big))
        assert kept.held_bytes <= cap
    assert kept.held_bytes > cap // 2  # it keeps what fits
    assert "Other" not in kept.event(_event(99, title="Other"))  # the latest are kept
    assert "Other" in kept.event(_event(0, title="Other"))  # the first were dropped


def test_the_default_cap_is_bytes() -> None:
    assert Fragments().max_bytes == MAX_BYTES == 64 * 1024 * 1024


def test_a_fragment_larger_than_the_cap_is_shown_but_not_kept() -> None:
    kept = Fragments(max_bytes=1000)
    assert "word" in kept.event(_event(1, title="word " * 1000))
    assert kept.held_bytes == 0


def test_a_first_revision_shows_the_record() -> None:
    """A history's first revision, which changes nothing, shows the record; later ones say so."""
    record = Record(title="A <b>title</b>", authors=("Ada",))
    kept = Fragments()
    seed = Revision(1, WHEN, "seed:x.txt", None, None, (), {}, record)
    first = kept.step(1, HistoryStep(seed, None))
    assert "A &lt;b&gt;title&lt;/b&gt;" in first
    later = Revision(2, WHEN, "arxiv", 1, WHEN, (), {}, record)
    assert "No change" in kept.step(1, HistoryStep(later, seed))


def test_a_step_is_kept_by_both_neighbours() -> None:
    """A version backfilled between two stored ones makes the later one's change new."""
    kept = Fragments()
    v1 = Revision(1, WHEN, "arxiv", 1, WHEN, (), {}, Record(title="One", version=1))
    v2 = Revision(4, WHEN, "arxiv:v2", 2, WHEN, (), {}, Record(title="Two", version=2))
    v3 = Revision(3, WHEN, "arxiv", 3, WHEN, (), {}, Record(title="Two", version=3))
    changed = {"title": {"old": "One", "new": "Two"}}
    assert "<ins><bdi>Two</bdi></ins>" in kept.step(
        1, HistoryStep(replace(v3, changes=changed), v1)
    )
    assert "No change" in kept.step(1, HistoryStep(v3, v2))


def test_a_removal_names_the_paper_as_last_known() -> None:
    """A removal shows what happened and the paper's last known title, not its record."""
    record = Record(arxiv_id="2512.22386", version=2, title="OxygenREC <i>x</i>", abstract="Long")
    removed = Event(1, "evt_r", "paper.removed", WHEN, "A", "k", None, (), {}, record)
    html = str(Fragments().event(removed))
    assert html == (
        '<p class="removal">No longer in the author\'s arXiv results.'
        " Last known: <bdi>OxygenREC &lt;i&gt;x&lt;/i&gt;</bdi>, v2.</p>"
    )
