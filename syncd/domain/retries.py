"""When a failed webhook delivery is tried again: a pure function of the attempt count.

Standard Webhooks' advice: quick retries first, then spread over days, so a
receiver that is down over a long weekend still gets everything.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

__all__ = ["DEFAULT_RETRY_SCHEDULE", "next_retry_delay"]

# Seconds before attempt 2, 3, ...: about three days in all, then dead-letter.
DEFAULT_RETRY_SCHEDULE: tuple[float, ...] = (
    5,
    300,
    1800,
    7200,
    18000,
    36000,
    36000,
    50400,
    72000,
    86400,
)

# ±20 %: spreads the retries of many events failed by one outage.
_JITTER = 0.2
# A receiver's Retry-After may stretch a step this much, never beyond a day:
# a hostile or buggy receiver must not park deliveries for a year.
_RETRY_AFTER_FACTOR = 4.0
_RETRY_AFTER_MAX = 86400.0


def next_retry_delay(
    failed_attempts: int,
    retry_after: float | None,
    rng: random.Random,
    schedule: Sequence[float] = DEFAULT_RETRY_SCHEDULE,
) -> float | None:
    """Seconds to wait before the next attempt, or ``None`` when the schedule is exhausted.

    ``failed_attempts`` counts the attempts made so far (at least 1).  The
    scheduled step gets ±20 % jitter; a ``retry_after`` is a floor, itself
    capped at four times the step or 24 h, whichever is smaller.
    """
    if failed_attempts < 1:
        raise ValueError(f"failed_attempts counts attempts made, at least 1; got {failed_attempts}")
    if failed_attempts > len(schedule):
        return None
    step = float(schedule[failed_attempts - 1])
    delay = step * rng.uniform(1.0 - _JITTER, 1.0 + _JITTER)
    if retry_after is not None:
        ceiling = min(step * _RETRY_AFTER_FACTOR, _RETRY_AFTER_MAX)
        delay = max(delay, min(max(retry_after, 0.0), ceiling))
    return delay
