"""When an author's own arXiv feed is read and its sweep runs: never too often, spread out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from syncd.cli.daemon import trigger_for
from syncd.config import ScheduleSettings
from syncd.domain.cadence import (
    SweepStanding,
    choose_sweeps,
    claim_window,
    feed_due,
    next_cycle,
    next_sync,
    stable_share,
    sweep_due,
    sweep_slot,
)

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


HOURLY = ScheduleSettings(interval=3600, jitter=0)
DAY_DELTA = timedelta(days=1)
NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
timetables = st.builds(
    lambda interval, jitter: ScheduleSettings(interval=interval, jitter=jitter),
    st.integers(min_value=1, max_value=7 * 86400).map(float),
    st.integers(min_value=0, max_value=86400).map(float),
) | st.builds(
    lambda cron, jitter: ScheduleSettings(cron=cron, jitter=jitter),
    st.sampled_from(["0 */6 * * *", "*/5 * * * *", "30 9 * * 1-5", "0 9,10 * * *"]),
    st.integers(min_value=0, max_value=3600).map(float),
)


class TestNextCycle:
    """The timetable every process reads alike: the scheduler, the pages, `authors list`."""

    def test_ticks_are_multiples_of_the_interval_since_the_epoch(self) -> None:
        assert next_cycle(HOURLY, NOON) == NOON + timedelta(hours=1)  # strictly after
        assert next_cycle(HOURLY, NOON - timedelta(seconds=1)) == NOON
        every_7_minutes = ScheduleSettings(interval=420, jitter=0)
        assert next_cycle(every_7_minutes, NOON).timestamp() % 420 == 0

    def test_a_cron_line_names_its_ticks(self) -> None:
        six_hourly = ScheduleSettings(cron="0 */6 * * *", jitter=0)
        assert next_cycle(six_hourly, NOON) == NOON.replace(hour=18)

    def test_jitter_delays_each_start_by_its_own_share_the_same_everywhere(self) -> None:
        """Up to ``jitter`` after its tick, by an amount fixed by the tick (pinned: every
        replica, and one after an upgrade, must agree with the others and the pages)."""
        jittered = ScheduleSettings(interval=3600, jitter=60)
        starts = [next_cycle(jittered, NOON + timedelta(hours=h)) for h in range(3)]
        delays = [(s - NOON).total_seconds() % 3600 for s in starts]
        assert all(0 < d < 60 for d in delays)
        assert len(set(delays)) == 3
        assert starts[0] == datetime(2026, 12, 1, 12, 0, 4, 221083, tzinfo=UTC)
        cron = ScheduleSettings(cron="0 */6 * * *", jitter=60)
        assert NOON.replace(hour=18) < next_cycle(cron, NOON + timedelta(minutes=1))
        assert next_cycle(cron, NOON + timedelta(minutes=1)) < NOON.replace(hour=18, minute=1)

    def test_an_installations_phase_moves_its_ticks_and_its_jitter(self) -> None:
        """Installations do not all ask arXiv at the same second: an interval's ticks move
        on by the installation's phase of it, and each phase draws its own jitter, on a cron
        line too.  The scheduler's trigger and the pages' next sync follow the phase."""
        quarter = NOON + timedelta(minutes=15)
        assert next_cycle(HOURLY, NOON, phase=0.25) == quarter
        assert next_cycle(HOURLY, quarter, phase=0.25) == quarter + timedelta(hours=1)
        assert trigger_for(HOURLY, 0.25).get_next_fire_time(None, NOON) == quarter
        assert (
            next_sync(HOURLY, NOON, author="Ada", last_claim=None, sweep_interval=None, phase=0.25)
            == quarter
        )
        cron = ScheduleSettings(cron="0 */6 * * *", jitter=60)
        past = NOON + timedelta(minutes=1)
        starts = {next_cycle(cron, past, phase=phase) for phase in (0.0, 0.25, 0.5)}
        assert len(starts) == 3
        assert all(NOON.replace(hour=18) < s < NOON.replace(hour=18, minute=1) for s in starts)

    @given(timetables, moments)
    def test_one_start_per_tick_in_order_the_first_after_the_moment(
        self, timetable: ScheduleSettings, after: datetime
    ) -> None:
        """The start is after ``after``, no start lies between them, and the next start
        belongs to a later tick: a jitter longer than the interval reorders nothing."""
        start = next_cycle(timetable, after)
        assert start > after
        midway = after + (start - after) / 2
        assert next_cycle(timetable, midway) == start
        assert next_cycle(timetable, start - timedelta(microseconds=1)) == start
        following = next_cycle(timetable, start)
        assert following > start
        assert start - after <= timedelta(days=8) + timedelta(seconds=timetable.jitter)

    @given(timetables, moments)
    def test_the_scheduler_fires_when_the_timetable_says(
        self, timetable: ScheduleSettings, now: datetime
    ) -> None:
        """APScheduler's trigger for ``[schedule]`` is the timetable, jitter included."""
        trigger = trigger_for(timetable)
        first = trigger.get_next_fire_time(None, now)
        assert first == next_cycle(timetable, now)
        assert trigger.get_next_fire_time(first, now) == next_cycle(timetable, first)


