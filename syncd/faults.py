"""Fault points for crash-consistency tests: SIGKILL this process at a named place.

Switched off unless ``SYNCD_FAULT_POINTS`` is set, e.g.
``SYNCD_FAULT_POINTS=store.cycle_written:2`` kills the process the second
time a cycle's writes are done but not committed.  Several points are
separated by commas.  ``:stop`` after the count stops the process (SIGSTOP)
instead, for a test to race another writer against it and then let it go on
(SIGCONT).  Production never sets it; the check is one dict lookup.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

__all__ = ["HARVEST_POINTS", "POINTS", "RACE_POINTS", "fault_point"]

# Every place a kill is interesting, in the order data passes them.
POINTS: tuple[str, ...] = (
    "sync.page_fetched",  # a page parsed, nothing written
    "store.cycle_written",  # revisions and events written, not committed
    "store.cycle_committed",  # the cycle's transaction committed
    "harvest.page_fetched",  # an OAI-PMH page parsed, nothing written
    "store.harvest_page_written",  # a harvested page's writes done, not committed
    "store.harvest_page_committed",  # the page and its token committed
    "store.deliveries_claimed",  # leases committed, nothing sent
    "dispatch.sent",  # a 2xx received, not yet recorded
    "dispatch.acknowledged",  # the delivery recorded as done
)
# Passed only by an OAI-PMH harvest (tests/integration/test_harvest.py kills there).
HARVEST_POINTS = (
    "harvest.page_fetched",
    "store.harvest_page_written",
    "store.harvest_page_committed",
)
# Between a plan and its apply, where another writer may commit first: the race
# tests stop a process here (tests/integration/test_harvest.py).
RACE_POINTS = (
    "sync.cycle_planned",  # an author's cycle planned, nothing of it written
    "harvest.page_planned",  # a harvested page planned, nothing of it written
)


def _parse(spec: str) -> dict[str, tuple[int, signal.Signals]]:
    armed: dict[str, tuple[int, signal.Signals]] = {}
    known = (*POINTS, *RACE_POINTS)
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, _, rest = item.partition(":")
        count, _, action = rest.partition(":")
        if name not in known:
            raise ValueError(f"unknown fault point {name!r}; known: {', '.join(known)}")
        if action not in ("", "stop"):
            raise ValueError(f"unknown fault action {action!r} at {name}; known: stop")
        armed[name] = (int(count or 1), signal.SIGSTOP if action else signal.SIGKILL)
    return armed


_ARMED = _parse(os.environ.get("SYNCD_FAULT_POINTS", ""))
_PASSES: Counter[str] = Counter()


def fault_point(name: str) -> None:
    """Die by SIGKILL (or stop, with ``:stop``) here if this point is armed and this is
    its fatal pass."""
    if not _ARMED:
        return
    _PASSES[name] += 1
    count, action = _ARMED.get(name, (0, signal.SIGKILL))
    if _PASSES[name] == count:
        os.kill(os.getpid(), action)
