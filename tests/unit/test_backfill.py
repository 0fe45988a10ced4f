"""Backfill decisions from plain values: what to ask arXiv for, and what each version stores."""

from __future__ import annotations

from dataclasses import replace

from syncd.backfill import backfill_writes, plan_backfill
from syncd.record import Record
from syncd.storage.models import VersionGap

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
