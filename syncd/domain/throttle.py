"""When an arXiv host may be asked again after it throttled us: its cooldown.

Since 2026 arXiv answers 429 below its documented rate, and in runs that
last hours (arxiv.py #203, zotero-arxiv-daily #251).  A client that retries
each request on its own, at its own pace, answers a throttle with more
requests, one stream per replica.  So a throttle (a 429, RFC 6585 §4, or a
503 with ``Retry-After``, RFC 9110 §15.6.4) slows every request to that
host, of every replica, through one cooldown per host:

- A throttle starts a step of ``first`` seconds, or doubles the step in
  force, at most ``cap``.  Nothing starts before the throttle plus its step,
  or plus the server's ``Retry-After`` when that is longer (at most ``cap``).
- Each answer that is not a throttle halves the step, and spaces the next
  start by what is left of it; below ``first`` the step is gone and
  ``request_interval`` alone paces again.  From an hour, six answers take
  about an hour: arXiv is not asked at full pace the moment it answers once.
- An answer to a request sent before the latest throttle was noted belongs
  to that storm and changes nothing about it: two replicas probing together
  grow the step once, and an answer already on its way is no recovery.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from syncd.domain.counting import counted

__all__ = [
    "DECAY",
    "GROWTH",
    "Cooldown",
    "CooldownPolicy",
    "after_answer",
    "after_throttle",
    "describe",
    "wait_before_start",
]

# A throttle doubles the step; an answer halves it.
GROWTH = 2.0
DECAY = 0.5


@dataclass(frozen=True, slots=True)
class CooldownPolicy:
    """The first step after a throttle and the longest one (seconds)."""

    first: float
    cap: float


@dataclass(frozen=True, slots=True)
class Cooldown:
    """One host's cooldown: the step (seconds, 0 when none), when the next request may
    start, when the latest throttle was noted, and how many throttles came in a row."""

    step: float = 0.0
    not_before: datetime | None = None
    throttled_at: datetime | None = None
    throttles: int = 0

    @property
    def throttling(self) -> bool:
        """The latest answers were throttles: no other answer came since."""
        return self.throttles > 0

    @property
    def slowed(self) -> bool:
        """A step is in force: throttling, or decaying after it."""
        return self.step > 0


def after_throttle(
    state: Cooldown,
    policy: CooldownPolicy,
    *,
    sent_at: datetime,
    now: datetime,
    retry_after: float | None,
) -> Cooldown:
    """The cooldown once a throttle to a request sent at ``sent_at`` was answered at ``now``."""
    asked = min(retry_after or 0.0, policy.cap)
    if _in_flight(state, sent_at):
        ends = max(state.not_before or now, now + timedelta(seconds=asked))
        return replace(state, not_before=ends)
    step = policy.first if not state.slowed else state.step * GROWTH
    step = min(max(step, policy.first), policy.cap)
    return Cooldown(step, now + timedelta(seconds=max(step, asked)), now, state.throttles + 1)


def after_answer(
    state: Cooldown, policy: CooldownPolicy, *, sent_at: datetime, now: datetime
) -> Cooldown:
    """The cooldown once a request sent at ``sent_at`` got another answer than a throttle."""
    if not state.slowed or _in_flight(state, sent_at):
        return state
    step = state.step * DECAY
    if step < policy.first:
        return Cooldown(throttled_at=state.throttled_at)
    return Cooldown(step, now + timedelta(seconds=step), state.throttled_at)


def wait_before_start(state: Cooldown, now: datetime) -> float:
    """Seconds until the host may be asked again (0.0: now)."""
    if state.not_before is None:
        return 0.0
    return max(0.0, (state.not_before - now).total_seconds())


def describe(host: str, state: Cooldown, service: str = "arXiv") -> str | None:
    """What the status strip, ``/readyz`` and errors say of the host (a host of
    ``service``); None when all is well."""
    when = _moment(state.not_before)
    if state.throttling:
        answers = counted(state.throttles, "throttled answer")
        in_a_row = " in a row" if state.throttles > 1 else ""
        return f"{service} is throttling us ({host}: {answers}{in_a_row}), next try at {when}"
    if state.slowed:
        return (
            f"{service} throttled us lately ({host}): one request per {state.step:g} s"
            f" until it recovers, next at {when}"
        )
    return None


def _in_flight(state: Cooldown, sent_at: datetime) -> bool:
    """Whether a request went out before the latest throttle was noted."""
    return state.throttled_at is not None and sent_at < state.throttled_at


def _moment(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC") if moment is not None else "any time"
