"""Versions arXiv keeps refusing, as the orchestrator stores them and asks again.

``syncd.domain.refusals`` decides (the halving, the waits, the summary);
this module records what a fetch learnt in ``Versions`` and logs it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

import structlog

from syncd import metrics
from syncd.domain.model import VersionRefusal
from syncd.domain.record import Record, versioned_id
from syncd.domain.refusals import Fetched, fetch_isolating, retry_wait
from syncd.storage import Versions

__all__ = ["fetch_earlier", "settle"]

_log = structlog.get_logger(__name__)


def settle(
    versions: Versions, fetched: Fetched, known: Mapping[str, VersionRefusal]
) -> dict[str, VersionRefusal]:
    """Store what ``fetched`` says about refusals; return the refused ids' records.

    ``known`` are the records held before the fetch: those of ids that came
    back are forgotten.
    """
    came_back = {versioned_id(r.arxiv_id or "", r.version or 0) for r in fetched.records}
    served = [ident for ident in known if ident in came_back]
    if served:
        versions.served(served)
    refusals = versions.refused(fetched.refused, retry_wait)
    for refusal in refusals.values():
        metrics.observe_version_refused()
        _log.warning(
            "version_refused",
            arxiv_id=refusal.versioned_id,
            failures=refusal.failures,
            error=refusal.last_error,
            next_try_at=refusal.next_try_at.isoformat() if refusal.next_try_at else None,
            outcome="set aside" if refusal.set_aside else "asked for again next cycle",
        )
    return refusals


def fetch_earlier(
    versions: Versions,
    fetch: Callable[[Sequence[str]], list[Record]],
    wanted: Sequence[str],
) -> tuple[list[Record], set[str]]:
    """Earlier versions for linking: the records that came back, and the ids still awaited.

    Set-aside versions whose next try has not come are not asked for: the
    cycle goes on as if they were not there.  A version refused fewer than
    ``SET_ASIDE_AFTER`` times in a row, or not isolated, is awaited: it may
    be the one a seed matches, so the caller decides nothing on its entry
    this cycle.
    """
    known = versions.refusals(wanted)
    moment = datetime.now(UTC)
    fetched = fetch_isolating(fetch, [i for i in wanted if i not in known or known[i].due(moment)])
    refusals = settle(versions, fetched, known)
    awaited = {ident for ident, refusal in refusals.items() if not refusal.set_aside}
    return fetched.records, awaited | set(fetched.unresolved)
