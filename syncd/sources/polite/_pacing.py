"""When a request may start: its turn in its host's politeness budget, and the host's cooldown.

The connection asks both before every attempt:

- The pacer: no two requests start closer than the policy's
  ``request_interval``.  By default this process's (arXiv's own for all its
  hosts, ``process_pacer(host)`` for every other host); with replicas on
  PostgreSQL, the database's (``syncd.storage.pacer``).
- The cooldown of the request's host, when it throttles us (a 429, or a
  503 with ``Retry-After``; ``syncd.domain.throttle``).  It is kept in a
  store every replica and command reads (``syncd.storage.cooldowns``), by
  default this process's memory (``PROCESS_COOLDOWNS``), and read after the turn:
  another replica may have been throttled while this one waited for it.

A cooldown that ends within ``backoff_max`` (the longest the client waits
for anything) is slept through; a longer one is not waited out in place:
``Throttled`` says when the next try is, and the caller resumes then.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Protocol
from urllib.parse import urlsplit

import structlog

from syncd import metrics
from syncd.domain.throttle import (
    Cooldown,
    CooldownPolicy,
    after_answer,
    after_throttle,
    describe,
    wait_before_start,
)
from syncd.errors import Throttled
from syncd.sources.polite._policy import ConnectionPolicy

__all__ = [
    "PROCESS_COOLDOWNS",
    "CooldownStore",
    "LocalCooldowns",
    "Pacer",
    "Politeness",
    "ProcessPacer",
    "host_of",
    "process_pacer",
    "retry_delay",
]

_log = structlog.get_logger(__name__)


class Pacer(Protocol):
    """What spaces request starts: this process's own pacer, or one shared by replicas."""

    def wait_turn(
        self, interval: float, clock: Callable[[], float], sleep: Callable[[float], None]
    ) -> float:
        """Sleep until this request may start; return the seconds slept."""
        ...


class ProcessPacer:
    """Spaces the starts of the requests of this process it is asked for.

    The lock is held while waiting, so concurrent callers queue up and each
    one starts at least ``interval`` seconds after the previous start.  A
    turn starts at ``clock``'s last reading in ``wait_turn`` (``last_start``).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_start: float | None = None

    @property
    def last_start(self) -> float | None:
        """When the latest turn started, on the clock its caller gave."""
        return self._last_start

    def wait_turn(
        self, interval: float, clock: Callable[[], float], sleep: Callable[[float], None]
    ) -> float:
        """Sleep until ``interval`` has passed since the last start; return the seconds slept."""
        with self._lock:
            now = clock()
            waited = 0.0
            if self._last_start is not None:
                # Never more than one interval: a larger gap can only come from
                # a different clock (an injected fake) having set _last_start.
                waited = max(0.0, min(interval, self._last_start + interval - now))
                if waited > 0:
                    sleep(waited)
                    now = clock()
            self._last_start = now
            return waited

    def reset(self) -> None:
        """Forget the last request (for tests that inject their own clock)."""
        with self._lock:
            self._last_start = None


_HOST_PACERS: dict[str, ProcessPacer] = {}
_HOST_PACERS_LOCK = threading.Lock()


def process_pacer(host: str) -> ProcessPacer:
    """This process's pacer of ``host``: every client of it in the process shares it."""
    with _HOST_PACERS_LOCK:
        return _HOST_PACERS.setdefault(host, ProcessPacer())


class CooldownStore(Protocol):
    """Where the cooldowns of throttling hosts are kept: this process's memory, or a
    database every replica reads (``syncd.storage.cooldowns``)."""

    def read(self, host: str) -> Cooldown:
        """The host's cooldown; an empty one when it never throttled us."""
        ...

    def update(self, host: str, change: Callable[[Cooldown], Cooldown]) -> Cooldown:
        """Apply ``change`` to the host's cooldown, atomically; return the new one."""
        ...


