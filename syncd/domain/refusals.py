"""Versions arXiv keeps refusing: isolated from their request, set aside, retried rarely.

What "refuses" means: an ``id_list`` answer that fails for a reason another
try of the same request would not cure (``PermanentUpstreamError``): arXiv's
error feed or another 4xx, or an answer that lacks a version asked for (or
carries one not asked for), which the client does not trust at all.  Such an
answer does not say which id it is about, so the request's ids are halved and
each half asked again (``fetch_isolating``), until every id either came back
or failed alone: that one is refused.  One refused id among 466 costs about
two requests per halving (18), not 466.  Failures that may pass (timeouts,
429, 5xx: ``RetryableUpstreamError``) say nothing about an id and end the
fetch as before.

A version refused ``SET_ASIDE_AFTER`` times in a row is set aside: nobody
asks for it until its next try, ``FIRST_RETRY`` later, doubling with every
refusal after that, at most ``MAX_RETRY`` apart.  Served once, its count is
forgotten.  The counts live in the database (``Versions.refused``); storing
them and asking arXiv is the orchestrator's part (``syncd.service.refusals``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from syncd.domain.counting import counted
from syncd.domain.model import VersionRefusal
from syncd.domain.record import Record
from syncd.errors import PermanentUpstreamError

__all__ = [
    "FIRST_RETRY",
    "ISOLATION_REQUESTS",
    "MAX_RETRY",
    "SET_ASIDE_AFTER",
    "Fetched",
    "fetch_isolating",
    "retry_wait",
    "set_aside_summary",
]

# Three refusals in a row (three cycles, or three `syncd backfill` runs): a
# glitch rarely lasts that long, and until then the version is asked for
# every cycle.
SET_ASIDE_AFTER = 3
# Then an hour, two, four, ... and at most a day between tries: a version
# arXiv serves again comes back within a day, and one it never serves costs
# about one request a day.
FIRST_RETRY = timedelta(hours=1)
MAX_RETRY = timedelta(days=1)
# The requests one fetch may spend isolating refused ids: three refused ids
# in a 466-id request, or one in each of three.  More refusals than that look
# like arXiv refusing everything, not a few versions.
ISOLATION_REQUESTS = 60


def retry_wait(failures: int) -> timedelta | None:
    """How long a version refused ``failures`` times in a row waits; None: ask every cycle."""
    if failures < SET_ASIDE_AFTER:
        return None
    doublings = min(failures - SET_ASIDE_AFTER, 16)  # 2**16 hours is far past the cap
    wait: timedelta = FIRST_RETRY * (1 << doublings)
    return min(MAX_RETRY, wait)


@dataclass
class Fetched:
    """What a fetch of versioned ids brought: records, refused ids (id → why), ids not tried.

    ``unresolved`` ids were in a refused request after the isolation budget
    ran out; ``error`` is the last refusal of a request of several ids;
    ``isolation_requests`` the requests spent isolating.
    """

    records: list[Record] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    unresolved: list[str] = field(default_factory=list)
    error: PermanentUpstreamError | None = None
    isolation_requests: int = 0


def fetch_isolating(
    fetch: Callable[[Sequence[str]], list[Record]],
    ids: Sequence[str],
    budget: int = ISOLATION_REQUESTS,
) -> Fetched:
    """``fetch(ids)`` in one request; when arXiv refuses it, halve until each refusal is alone.

    ``fetch`` is one request for ids that fit one; at most ``budget`` more
    requests are spent isolating.
    """
    fetched = Fetched()
    pending: list[Sequence[str]] = [ids] if ids else []
    first = True  # the request asked for; every later one isolates
    while pending:
        part = pending.pop()
        if not first:
            if fetched.isolation_requests >= budget:
                fetched.unresolved.extend(part)
                continue
            fetched.isolation_requests += 1
        first = False
        try:
            fetched.records.extend(fetch(part))
        except PermanentUpstreamError as exc:
            if len(part) == 1:
                fetched.refused[part[0]] = str(exc)
                continue
            fetched.error = exc
            half = len(part) // 2
            pending += [part[half:], part[:half]]  # the first half is asked first
    return fetched


def set_aside_summary(refusals: Collection[VersionRefusal], shown: int | None = 10) -> str | None:
    """The line saying which versions are set aside and when the first is tried again.

    ``2 versions set aside after repeated refusals: 2602.09578v1, …; next try
    at …``, naming ``shown`` of them (None: every one); None when none is.
    """
    waiting = sorted(
        (r for r in refusals if r.next_try_at is not None), key=lambda r: r.versioned_id
    )
    if not waiting:
        return None
    shown = len(waiting) if shown is None else shown
    names = ", ".join(r.versioned_id for r in waiting[:shown])
    if len(waiting) > shown:
        names += f", … ({len(waiting) - shown} more)"
    first = min(r.next_try_at for r in waiting if r.next_try_at is not None)
    return (
        f"{counted(len(waiting), 'version')} set aside after repeated refusals: {names};"
        f" next try at {first.isoformat(timespec='seconds')}"
    )
