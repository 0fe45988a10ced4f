"""How ``syncd backfill`` and ``syncd harvest`` show progress: a bar on a terminal, log lines
otherwise.

A backfill's pace is arXiv's, one request per ``request_interval``, so the
time left is the requests left times that interval, not an extrapolation
from how fast the first requests happened to go.  A harvest's pages take
what arXiv takes to answer them besides: its time left is measured, from
the pages seen (``HarvestReporter``).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Collection
from typing import TextIO

import structlog

from syncd.domain.counting import counted
from syncd.domain.model import VersionRefusal
from syncd.domain.refusals import set_aside_summary
from syncd.service.backfill import BackfillPlan, BackfillProgress
from syncd.service.harvest import HarvestResult

__all__ = ["BackfillReporter", "HarvestReporter", "describe_plan", "format_duration"]

_log = structlog.get_logger(__name__)
_BAR_WIDTH = 24
_HARVEST_BAR = 16  # narrower: the harvest's line says more, in 80 columns


def format_duration(seconds: float) -> str:
    """``42 s``, ``4 min 30 s``, ``2 h 5 min``: a wait as a person reads it."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def describe_plan(
    plan: BackfillPlan,
    interval: float,
    set_aside: Collection[VersionRefusal] | None = None,
    *,
    shown: int | None = 10,
) -> str:
    """What a backfill will cost (papers, versions, requests, time), and what it leaves aside:
    ``set_aside``, or the plan's own (the versions of its papers); ``shown`` of them named."""
    missing = (
        f"{counted(plan.papers, 'paper')} {'misses' if plan.papers == 1 else 'miss'}"
        f" {counted(plan.versions, 'version')}"
    )
    if not plan.requests:
        cost = f"{missing}: no request needed"
    else:
        largest = max(len(batch) for batch in plan.batches)
        cost = (
            f"{missing}: {counted(plan.requests, 'request')}"
            f" of up to {counted(largest, 'id')}, about {format_duration(plan.requests * interval)}"
            f" at one request every {interval:g} s"
        )
    aside = set_aside_summary(plan.set_aside if set_aside is None else set_aside, shown)
    return cost if aside is None else f"{cost}\n{aside}"


class _RunningLine:
    """One line redrawn in place on a terminal, ended by ``close``."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._terminal = stream.isatty()
        self._drawn = False

    def _draw(self, line: str) -> None:
        width = shutil.get_terminal_size().columns - 1
        self._stream.write("\r" + line[:width].ljust(width))
        self._stream.flush()
        self._drawn = True

    def close(self) -> None:
        """End the line, so what follows starts on its own."""
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()
            self._drawn = False


class BackfillReporter(_RunningLine):
    """Called with each ``BackfillProgress``: redraws a bar on a terminal, else logs a line."""

    def __init__(self, stream: TextIO, interval: float) -> None:
        super().__init__(stream)
        self._interval = interval

    def __call__(self, progress: BackfillProgress) -> None:
        """Show ``progress``."""
        left = (progress.requests_total - progress.requests_done) * self._interval
        if not self._terminal:
            _log.info(
                "backfill_progress",
                papers_done=progress.papers_done,
                papers_total=progress.papers_total,
                requests_done=progress.requests_done,
                requests_total=progress.requests_total,
                versions_stored=progress.versions_stored,
                seconds_left=round(left, 1),
            )
            return
        total = progress.papers_total or 1
        filled = _BAR_WIDTH * progress.papers_done // total
        line = (
            f"backfill [{'#' * filled}{'.' * (_BAR_WIDTH - filled)}]"
            f" {progress.papers_done}/{progress.papers_total} papers"
            f"  {progress.requests_done}/{progress.requests_total} requests"
            f"  about {format_duration(left)} left"
        )
        self._draw(line)


class HarvestReporter(_RunningLine):
    """Called after each harvested page: a bar on a terminal, else a log line.

    The bar fills when arXiv's token counts the list (``cursor`` and
    ``completeListSize``: its 2015 service wrote them, its 2025 rewrite does
    not; with ``[harvest] sets``, the current set's list); without them it
    shows how far the list's datestamps have come, as arXiv lists records in
    datestamp order, and no time left, since arXiv's changes are not spread
    evenly over its days.  The time left is the records left at the rate
    observed since the first page shown, said only once ``HONEST_AFTER`` more
    pages have come: the first pages' rate says little (a connection
    opening, arXiv's cache, the first page planned against an empty store).
    """

    HONEST_AFTER = 3

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(stream)
        self._clock = clock
        self._start: tuple[float, int, int] | None = None  # when, records and pages at first

    def __call__(self, progress: HarvestResult) -> None:
        """Show ``progress``."""
        events = len(progress.events) or progress.planned_events
        rate, left = self._pace(progress)
        if not self._terminal:
            _log.info(
                "harvest_progress",
                pages=progress.pages,
                records=progress.records,
                events=events,
                listed=progress.listed,
                list_size=progress.list_size,
                reached=progress.reached,
                seconds_left=None if left is None else round(left),
            )
            return
        done, size = progress.listed, progress.list_size
        if done is not None and size:
            filled = _HARVEST_BAR * min(done, size) // size
            where = f"[{'#' * filled}{'.' * (_HARVEST_BAR - filled)}] {done:,}/{size:,}"
        else:
            reached = f", listed up to {progress.reached}" if progress.reached else ""
            where = f"{progress.records:,} records{reached}"
        pace = f"  {rate:,.0f}/s" if rate is not None else ""
        ending = f"  about {format_duration(left)} left" if left is not None else ""
        # What matters most first: a narrow terminal cuts the end of the line.
        self._draw(f"harvest {where}{pace}{ending}  {events} events  {progress.pages} pages")

    def _pace(self, progress: HarvestResult) -> tuple[float | None, float | None]:
        """Records a second since the first page shown, and the seconds left at that rate:
        each None until it is honest (see the class's doc)."""
        now = self._clock()
        if self._start is None:
            self._start = (now, progress.records, progress.pages)
            return None, None
        since, records, pages = self._start
        if progress.pages - pages < self.HONEST_AFTER or now <= since:
            return None, None
        rate = (progress.records - records) / (now - since)
        done, size = progress.listed, progress.list_size
        if done is None or size is None or rate <= 0:
            return rate, None
        return rate, max(size - done, 0) / rate
