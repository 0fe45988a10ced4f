"""The outbox's vocabulary: endpoints as the store keeps them, and which events they take.

Pure data and decisions: the store writes a delivery row per accepting
endpoint in the event's own transaction; the dispatcher works the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["EndpointSpec", "accepts"]


@dataclass(frozen=True, slots=True)
class EndpointSpec:
    """A configured endpoint as the outbox needs it: no secrets, just routing."""

    name: str
    url: str
    events: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()


def accepts(
    events: Sequence[str], kinds: Sequence[str], event_type: str, event_kinds: Sequence[str]
) -> bool:
    """Whether an endpoint filtering on ``events`` and ``kinds`` takes this event.

    An empty filter takes everything.  A kinds filter only narrows events
    that carry kinds; paper.added and paper.removed pass it.
    """
    if events and event_type not in events:
        return False
    return not (kinds and event_kinds and not set(kinds) & set(event_kinds))
