"""Backfill decisions from plain values: what to ask arXiv for, and what each version stores."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from structlog.testing import capture_logs

from syncd.cli.progress import BackfillReporter, describe_plan, format_duration
from syncd.domain.model import Revision, VersionGap, VersionRefusal
from syncd.domain.record import Record, split_arxiv_id
from syncd.domain.refusals import (
    MAX_RETRY,
    SET_ASIDE_AFTER,
    fetch_isolating,
    retry_wait,
    set_aside_summary,
)
from syncd.domain.views import field_evolution, revision_json
from syncd.errors import ApiError, FeedError, RetryableUpstreamError
from syncd.service.backfill import BackfillProgress, backfill_writes, plan_backfill

V1 = Record(
    arxiv_id="2602.09578",
    version=1,
    title="Rollout-Training Co-Design",
    abstract="We co-design rollout and training.",
    authors=("Zhaolong Xing", "Zhida Jiang"),
    authors_complete=True,
    published="2026-02-10T09:00:00Z",
    updated="2026-02-10T09:00:00Z",
)
V2 = replace(V1, version=2, title="FlexMARL", updated="2026-03-01T09:00:00Z")
V3 = replace(V2, version=3, comment="camera ready", updated="2026-04-01T09:00:00Z")


def _gap(
    version: int, stored: set[int], paper_id: int = 1, arxiv_id: str = "2602.09578"
) -> VersionGap:
    return VersionGap(paper_id, "Zhida Jiang", arxiv_id, arxiv_id, version, frozenset(stored))


class TestPlan:
    def test_missing_versions_are_those_the_history_lacks(self) -> None:
        """A paper at v4 holding v2 and v4 lacks v1 and v3."""
        assert _gap(4, {2, 4}).missing == (1, 3)
        assert _gap(1, {1}).missing == ()

    def test_requests_hold_many_papers_by_paper_then_version(self) -> None:
        """Three papers missing five versions cost one request, their ids in paper order."""
        gaps = [_gap(3, {3}), _gap(2, {2}, 2, "2512.22386"), _gap(3, {2, 3}, 3, "2604.06956")]
        plan = plan_backfill(gaps)
        assert plan.batches == (("2602.09578v1", "2602.09578v2", "2512.22386v1", "2604.06956v1"),)
        assert (plan.papers, plan.versions, plan.requests) == (3, 4, 1)

    def test_known_versions_need_no_request(self) -> None:
        """Versions fetched earlier in the cycle (to link seeds) are not asked for again."""
        plan = plan_backfill([_gap(3, {3})], known={"2602.09578v1"})
        assert plan.batches == (("2602.09578v2",),)
        assert plan.versions == 2

    def test_a_thousand_papers_cost_ceil_versions_over_batch(self) -> None:
        """1,000 papers at v3 missing 2,000 versions take five requests, not 2,000."""
        gaps = [_gap(3, {3}, n, f"2601.{n:05d}") for n in range(1000)]
        plan = plan_backfill(gaps)
        assert plan.versions == 2000
        assert plan.requests == 5  # 466 ids of 15 encoded characters fit 7,000


class TestWrites:
    def test_each_version_compared_with_the_one_before(self) -> None:
        """v1 stores no change; v2 reports its title against v1; each is marked arxiv:vN."""
        records = {"2602.09578v1": V1, "2602.09578v2": V2}
        (write,) = backfill_writes([_gap(3, {3})], records, {})
        assert [r.source for r in write.revisions] == ["arxiv:v1", "arxiv:v2"]
        assert [r.kinds for r in write.revisions] == [(), ("version", "title")]
        assert [r.record for r in write.revisions] == [V1, V2]

    def test_the_version_before_may_be_in_the_history(self) -> None:
        """A missing v3 after a stored v2 is compared with that stored v2 (the anchor)."""
        (write,) = backfill_writes([_gap(4, {1, 2, 4})], {"2602.09578v3": V3}, {(1, 2): V2})
        (revision,) = write.revisions
        assert revision.kinds == ("version", "comment")
        assert revision.changes["version"] == {"old": 2, "new": 3}

    def test_versions_not_fetched_are_left_for_later(self) -> None:
        """Only versions in hand become revisions; the paper is still written (to clear a flag)."""
        (write,) = backfill_writes([_gap(3, {3})], {"2602.09578v2": V2}, {})
        assert [r.record.version for r in write.revisions] == [2]
        (empty,) = backfill_writes([_gap(2, {1, 2})], {}, {})
        assert empty.revisions == ()


def _revision(record: Record, seq: int) -> Revision:
    return Revision(
        seq=seq,
        observed_at=datetime(2026, 6, 1, tzinfo=UTC),
        source="arxiv" if record.version else "000_seed.txt:3",
        version=record.version,
        version_date=record.version_date,
        kinds=(),
        changes={},
        record=record,
    )


class TestViews:
    def test_version_date_is_the_entrys_updated_and_null_for_seeds(self) -> None:
        """History JSON carries arXiv's date of the version, null for a seed revision."""
        seed = Record(title="FlexMARL", authors=("Zhaolong Xing",))
        assert revision_json(_revision(V2, 2))["version_date"] == "2026-03-01T09:00:00+00:00"
        assert revision_json(_revision(seed, 1))["version_date"] is None

    def test_field_evolution_is_one_line_per_distinct_value(self) -> None:
        """Each title once, with every version (or seed) that carried it, first seen first."""
        seed = Record(title="FlexMARL", authors=("Zhaolong Xing",))
        history = [_revision(r, n) for n, r in enumerate([seed, V1, V2, V3], start=1)]
        assert field_evolution(history, "title") == [
            ("FlexMARL", ("seed", "v2", "v3")),
            ("Rollout-Training Co-Design", ("v1",)),
        ]

    def test_a_field_a_seed_does_not_show_is_left_out(self) -> None:
        """A seed page shows no comment: it is not a value the field had."""
        seed = Record(title="FlexMARL")
        history = [_revision(r, n) for n, r in enumerate([seed, V2, V3], start=1)]
        assert field_evolution(history, "comment") == [(None, ("v2",)), ("camera ready", ("v3",))]
        assert json.dumps(field_evolution(history, "authors"))  # lists stay JSON-ready


