"""Upstream faults: a cycle that cannot be trusted stores nothing and loses nothing."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from tests import fakearxiv as fa
from tests.fakearxiv import FakeArxiv
from tests.integration.conftest import Syncd
from tests.integration.pacing import PacerTurns
from tests.scenario import NESTPIPE


def _second_page(params: Any) -> bool:
    return bool(params.get("start") == "5")


PERSISTENT_FAULTS = {
    "503-exhausted": fa.status(503, retry_after=0, times=3),
    "500-exhausted": fa.status(500, times=3),
    "reset-exhausted": fa.reset(times=3),
    "timeout-exhausted": fa.timeout(1.0, times=3),
    "truncated-xml": fa.truncate(0.6),
    "empty-page-mid-paging": fa.empty_page(when=_second_page),
    "total-results-mismatch": fa.total_lie(3),
    "error-feed": fa.error_feed("incorrect id format for x"),
    "entity-bomb": fa.body(fa.BILLION_LAUGHS),
    "quadratic-blowup": fa.body(fa.QUADRATIC_BLOWUP),
    "external-entity": fa.body(fa.EXTERNAL_ENTITY_FILE),
    "html-proxy-page": fa.body(fa.HTML_PROXY_PAGE, content_type="text/html"),
    "empty-result": fa.empty_result(),
}

TRANSIENT_FAULTS = {
    "503-retry-after": fa.status(503, retry_after=1),
    "429": fa.status(429),
    "timeout": fa.timeout(1.0),
    "reset": fa.reset(),
    "502-proxy-html": fa.status(502, body=fa.HTML_PROXY_PAGE, content_type="text/html"),
}


def _baseline(syncd: Syncd) -> tuple[dict[str, int], dict[str, Any]]:
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    return syncd.counts(), syncd.papers()


@pytest.mark.parametrize("fault", PERSISTENT_FAULTS.values(), ids=PERSISTENT_FAULTS.keys())
def test_untrusted_cycle_fails_and_stores_nothing(
    syncd: Syncd, arxiv: FakeArxiv, fault: fa.Fault
) -> None:
    """The cycle fails (exit 1, run recorded failed) with no revision, no event, no loss."""
    counts, papers = _baseline(syncd)
    current = arxiv.current(NESTPIPE)
    arxiv.publish(replace(current, version=2, updated=None, title="NestPipe, revised"))
    arxiv.inject(fault)
    outcome = syncd("sync")
    assert outcome.code == 1
    assert "FAILED" in outcome.err
    assert syncd.last_run_status() == "failed"
    after = syncd.counts()
    assert after["revisions"] == counts["revisions"]
    assert after["events"] == counts["events"]
    assert syncd.papers() == papers
    # Once upstream behaves, the change made during the fault arrives, once.
    arxiv.clear_faults()
    assert syncd("sync").code == 0
    events = syncd.json("events")[counts["events"] :]
    assert [(e["type"], e["kinds"]) for e in events] == [("paper.revised", ["version", "title"])]


@pytest.mark.parametrize("fault", TRANSIENT_FAULTS.values(), ids=TRANSIENT_FAULTS.keys())
def test_transient_fault_is_retried_without_false_events(
    syncd: Syncd, arxiv: FakeArxiv, fault: fa.Fault
) -> None:
    """A fault that passes is retried; the cycle succeeds and reports no change."""
    counts, papers = _baseline(syncd)
    arxiv.reset_log()
    arxiv.inject(fault)
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    assert syncd.counts()["events"] == counts["events"]
    assert syncd.counts()["revisions"] == counts["revisions"]
    assert syncd.papers() == papers
    assert len(arxiv.requests) == 3  # the failed try, then both pages


def test_retry_after_is_honoured(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """After a 503 with Retry-After: 1 the next request waits at least a second."""
    _baseline(syncd)
    arxiv.reset_log()
    arxiv.inject(fa.status(503, retry_after=1))
    assert syncd("sync").code == 0
    first, second = arxiv.requests[:2]
    assert second.time - first.time >= 1.0


# A year no datetime holds: email.utils raises OverflowError (past a C long) for it.
HUGE_YEAR_DATE = "Mon, 01 Jan 99999999999999999999999 00:00:00 GMT"


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(fa.status(503, retry_after="9" * 400, date=HUGE_YEAR_DATE, times=3), id="503"),
        pytest.param(
            fa.status(
                429, retry_after="Fri, 31 Dec 9999 23:59:59 GMT", date=HUGE_YEAR_DATE, times=3
            ),
            id="429-http-date",
        ),
    ],
)
def test_a_crafted_date_or_retry_after_fails_the_cycle_cleanly(
    syncd: Syncd, arxiv: FakeArxiv, fault: fa.Fault
) -> None:
    """A 503 or 429 with a Date in no year a datetime holds and a wait past any float is a
    throttle like another: each retry waits the longest cooldown (2 s), then exit 1 with
    its cycle_failed line and the run failed, no traceback."""
    _baseline(syncd)
    arxiv.inject(fault)
    outcome = syncd("sync")
    assert outcome.code == 1
    assert "Traceback" not in outcome.err
    failed = [line for line in _log_lines(outcome.err) if line["event"] == "cycle_failed"]
    assert [line["error_type"] for line in failed] == ["Throttled"]
    assert "(Retry-After 86400 s)" in failed[0]["error"]
    assert syncd.last_run_status() == "failed"


def _log_lines(err: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in err.splitlines() if line.startswith("{")]


def test_no_retry_on_400(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """A 400 error feed is not retried, and arXiv's message is surfaced."""
    _baseline(syncd)
    arxiv.reset_log()
    arxiv.inject(fa.error_feed("malformed query here"))
    outcome = syncd("sync")
    assert outcome.code == 1
    assert "malformed query here" in outcome.err
    assert len(arxiv.requests) == 1


def test_sudden_emptiness_is_never_a_removal(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """An empty answer for an author with papers fails every time and removes nothing."""
    counts, papers = _baseline(syncd)
    arxiv.inject_always(fa.empty_result())
    for _ in range(4):
        assert syncd("sync").code == 1
    assert syncd.counts()["events"] == counts["events"]
    assert syncd.papers() == papers


def test_requests_are_spaced_by_the_interval(
    syncd: Syncd, arxiv: FakeArxiv, pacer_turns: PacerTurns
) -> None:
    """Every request of two cycles, retries included, took a turn of its own, and no two
    turns began closer than request_interval by the clock of the pacer that spaced them
    (not by arrivals at the fake, which a busy machine brings closer: see pacing.py)."""
    syncd.request_interval = 0.3
    arxiv.inject(fa.status(503, retry_after=0), fa.reset())
    assert syncd("sync").code == 0
    assert syncd("sync").code == 0
    assert len(arxiv.requests) >= 6
    assert len(pacer_turns.times()) == len(arxiv.requests)
    assert min(pacer_turns.gaps()) >= 0.3