class TestNextSync:
    """When the scheduler's cycles next sync one author, as the pages and `authors list` say."""

    def test_a_new_author_is_synced_by_the_next_cycle_not_at_once(self) -> None:
        """Added between two hourly cycles, it waits for the next: not "now"."""
        new = next_sync(
            HOURLY, NOON + timedelta(minutes=10), author="Ada", last_claim=None, sweep_interval=None
        )
        assert new == NOON + timedelta(hours=1)

    def test_a_cycle_within_half_a_period_skips_the_author(self) -> None:
        """A replica's (or a restart's) cycle 20 minutes before the next tick claims the
        author for half a period: that tick's cycle leaves it, the one after syncs it."""
        now = NOON + timedelta(minutes=40)
        assert claim_window(HOURLY, now) == 1800
        recent, older = now - timedelta(seconds=1), now - timedelta(minutes=40)
        ask = {"author": "Ada", "sweep_interval": None}
        assert next_sync(HOURLY, now, last_claim=recent, **ask) == NOON + timedelta(hours=2)
        assert next_sync(HOURLY, now, last_claim=older, **ask) == NOON + timedelta(hours=1)

    def test_on_cron_with_jitter_the_cycle_that_starts_next(self) -> None:
        cron = ScheduleSettings(cron="0 */6 * * *", jitter=600)
        now = NOON + timedelta(hours=1)
        when = next_sync(cron, now, author="Ada", last_claim=NOON, sweep_interval=None)
        assert when == next_cycle(cron, now)
        assert NOON.replace(hour=18) <= when < NOON.replace(hour=18, minute=10)

    def test_while_harvesting_a_swept_author_waits_for_its_next_slot(self) -> None:
        """Its slot swept, the first cycle of its next slot; its slot not swept (a new
        author, or a sweep that failed), the next cycle."""
        author, now = "Ke Zhang", NOON + timedelta(minutes=10)
        slot = sweep_slot(author, now, WEEK)
        swept = next_sync(HOURLY, now, author=author, last_claim=slot, sweep_interval=WEEK)
        assert swept == next_cycle(HOURLY, slot + timedelta(seconds=WEEK) - timedelta(seconds=1))
        assert swept >= slot + timedelta(seconds=WEEK)
        assert sweep_due(author, slot, swept, WEEK)
        assert not sweep_due(author, slot, swept - timedelta(hours=1), WEEK)
        unswept = slot - timedelta(seconds=1)
        due = next_sync(HOURLY, now, author=author, last_claim=unswept, sweep_interval=WEEK)
        assert due == NOON + timedelta(hours=1)


class TestChooseSweeps:
    """One round's choice while harvesting, at its one reading of the clock."""

    def standing(self, name: str, **fields: object) -> SweepStanding:
        values: dict[str, object] = {
            "last_claim": sweep_slot(name, NOON, WEEK),  # swept at its slot's start
            "swept": True,
            "has_feed": True,
            "feed_read": NOON - timedelta(days=3),
        }
        return SweepStanding(name, **(values | fields))  # type: ignore[arg-type]

    def test_whose_sweep_and_whose_feed_are_due_in_the_order_given(self) -> None:
        standings = [
            self.standing("Fed"),
            self.standing("New", last_claim=None, swept=False, feed_read=None),
            self.standing("Failed", last_claim=sweep_slot("Failed", NOON, WEEK) - DAY_DELTA),
            self.standing("Read today", feed_read=NOON - timedelta(hours=1)),
            self.standing("No feed", has_feed=False, feed_read=None),
            self.standing("Running", swept=False),
        ]
        choice = choose_sweeps(standings, NOON, WEEK, DAY)
        assert choice.due == ["New", "Failed"]
        assert choice.feeds == ["Fed"]

    def test_the_round_decides_at_its_moment(self) -> None:
        """A second before the slot begins, the slot before is swept; at its start, due."""
        slot = sweep_slot("Ke Zhang", NOON, WEEK)
        swept = [self.standing("Ke Zhang", last_claim=slot - timedelta(minutes=1))]
        before = choose_sweeps(swept, slot - timedelta(seconds=1), WEEK, DAY)
        assert (before.due, before.feeds) == ([], ["Ke Zhang"])
        assert choose_sweeps(swept, slot, WEEK, DAY).due == ["Ke Zhang"]
