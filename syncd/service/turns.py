"""Taking turns with the other writers of an author's papers.

A cycle plans an author's writes from what it read, and so does a harvest
page; each applies them later, and in between the other (on this replica or
another) may have applied the same change.  Each reads the author's write
sequence before anything of theirs (``Papers.write_seqs``), and an apply
goes on only from that value (``syncd.storage.papers.claim_writes``), else
``StalePlan`` and nothing stored: ``until_fresh`` then plans again from what
is stored now, so one change is announced once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import structlog

from syncd.errors import StalePlan

__all__ = ["MAX_PLANS", "until_fresh"]

_log = structlog.get_logger(__name__)

T = TypeVar("T")

# Plans of one apply while other applies keep writing the same papers: past it, a failure.
MAX_PLANS = 3


def until_fresh(
    attempt: Callable[[], T], again: Callable[[], None] | None = None, *, event: str
) -> T:
    """``attempt()``: a plan and its apply.  After ``StalePlan``, ``again()`` (what the plan
    kept, compared with what is stored now) and another attempt, logged as ``event``;
    ``StalePlan`` past ``MAX_PLANS``."""
    plans = 1
    while True:
        try:
            return attempt()
        except StalePlan:
            if plans == MAX_PLANS:
                raise
        plans += 1
        _log.info(event, plans=plans, reason="another writer stored the author's papers first")
        if again is not None:
            again()
