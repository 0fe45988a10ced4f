"""When an author's periodic API work comes due: its own feed, and its full sweep.

Authors are often added by the hundred, and all read in the same cycle.  Were
each read again a fixed time after the last, they would all come due together
again, forever: a burst of requests at arXiv's pace of one every few seconds.
So each author gets a stable share of the period from its name
(``stable_share``): the same in every process and replica, spread evenly over
any number of authors.

- An author's own feed is read at most once per interval, and again after
  the interval plus its share of it (``feed_due``).
- While harvesting, an author's full API cycle (the sweep) runs once per
  slot: the slots of one author start at its phase, its share of the sweep
  interval, counted from the Unix epoch (``sweep_slot``).  A slot is swept
  when a cycle of the author that ran or succeeded started in it; one that
  failed leaves it due (``sweep_due``); between sweeps, an author's own feed
  that is due is read alone (``choose_sweeps``).

The cycles themselves start on a timetable (``[schedule]``): every
``interval`` seconds counted from the epoch, or on a cron line, each start
delayed by its own share of ``jitter`` (``next_cycle``).  The delay is drawn
from the start's own time, so the scheduler, the pages and ``syncd authors
list`` of any process agree on when the next cycle starts, and on when it
syncs a given author (``next_sync``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

__all__ = [
    "SweepChoice",
    "SweepStanding",
    "Timetable",
    "choose_sweeps",
    "claim_window",
    "feed_due",
    "next_cycle",
    "next_sync",
    "schedule_period",
    "slot_start",
    "stable_share",
    "sweep_due",
    "sweep_slot",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def stable_share(name: str) -> float:
    """A number in [0, 1) fixed by ``name``, evenly spread over names (blake2b)."""
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest) / 2**64


def feed_due(author: str, last_read: datetime | None, now: datetime, interval: float) -> bool:
    """Whether the author's own feed is read this cycle: never read, or long enough ago.

    Long enough is ``interval`` plus the author's share of it: never twice
    within ``interval``, and the feeds of many authors added at once (all
    read at their first sync) come due spread over a whole interval, not all
    in one cycle a day later.
    """
    if last_read is None:
        return True
    return (now - last_read).total_seconds() >= interval * (1.0 + stable_share(author))


def sweep_slot(author: str, now: datetime, interval: float) -> datetime:
    """When the author's current sweep slot began: the latest moment at or before ``now``
    whose distance from the epoch is the author's phase plus a whole number of intervals."""
    return slot_start(stable_share(author), now, interval)


def slot_start(share: float, now: datetime, interval: float) -> datetime:
    """When the current slot of phase ``share`` (in [0, 1)) began: the latest moment at or
    before ``now`` whose distance from the epoch is ``share`` of ``interval`` plus a whole
    number of intervals."""
    # In whole microseconds, as datetimes count: a slot's start is then exact.
    period = round(interval * 1e6)
    phase = int(share * period)
    elapsed = (now - _EPOCH) // _MICROSECOND
    return _EPOCH + (elapsed - (elapsed - phase) % period) * _MICROSECOND


def sweep_due(author: str, last_claim: datetime | None, now: datetime, interval: float) -> bool:
    """Whether the author's sweep is due: no cycle that ran or succeeded started in its slot.

    ``last_claim`` is when the author's latest such cycle started (None: none
    ever did, so a new author is due at once).
    """
    return last_claim is None or last_claim < sweep_slot(author, now, interval)


@dataclass(frozen=True, slots=True)
class SweepStanding:
    """What choosing the sweeps knows of one author.

    ``last_claim``: when its latest cycle that ran or succeeded started (None:
    none did), and ``swept`` whether that one succeeded; ``feed_read``: when
    its own feed was last read, if it has one (``has_feed``).
    """

    name: str
    last_claim: datetime | None
    swept: bool
    has_feed: bool
    feed_read: datetime | None


@dataclass(frozen=True, slots=True)
class SweepChoice:
    """One cycle's verdicts while harvesting, by name: whose sweep is ``due``, and of the
    others, whose own feed is read alone (``feeds``)."""

    due: list[str]
    feeds: list[str]


def choose_sweeps(
    standings: Sequence[SweepStanding], now: datetime, interval: float, feed_interval: float
) -> SweepChoice:
    """Whose sweep is due at ``now``, and of the others whose own feed is; in the order given.

    A feed is read alone only after a sweep that succeeded: while the slot's
    sweep is running it reads the feed itself, and a feed-only cycle must
    never be the one that claims a slot whose sweep failed.
    """
    due: list[str] = []
    feeds: list[str] = []
    for author in standings:
        if sweep_due(author.name, author.last_claim, now, interval):
            due.append(author.name)
        elif (
            author.swept
            and author.has_feed
            and feed_due(author.name, author.feed_read, now, feed_interval)
        ):
            feeds.append(author.name)
    return SweepChoice(due, feeds)