class TestProgress:
    def test_durations_read_as_a_person_says_them(self) -> None:
        """Seconds, minutes and hours, rounded."""
        assert [format_duration(s) for s in (0.4, 42, 270, 300, 7500)] == [
            "0 s",
            "42 s",
            "4 min 30 s",
            "5 min",
            "2 h 5 min",
        ]

    def test_a_dry_run_says_requests_and_time_at_the_interval(self) -> None:
        """The plan's line names papers, versions, requests, the batch and arXiv's pace."""
        gaps = [_gap(3, {3}, n, f"2601.{n:05d}") for n in range(1000)]
        assert describe_plan(plan_backfill(gaps), 3.0) == (
            "1000 papers miss 2000 versions: 5 requests of up to 466 ids,"
            " about 15 s at one request every 3 s"
        )

    def test_off_a_terminal_progress_is_log_lines(self) -> None:
        """Without a terminal, each step is a backfill_progress line with the time left."""
        reporter = BackfillReporter(io.StringIO(), 3.0)
        with capture_logs() as logs:
            reporter(BackfillProgress(1, 4, 1, 3, 2))
        (line,) = logs
        assert line["event"] == "backfill_progress"
        assert (line["papers_done"], line["papers_total"], line["seconds_left"]) == (1, 4, 6.0)

    def test_on_a_terminal_progress_is_a_bar_redrawn_in_place(self) -> None:
        """On a terminal the bar is redrawn with a carriage return and ended with a newline."""

        class Terminal(io.StringIO):
            def isatty(self) -> bool:
                return True

        stream = Terminal()
        reporter = BackfillReporter(stream, 3.0)
        reporter(BackfillProgress(0, 4, 0, 2, 0))
        reporter(BackfillProgress(2, 4, 1, 2, 3))
        reporter.close()
        frames = stream.getvalue().split("\r")[1:]
        assert "0/4 papers  0/2 requests  about 6 s left" in frames[0]
        assert "2/4 papers  1/2 requests  about 3 s left" in frames[1]
        assert frames[1].endswith("\n")


NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _refusal(ident: str, failures: int, next_try_at: datetime | None) -> VersionRefusal:
    arxiv_id, version = split_arxiv_id(ident)
    assert version is not None
    return VersionRefusal(arxiv_id, version, failures, "refused", NOW, next_try_at)


class _Arxiv:
    """A fetch that refuses any request naming a refused id, and logs every request."""

    def __init__(self, refused: set[str], error: type[Exception] = ApiError) -> None:
        self.refused = refused
        self.error = error
        self.requests: list[list[str]] = []

    def __call__(self, ids: Sequence[str]) -> list[Record]:
        self.requests.append(list(ids))
        bad = sorted(self.refused.intersection(ids))
        if bad:
            raise self.error(f"{bad[0]} cannot be served")
        return [Record(arxiv_id=i.split("v")[0], version=int(i.split("v")[1])) for i in ids]