class LocalCooldowns:
    """The cooldowns of this process, for a client given no store."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hosts: dict[str, Cooldown] = {}

    def read(self, host: str) -> Cooldown:
        with self._lock:
            return self._hosts.get(host, Cooldown())

    def update(self, host: str, change: Callable[[Cooldown], Cooldown]) -> Cooldown:
        with self._lock:
            after = self._hosts[host] = change(self._hosts.get(host, Cooldown()))
            return after

    def reset(self) -> None:
        """Forget every cooldown (for tests)."""
        with self._lock:
            self._hosts.clear()


PROCESS_COOLDOWNS = LocalCooldowns()


def retry_delay(
    attempt: int, retry_after: float | None, base: float, cap: float, rng: random.Random
) -> float:
    """Seconds to wait before retry number ``attempt + 1`` (``attempt`` counts from 0).

    Exponential backoff with full jitter: uniform in ``[0, min(cap, base * 2**attempt)]``;
    a server's ``Retry-After`` (capped at ``cap``) is a floor the wait never goes below.
    """
    ceiling = min(cap, base * 2.0 ** min(attempt, 64))
    delay = rng.uniform(0.0, ceiling)
    if retry_after is not None:
        delay = max(delay, min(retry_after, cap))
    return delay


def host_of(url: str) -> str:
    """The host a cooldown belongs to: ``url``'s host name, and its port if it names one.

    Never the user and password a URL may carry: the host names rows, metric
    labels and status lines.
    """
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:  # a port out of range: the request will fail on its own
        port = None
    return f"{host}:{port}" if port is not None else host


class Politeness:
    """One client's side of the budget and the cooldowns (see the module's doc).

    ``clock`` (monotonic) is the pacer's; ``now`` (UTC) dates cooldowns; ``rng``
    jitters backoff.
    """

    def __init__(
        self,
        policy: ConnectionPolicy,
        pacer: Pacer,
        cooldowns: CooldownStore,
        *,
        sleep: Callable[[float], None],
        clock: Callable[[], float],
        now: Callable[[], datetime],
        rng: random.Random,
    ) -> None:
        self._connection_policy = policy
        self._pacer = pacer
        self._cooldowns = cooldowns
        self._policy = CooldownPolicy(policy.throttle_cooldown, policy.throttle_cooldown_max)
        self._sleep, self._clock, self._now, self._rng = sleep, clock, now, rng
        # Each host's cooldown as last read or written by this client.
        self._known: dict[str, Cooldown] = {}

    def retry_wait(
        self,
        attempt: int,
        host: str,
        failure: str,
        retry_after: float | None,
        *,
        throttled: bool,
    ) -> float:
        """Seconds to wait before retry number ``attempt``: after a throttle, what is left of
        the host's cooldown (``Throttled`` past ``backoff_max``); else ``retry_delay``."""
        if throttled:
            return self.cooldown_wait(host, failure, retry_after)
        policy = self._connection_policy
        return retry_delay(
            attempt - 1, retry_after, policy.backoff_base, policy.backoff_max, self._rng
        )

    def take_turn(self, host: str, failure: str | None, retry_after: float | None) -> datetime:
        """Wait for the end of the host's cooldown and for the request's turn; return when
        it goes out.  ``failure`` and ``retry_after``: the last attempt's, for ``Throttled``."""
        while True:
            cooling = self.cooldown_wait(host, failure, retry_after)
            if cooling > 0:
                self._sleep(cooling)
                self._observe_pacing(cooling)
            interval = self._connection_policy.request_interval
            self._observe_pacing(self._pacer.wait_turn(interval, self._clock, self._sleep))
            # Another replica may have been throttled while this one waited for its turn.
            if self.cooldown_wait(host, failure, retry_after) <= 0:
                return self._now()

    def _observe_pacing(self, waited: float) -> None:
        if self._connection_policy.metered:
            metrics.observe_pacing(waited)

    def cooldown_wait(self, host: str, failure: str | None, retry_after: float | None) -> float:
        """Seconds until ``host`` may be asked again; ``Throttled`` past ``backoff_max``."""
        state = self._known[host] = self._cooldowns.read(host)
        wait = wait_before_start(state, self._now())
        if wait > self._connection_policy.backoff_max:
            raise self._throttled(host, state, failure, retry_after)
        return wait

    def note_throttle(
        self, host: str, sent_at: datetime, retry_after: float | None, status: int
    ) -> None:
        """Record a throttle to a request sent at ``sent_at`` in the host's cooldown."""

        def throttle(state: Cooldown) -> Cooldown:
            return after_throttle(
                state, self._policy, sent_at=sent_at, now=self._now(), retry_after=retry_after
            )

        state = self._known[host] = self._cooldowns.update(host, throttle)
        if self._connection_policy.metered:
            metrics.observe_throttled(host)
        _log.warning(
            f"{self._connection_policy.log_name}_throttled",
            host=host,
            status=status,
            throttles=state.throttles,
            cooldown_in_seconds=state.step,
            next_try_at=state.not_before.isoformat() if state.not_before else None,
        )

    def note_answer(self, host: str, sent_at: datetime) -> None:
        """Let the host's cooldown decay after an answer that is no throttle."""
        known = self._known.get(host)
        if known is None or not known.slowed:
            return  # the usual case: nothing to write

        def answer(state: Cooldown) -> Cooldown:
            return after_answer(state, self._policy, sent_at=sent_at, now=self._now())

        state = self._known[host] = self._cooldowns.update(host, answer)
        if not state.slowed:
            _log.info(f"{self._connection_policy.log_name}_throttle_ended", host=host)

    def throttled(self, host: str, failure: str, retry_after: float | None) -> Throttled:
        """The error of a request whose every attempt was throttled."""
        return self._throttled(host, self._known.get(host, Cooldown()), failure, retry_after)

    def _throttled(
        self, host: str, state: Cooldown, failure: str | None, retry_after: float | None
    ) -> Throttled:
        service = self._connection_policy.service
        said = describe(host, state, service) or f"{service} is throttling us ({host})"
        if failure is not None:
            said += f"; its last answer: {failure}"
        return Throttled(said, retry_after, host, state.not_before)
