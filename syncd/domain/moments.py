"""How syncd writes a moment: for programs (RFC 3339 in UTC, with ``Z``) and for people."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["human_time", "utc_stamp"]


def utc_stamp(moment: datetime, *, seconds: bool = False) -> str:
    """``moment`` in UTC, RFC 3339 with ``Z``: ``2026-03-01T09:00:00.250000Z`` (the
    microseconds when it has any), or to the second, as arXiv writes its times
    (``2026-03-01T09:00:00Z``)."""
    utc = moment.astimezone(UTC)
    if seconds:
        return utc.strftime("%Y-%m-%dT%H:%M:%SZ")
    return utc.isoformat().replace("+00:00", "Z")


def human_time(moment: datetime) -> str:
    """``moment`` as pages and status lines show it to people: ``2026-03-01 09:00``."""
    return moment.strftime("%Y-%m-%d %H:%M")