class Timetable(Protocol):
    """When cycles start (``[schedule]``): every ``interval`` seconds, or on a ``cron`` line;
    each start delayed by up to ``jitter`` seconds."""

    @property
    def interval(self) -> float: ...

    @property
    def cron(self) -> str | None: ...

    @property
    def jitter(self) -> float: ...


def next_cycle(timetable: Timetable, after: datetime, *, phase: float = 0.0) -> datetime:
    """When the first cycle after ``after`` starts, for an installation of ``phase``.

    A tick is a multiple of the interval since the epoch, moved on by the
    installation's ``phase`` of it (in [0, 1), drawn once per database: the
    replicas of one agree, and installations do not all ask arXiv at the same
    second), or a time the cron line names; its cycle starts after a delay
    fixed by the tick's own time and the phase, up to ``jitter`` seconds but
    never at or past the next tick: one cycle a tick, in order, whatever the
    jitter.
    """
    # Only a tick this close before ``after`` may start its cycle after it.
    lookback = timetable.jitter if timetable.cron else min(timetable.jitter, timetable.interval)
    ticks = _ticks(timetable, after - timedelta(seconds=lookback), phase)
    tick = next(ticks)
    for following in ticks:
        share = stable_share(f"cycle at {tick.isoformat()} of phase {phase!r}")
        delay = min(timedelta(seconds=timetable.jitter), following - tick - _MICROSECOND)
        start = tick + delay * share
        if start > after:
            return start
        tick = following
    raise ValueError(f"the crontab line {timetable.cron!r} fires no more")


def schedule_period(timetable: Timetable, now: datetime) -> float:
    """Seconds between two ticks (for cron, the next two after ``now``)."""
    if timetable.cron is None:
        return timetable.interval
    ticks = _ticks(timetable, now, 0.0)  # a period is the same at any phase
    first = next(ticks)
    return (next(ticks) - first).total_seconds()


def claim_window(timetable: Timetable, now: datetime) -> float:
    """Seconds within which a cycle of an author, by any replica, makes the next skip it.

    Replicas share the timetable: the first to reach an author in half a
    period syncs it, and the others' cycles of that period leave it.
    """
    return schedule_period(timetable, now) / 2


def next_sync(
    timetable: Timetable,
    now: datetime,
    *,
    author: str,
    last_claim: datetime | None,
    sweep_interval: float | None,
    phase: float = 0.0,
) -> datetime:
    """When the scheduler's cycles next sync ``author``, whose latest cycle that ran or
    succeeded started at ``last_claim`` (None: none did, as for an author just added).

    Without sweeps, the first cycle past the ``claim_window`` of the
    author's latest.  While harvesting, the next cycle if the author's sweep
    is due then; else the first cycle of its next sweep slot.
    """
    start = next_cycle(timetable, now, phase=phase)
    if last_claim is None:
        return start
    if sweep_interval is None:
        window = claim_window(timetable, now)
        while (start - last_claim).total_seconds() <= window:
            start = next_cycle(timetable, start, phase=phase)
        return start
    if sweep_due(author, last_claim, start, sweep_interval):
        return start
    following = sweep_slot(author, start, sweep_interval) + _period(sweep_interval)
    return next_cycle(timetable, following - _MICROSECOND, phase=phase)


def _period(seconds: float) -> timedelta:
    """``seconds`` in whole microseconds, as slots and ticks count them."""
    return round(seconds * 1e6) * _MICROSECOND


def _ticks(timetable: Timetable, start: datetime, phase: float) -> Iterator[datetime]:
    """The timetable's ticks at or after ``start``, in order (a cron line's may end);
    an interval's are moved on by ``phase`` of it."""
    if timetable.cron is None:
        period = _period(timetable.interval)
        origin = _EPOCH + period * phase
        tick = origin - (origin - start) // period * period
        while True:
            yield tick
            tick += period
    # Imported here: only a cron line needs APScheduler's parser, and every command
    # that shows a next sync would load the scheduler otherwise.
    from apscheduler.triggers.cron import CronTrigger  # noqa: PLC0415

    trigger = CronTrigger.from_crontab(timetable.cron, timezone=UTC)
    fire: datetime | None = trigger.get_next_fire_time(None, start)
    while fire is not None:
        yield fire
        fire = trigger.get_next_fire_time(fire, fire)
