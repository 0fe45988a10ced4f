"""How moments are written: for programs (RFC 3339, ``Z``) and for people."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from syncd.domain.moments import human_time, utc_stamp

PARIS = timezone(timedelta(hours=1))


def test_a_stamp_is_utc_with_z_and_its_microseconds_when_it_has_any() -> None:
    """Webhook payloads and Atom feeds: the moment in UTC, as precise as it is."""
    assert utc_stamp(datetime(2026, 3, 1, 10, 0, tzinfo=PARIS)) == "2026-03-01T09:00:00Z"
    moment = datetime(2026, 3, 1, 9, 0, 0, 250000, tzinfo=UTC)
    assert utc_stamp(moment) == "2026-03-01T09:00:00.250000Z"


def test_to_the_second_a_stamp_is_as_arxiv_writes_its_times() -> None:
    """arXiv's <published>, <updated> and responseDate: 20 characters, no fraction."""
    moment = datetime(2026, 3, 1, 10, 0, 0, 250000, tzinfo=PARIS)
    assert utc_stamp(moment, seconds=True) == "2026-03-01T09:00:00Z"


def test_people_read_the_minute() -> None:
    assert human_time(datetime(2026, 3, 1, 9, 5, 59, tzinfo=UTC)) == "2026-03-01 09:05"
