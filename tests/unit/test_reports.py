"""A group's report, counted by hand: per person, and the group once per change."""

from __future__ import annotations

import csv
import io
from datetime import UTC, date, datetime
from typing import Any

import pytest

from syncd.domain.model import Event
from syncd.domain.reports import (
    REPORT_COLUMNS,
    TOTAL,
    Period,
    ReportRow,
    group_report,
    report_csv,
    report_period,
)
from syncd.domain.vocabulary import EventType
from tests.fakearxiv import make_record

MARCH = Period(date(2026, 3, 1), date(2026, 3, 31))
_seq = iter(range(1, 10_000))


def _event(
    author: str,
    arxiv_id: str,
    type_: str,
    when: datetime,
    *,
    version: int = 1,
    kinds: tuple[str, ...] = (),
    changes: dict[str, Any] | None = None,
    withdrawn: bool = False,
    authors: tuple[str, ...] = (),
) -> Event:
    seq = next(_seq)
    return Event(
        seq=seq,
        id=f"evt_{seq}",
        type=type_,
        created_at=when,
        author=author,
        paper_key=arxiv_id,
        arxiv_id=arxiv_id,
        kinds=kinds,
        changes=changes or {},
        record=make_record(arxiv_id, version, withdrawn=withdrawn),
        authors=authors or (author,),
    )


def _at(day: int, hour: int = 12) -> datetime:
    return (
        datetime(2026, 3, day, hour, tzinfo=UTC)
        if day > 0
        else datetime(2026, 2, 28, 23, 59, tzinfo=UTC)
    )


def _version(
    author: str, arxiv_id: str, day: int, old: int, new: int, *, authors: tuple[str, ...] = ()
) -> Event:
    change = {"version": {"old": old, "new": new}}
    return _event(
        author,
        arxiv_id,
        EventType.REVISED,
        _at(day),
        version=new,
        kinds=("version",),
        changes=change,
        authors=authors,
    )


# Zoë: two papers added, A2 revised v1 -> v2 and v2 -> v4 (3 versions), a title change only
# (no version), A1 withdrawn as v2.  Wei joined A2 after its addition, which named Zoë
# alone; its v2 named both: he holds it now, so all of A2's changes are his too.  Ann's
# paper, which she holds no more, counts by its event's names.  Outside March or the
# group: not counted.
STORY = [
    _event("Zoë", "2603.00001", EventType.ADDED, _at(2)),
    _event("Zoë", "2603.00002", EventType.ADDED, _at(3)),
    _version("Zoë", "2603.00002", 10, 1, 2, authors=("Wei", "Zoë")),
    _version("Zoë", "2603.00002", 20, 2, 4),
    _event("Ann", "2603.00005", EventType.ADDED, _at(6)),
    _event("Zoë", "2603.00001", EventType.REVISED, _at(21), kinds=("title",)),
    _event(
        "Zoë",
        "2603.00001",
        EventType.REVISED,
        _at(31, 23),
        version=2,
        kinds=("version", "withdrawn"),
        changes={"version": {"old": 1, "new": 2}},
        withdrawn=True,
    ),
    _event("Zoë", "2602.00009", EventType.ADDED, _at(0)),  # 28 February, 23:59
    _event("Zoë", "2604.00001", EventType.ADDED, datetime(2026, 4, 1, tzinfo=UTC)),
    _event("Eve", "2603.00003", EventType.ADDED, _at(5)),  # not a member
    _event("Zoë", "2603.00001", EventType.AUTHOR_ADDED, _at(2)),
    _event("Wei", "2603.00004", EventType.REMOVED, _at(4)),
]


# Who holds each paper now (the paper's ties), by arXiv id.
HOLDERS = {"2603.00001": ("Zoë",), "2603.00002": ("Wei", "Zoë"), "2603.00004": ("Wei",)}


def test_each_person_and_the_group_counted_by_hand() -> None:
    report = group_report("lab", ["Zoë", "Wei", "Ann"], STORY, MARCH, HOLDERS)
    assert report.rows == (
        ReportRow("Ann", 1, 0, 0),
        ReportRow("Wei", 1, 3, 0),
        ReportRow("Zoë", 2, 3, 1),
    )
    # The shared paper's changes count once for the group.
    assert report.total == ReportRow(TOTAL, 3, 3, 1)


def test_without_holders_a_change_counts_for_whom_its_event_names() -> None:
    report = group_report("lab", ["Zoë", "Wei"], STORY, MARCH, {})
    assert report.rows == (ReportRow("Wei", 0, 1, 0), ReportRow("Zoë", 2, 3, 1))


def test_order_of_events_does_not_matter() -> None:
    forward = group_report("lab", ["Zoë", "Wei"], STORY, MARCH, HOLDERS)
    backward = group_report("lab", ["Wei", "Zoë"], list(reversed(STORY)), MARCH, HOLDERS)
    assert backward == forward


def test_the_period_includes_both_ends_whole() -> None:
    one_day = Period(date(2026, 3, 31), date(2026, 3, 31))
    report = group_report("lab", ["Zoë"], STORY, one_day, HOLDERS)
    assert report.rows == (ReportRow("Zoë", 0, 0, 1),)  # the withdrawal at 23:00
    february = Period(date(2026, 2, 28), date(2026, 2, 28))
    in_february = group_report("lab", ["Zoë"], STORY, february, HOLDERS)
    assert in_february.rows == (ReportRow("Zoë", 1, 0, 0),)


def test_the_csv_reads_back() -> None:
    report = group_report("lab", ["Zoë", "Wei", "=cmd|' /C calc'!A0"], STORY, MARCH, HOLDERS)
    rows = list(csv.reader(io.StringIO(report_csv(report), newline="")))
    assert rows[0] == list(REPORT_COLUMNS)
    assert rows[1:] == [
        ["'=cmd|' /C calc'!A0", "0", "0", "0"],  # a formula, made text
        ["Wei", "1", "3", "0"],
        ["Zoë", "2", "3", "1"],
        [TOTAL, "2", "3", "1"],
    ]
    assert report_csv(report).endswith("\r\n")


def test_a_period_from_what_people_type() -> None:
    today = date(2026, 12, 4)
    assert report_period(None, None, today) == Period(date(2026, 11, 5), today)
    assert report_period("2026-01-01", None, today) == Period(date(2026, 1, 1), today)
    assert report_period("2026-01-01", "2026-01-31", today).until == date(2026, 1, 31)
    assert report_period(None, "2026-01-31", today).since == date(2026, 1, 2)
    with pytest.raises(ValueError, match="before since"):
        report_period("2026-02-01", "2026-01-31", today)
    for bad in ("2026-1-1", "yesterday", "2026-02-30", "2026-01-01T00:00"):
        with pytest.raises(ValueError, match="not a day"):
            report_period(bad, None, today)


def test_people_are_in_the_order_people_look_them_up() -> None:
    members = ["Zoë", "Élodie", "ada", "Bob"]
    report = group_report("lab", members, [], MARCH, {})
    assert [row.person for row in report.rows] == ["ada", "Bob", "Élodie", "Zoë"]