class TestRefusals:
    def test_asked_every_cycle_until_set_aside_then_doubling_up_to_a_day(self) -> None:
        """No wait before SET_ASIDE_AFTER refusals; then 1 h, 2 h, 4 h … capped at a day."""
        assert [retry_wait(n) for n in range(1, SET_ASIDE_AFTER)] == [None] * (SET_ASIDE_AFTER - 1)
        waits = [retry_wait(SET_ASIDE_AFTER + n) for n in range(7)]
        hours = [timedelta(hours=h) for h in (1, 2, 4, 8, 16)]
        assert waits == [*hours, timedelta(days=1), timedelta(days=1)]
        assert retry_wait(10**9) == MAX_RETRY  # no overflow, however long it lasts

    def test_one_refused_id_is_isolated_by_halving(self) -> None:
        """One refused id among 8: the other 7 come back in 2 requests per halving, not 8."""
        ids = [f"2601.{n:05d}v1" for n in range(8)]
        arxiv = _Arxiv({ids[5]})
        fetched = fetch_isolating(arxiv, ids)
        assert sorted(f"{r.arxiv_id}v{r.version}" for r in fetched.records) == ids[:5] + ids[6:]
        assert fetched.refused == {ids[5]: f"{ids[5]} cannot be served"}
        assert arxiv.requests == [ids, ids[:4], ids[4:], ids[4:6], [ids[4]], [ids[5]], ids[6:]]
        assert (fetched.isolation_requests, fetched.unresolved) == (6, [])

    def test_an_answer_lacking_an_id_is_a_refusal_too(self) -> None:
        """An untrusted answer (FeedError: it lacks a version) isolates like an error feed."""
        fetched = fetch_isolating(
            _Arxiv({"2601.00001v1"}, FeedError), ["2601.00001v1", "2601.00002v1"]
        )
        assert list(fetched.refused) == ["2601.00001v1"]
        assert [r.arxiv_id for r in fetched.records] == ["2601.00002"]

    def test_failures_that_may_pass_blame_no_id(self) -> None:
        """A 5xx or timeout (RetryableUpstreamError) ends the fetch: no halving, no refusal."""
        arxiv = _Arxiv({"2601.00001v1"}, RetryableUpstreamError)
        with pytest.raises(RetryableUpstreamError):
            fetch_isolating(arxiv, ["2601.00001v1", "2601.00002v1"])
        assert len(arxiv.requests) == 1

    def test_the_isolation_budget_bounds_the_requests(self) -> None:
        """arXiv refusing everything costs the budget, then the rest is left unresolved."""
        ids = [f"2601.{n:05d}v1" for n in range(64)]
        arxiv = _Arxiv(set(ids))
        fetched = fetch_isolating(arxiv, ids, budget=10)
        assert len(arxiv.requests) == 11
        assert fetched.records == []
        # Depth first: the ids reached alone are refused, the rest left for another time.
        assert list(fetched.refused) == ids[:4]
        assert fetched.unresolved == ids[4:]
        assert isinstance(fetched.error, ApiError)

    def test_set_aside_versions_wait_and_refused_ones_go_last(self) -> None:
        """A version set aside until later is not asked; one due again goes after the others."""
        gaps = [_gap(3, {3}), _gap(2, {2}, 2, "2512.22386"), _gap(2, {2}, 3, "2604.06956")]
        waiting = _refusal("2602.09578v1", 3, NOW + timedelta(hours=1))
        due = _refusal("2512.22386v1", 4, NOW - timedelta(seconds=1))
        suspect = _refusal("2602.09578v2", 1, None)
        refusals = {r.versioned_id: r for r in (waiting, due, suspect)}
        plan = plan_backfill(gaps, refusals=refusals, moment=NOW)
        assert plan.batches == (("2604.06956v1", "2602.09578v2", "2512.22386v1"),)
        assert plan.set_aside == (waiting,)
        assert set(plan.refusals) == {"2602.09578v2", "2512.22386v1"}
        assert (plan.papers, plan.versions) == (3, 4)

    def test_a_dry_run_names_the_set_aside_versions_and_the_next_try(self) -> None:
        """The second line lists what waits and when the first of it is asked again."""
        later = _refusal("2602.09578v1", 3, NOW + timedelta(hours=2))
        sooner = _refusal("2512.22386v1", 5, NOW + timedelta(hours=1))
        plan = plan_backfill(
            [_gap(2, {2}), _gap(2, {2}, 2, "2512.22386")],
            (),
            {r.versioned_id: r for r in (later, sooner)},
            NOW,
        )
        assert describe_plan(plan, 3.0).splitlines() == [
            "2 papers miss 2 versions: no request needed",
            "2 versions set aside after repeated refusals: 2512.22386v1, 2602.09578v1;"
            " next try at 2026-12-01T13:00:00+00:00",
        ]
        assert set_aside_summary([_refusal("2602.09578v1", 1, None)]) is None
