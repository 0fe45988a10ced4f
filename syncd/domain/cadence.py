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
  failed leaves it due (``sweep_due``).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

__all__ = ["feed_due", "stable_share", "sweep_due", "sweep_slot"]

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
    # In whole microseconds, as datetimes count: a slot's start is then exact.
    period = round(interval * 1e6)
    phase = int(stable_share(author) * period)
    elapsed = (now - _EPOCH) // _MICROSECOND
    return _EPOCH + (elapsed - (elapsed - phase) % period) * _MICROSECOND


def sweep_due(author: str, last_claim: datetime | None, now: datetime, interval: float) -> bool:
    """Whether the author's sweep is due: no cycle that ran or succeeded started in its slot.

    ``last_claim`` is when the author's latest such cycle started (None: none
    ever did, so a new author is due at once).
    """
    return last_claim is None or last_claim < sweep_slot(author, now, interval)
