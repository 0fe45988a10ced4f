"""When an author's own arXiv feed is read: never twice within the interval, spread out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from syncd.service.sync import feed_due

DAY = 86400.0
READ = datetime(2026, 12, 1, tzinfo=UTC)


def test_a_feed_never_read_is_due() -> None:
    assert feed_due("Ke Zhang", None, READ, DAY)


@given(st.text(min_size=1, max_size=40), st.floats(min_value=0, max_value=DAY - 1))
def test_never_twice_within_the_interval(author: str, seconds: float) -> None:
    assert not feed_due(author, READ, READ + timedelta(seconds=seconds), DAY)


@given(st.text(min_size=1, max_size=40))
def test_always_due_after_twice_the_interval(author: str) -> None:
    assert feed_due(author, READ, READ + timedelta(seconds=2 * DAY), DAY)


def test_authors_read_together_come_due_spread_over_an_interval() -> None:
    """1,000 feeds read in one cycle come due over the next day, at most a few an hour."""
    hours = [
        next(
            h
            for h in range(24, 49)
            if feed_due(f"Author {i}", READ, READ + timedelta(hours=h), DAY)
        )
        for i in range(1000)
    ]
    per_hour = [hours.count(h) for h in range(24, 49)]
    assert max(per_hour) < 1000 / 24 * 1.5
