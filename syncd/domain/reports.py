"""A group's report for a period: per person, new papers, new versions and withdrawals.

Counted from the event log alone, with no clock and no I/O: an event counts
in the period it was published in (when syncd learned of the change), so
consecutive periods never count a change twice nor lose one.  A paper is
one story however many members share it: its change counts in the row of
each member the event names or who holds the paper now (a co-author who
joined it later wrote it too), and once in the group's total.

- a **new paper** is a ``paper.added`` (a first sync's papers are the
  baseline, announced by one ``author.added``, and count as nothing);
- **new versions** are what ``paper.revised`` events moved the version by
  (v2 to v4 is two), withdrawals aside;
- a **withdrawal** is an event that marks the paper withdrawn.

Publications (a journal reference or DOI appearing) are not counted yet.
The period is whole UTC days, both ends included.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from syncd.domain.model import Event
from syncd.domain.record import normalize_name
from syncd.domain.vocabulary import EventType

__all__ = [
    "DEFAULT_DAYS",
    "REPORT_COLUMNS",
    "TOTAL",
    "Period",
    "Report",
    "ReportRow",
    "group_report",
    "report_csv",
    "report_period",
]

# A report asked for without a start covers the 30 days up to its end.
DEFAULT_DAYS = 30
# The CSV's header, in the order of a row's values.
REPORT_COLUMNS = ("person", "new_papers", "new_versions", "withdrawals")
TOTAL = "(group total)"
# A cell a spreadsheet would run as a formula (OWASP's CSV injection) starts with one of these.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True, slots=True)
class Period:
    """Whole UTC days from ``since`` to ``until``, both included."""

    since: date
    until: date

    @property
    def start(self) -> datetime:
        """The first moment of the period."""
        return datetime.combine(self.since, time(), tzinfo=UTC)

    @property
    def end(self) -> datetime:
        """The first moment after the period."""
        return datetime.combine(self.until + timedelta(days=1), time(), tzinfo=UTC)

    def holds(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


@dataclass(frozen=True, slots=True)
class ReportRow:
    """One person's counts (or the group's, each change once)."""

    person: str
    new_papers: int = 0
    new_versions: int = 0
    withdrawals: int = 0

    @property
    def values(self) -> tuple[str | int, ...]:
        """The row's cells in ``REPORT_COLUMNS`` order."""
        return (self.person, self.new_papers, self.new_versions, self.withdrawals)


@dataclass(frozen=True, slots=True)
class Report:
    """A group's report: one row per member, by name (accents and case aside), and the
    group's total."""

    group: str
    period: Period
    rows: tuple[ReportRow, ...]
    total: ReportRow


def report_period(since: str | None, until: str | None, today: date) -> Period:
    """The period ``since``..``until`` (``YYYY-MM-DD``); ``until`` defaults to ``today``,
    ``since`` to ``DEFAULT_DAYS`` days up to ``until``.

    Raises ``ValueError`` saying what is wrong: a day that does not parse, or an
    end before the start.
    """
    last = _day("until", until) if until else today
    first = _day("since", since) if since else last - timedelta(days=DEFAULT_DAYS - 1)
    if last < first:
        raise ValueError(f"until ({last.isoformat()}) is before since ({first.isoformat()})")
    return Period(first, last)


def _day(name: str, text: str) -> date:
    try:
        if len(text) == len("2026-01-31"):
            return date.fromisoformat(text)
    except ValueError:
        pass
    raise ValueError(f"{name} is not a day (YYYY-MM-DD): {text[:40]!r}")


def group_report(
    group: str,
    members: Iterable[str],
    events: Iterable[Event],
    period: Period,
    holders: Mapping[str, Collection[str]],
) -> Report:
    """The report of ``group`` over ``period`` from ``events`` (any order; those of
    non-members and outside the period are left out); ``holders`` are the followed
    authors who hold each paper now, by arXiv id (a seed paper's key without one)."""
    # As people look a name up: Élodie among the Es, not after Zoë.
    people = sorted(set(members), key=lambda name: (normalize_name(name), name))
    counts: dict[str, list[int]] = {name: [0, 0, 0] for name in people}
    changes: dict[tuple[str, int, str], int] = {}
    for event in events:
        paper = event.arxiv_id or event.paper_key
        credited = {*event.names, *holders.get(paper, ())} & counts.keys()
        if not credited or not period.holds(event.created_at):
            continue
        counted = _counted(event)
        if counted is None:
            continue
        column, amount = counted
        for name in credited:
            counts[name][column] += amount
        # The same change of a shared paper, filed under each of its members.
        version = event.record.version if event.record is not None else None
        changes[(paper, column, str(version))] = amount
    totals = [0, 0, 0]
    for (_, column, _), amount in changes.items():
        totals[column] += amount
    rows = tuple(ReportRow(name, *counts[name]) for name in people)
    return Report(group, period, rows, ReportRow(TOTAL, *totals))


def _counted(event: Event) -> tuple[int, int] | None:
    """Which column ``event`` counts in (0 new papers, 1 new versions, 2 withdrawals) and
    by how much; None when it counts in none."""
    record = event.record
    if event.type == EventType.ADDED:
        return 0, 1
    if event.type != EventType.REVISED:
        return None
    if "withdrawn" in event.kinds and record is not None and record.withdrawn:
        return 2, 1
    if "version" in event.kinds:
        return 1, _versions_moved(event.changes.get("version"))
    return None


def _versions_moved(change: Any) -> int:
    """How many versions a version change moved by: v2 to v4 is two; at least one."""
    if isinstance(change, dict):
        old, new = change.get("old"), change.get("new")
        if isinstance(old, int) and isinstance(new, int) and new > old:
            return new - old
    return 1


def report_csv(report: Report) -> str:
    """The report as CSV (RFC 4180, CRLF lines): a header, a row per member, the total."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(REPORT_COLUMNS)
    rows: Sequence[ReportRow] = (*report.rows, report.total)
    writer.writerows(tuple(_inert(cell) for cell in row.values) for row in rows)
    return out.getvalue()


def _inert(cell: str | int) -> str | int:
    """A text cell a spreadsheet shows as text: one that would start a formula gets a ``'``."""
    return f"'{cell}" if isinstance(cell, str) and cell.startswith(_FORMULA_START) else cell
