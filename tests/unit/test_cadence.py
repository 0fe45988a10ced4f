"""When an author's own arXiv feed is read and its sweep runs: never too often, spread out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from syncd.domain.cadence import feed_due, stable_share, sweep_due, sweep_slot

DAY = 86400.0
WEEK = 7 * DAY
READ = datetime(2026, 12, 1, tzinfo=UTC)
NAMES = [f"Author {i}" for i in range(1000)]
moments = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
intervals = st.integers(min_value=3600, max_value=30 * 86400).map(float)


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


@given(st.text(max_size=40))
def test_a_share_is_a_fraction(name: str) -> None:
    assert 0.0 <= stable_share(name) < 1.0


def test_a_share_is_the_same_in_every_process_and_version() -> None:
    """Replicas (and a replica after an upgrade) must agree on every author's slot."""
    assert stable_share("Ke Zhang") == 0.6703960774565935


def test_shares_spread_evenly_over_names() -> None:
    tenths = [int(stable_share(name) * 10) for name in NAMES]
    assert all(70 < tenths.count(tenth) < 130 for tenth in range(10))


@given(st.text(min_size=1, max_size=40), moments, intervals)
def test_a_slot_is_the_latest_phase_at_or_before_now(
    author: str, now: datetime, interval: float
) -> None:
    """The slot began at most an interval ago, at the author's phase (a whole number of
    intervals after it, counted from the epoch), and lasts until the next one begins."""
    slot = sweep_slot(author, now, interval)
    assert slot <= now < slot + timedelta(seconds=interval)
    cycles = (slot.timestamp() - stable_share(author) * interval) / interval
    assert abs(cycles - round(cycles)) < 1e-6
    later = slot + timedelta(seconds=interval * 0.999)
    assert abs((sweep_slot(author, later, interval) - slot).total_seconds()) < 1e-3


@given(st.text(min_size=1, max_size=40), moments, intervals)
def test_a_new_author_is_due_at_once(author: str, now: datetime, interval: float) -> None:
    assert sweep_due(author, None, now, interval)


@given(st.text(min_size=1, max_size=40), moments, intervals, st.floats(0, 0.999))
def test_a_slot_stays_due_until_a_cycle_starts_in_it(
    author: str, now: datetime, interval: float, into: float
) -> None:
    """A cycle that failed leaves no claim: the last claim is then the previous slot's, and
    the sweep is due at every moment of the slot; a claim in the slot ends that, for it."""
    slot = sweep_slot(author, now, interval)
    moment = slot + timedelta(seconds=interval * into)
    assert sweep_due(author, slot - timedelta(seconds=1), moment, interval)
    claim = slot + timedelta(seconds=interval * into / 2)
    assert not sweep_due(author, claim, moment, interval)


def test_a_thousand_authors_added_at_once_are_swept_once_a_week_spread_over_it() -> None:
    """Daily cycles for three weeks after 1,000 authors' baselines in one cycle: each
    author is swept exactly once in each week, about a seventh of them each day."""
    last_claim = dict.fromkeys(NAMES, READ)  # all baselined in the same cycle
    swept_on: dict[int, list[str]] = {}
    for day in range(1, 22):
        now = READ + timedelta(days=day)
        due = [n for n in NAMES if sweep_due(n, last_claim[n], now, WEEK)]
        last_claim.update(dict.fromkeys(due, now))
        swept_on[day] = due
    for week in range(3):
        swept = [n for day in range(7 * week + 1, 7 * week + 8) for n in swept_on[day]]
        assert sorted(swept) == sorted(NAMES)
    per_day = [len(swept_on[day]) for day in range(1, 22)]
    assert all(1000 / 7 * 0.7 < count < 1000 / 7 * 1.3 for count in per_day)
    # The same authors each week, on the same day.
    assert swept_on[1] == swept_on[8] == swept_on[15]
