"""Fault points for crash-consistency tests: SIGKILL this process at a named place.

Switched off unless ``SYNCD_FAULT_POINTS`` is set, e.g.
``SYNCD_FAULT_POINTS=store.cycle_written:2`` kills the process the second
time a cycle's writes are done but not committed.  Several points are
separated by commas.  Production never sets it; the check is one dict lookup.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

__all__ = ["HARVEST_POINTS", "POINTS", "fault_point"]

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


def _parse(spec: str) -> dict[str, int]:
    armed: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, _, count = item.partition(":")
        if name not in POINTS:
            raise ValueError(f"unknown fault point {name!r}; known: {', '.join(POINTS)}")
        armed[name] = int(count or 1)
    return armed


_ARMED = _parse(os.environ.get("SYNCD_FAULT_POINTS", ""))
_PASSES: Counter[str] = Counter()


def fault_point(name: str) -> None:
    """Die by SIGKILL here if this point is armed and this is its fatal pass."""
    if not _ARMED:
        return
    _PASSES[name] += 1
    if _PASSES[name] == _ARMED.get(name):
        os.kill(os.getpid(), signal.SIGKILL)
