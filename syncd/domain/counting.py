"""A count and its noun, agreeing in number: "1 event", "2 events", "0 events"."""

from __future__ import annotations

__all__ = ["counted"]


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` followed by ``noun``, or by its ``plural`` (``noun`` + "s" by default)."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
