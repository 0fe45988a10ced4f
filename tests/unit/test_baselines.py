"""An author's baseline from a harvest: papers held awaiting the pass, and the history a
later sweep finds kept quiet (``syncd.domain.baselines``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from syncd.domain.baselines import AWAITING_HARVEST, quiet_before
from syncd.domain.model import Paper, PaperWrite
from syncd.domain.planner import Observed, Snapshot, plan_cycle
from syncd.domain.record import Record, content_hash
from syncd.domain.vocabulary import EventType, Origin, PaperStatus

AUTHOR = "Zhida Jiang"
SINCE = date(2026, 7, 1)


def _record(arxiv_id: str, updated: str, *coauthors: str) -> Record:
    return Record(
        arxiv_id=arxiv_id,
        version=1,
        title=f"Paper {arxiv_id}",
        authors=(AUTHOR, *(coauthors or ("Yang Xu",))),
        authors_complete=True,
        primary_category="cs.DC",
        categories=("cs.DC",),
        published=updated,
        updated=updated,
    )


OLD = _record("2501.00001", "2025-01-05T10:00:00Z")
NEW = _record("2607.00002", "2026-07-01T09:00:00Z")


def _write(record: Record, event: EventType | None, **fields: object) -> PaperWrite:
    values: dict[str, object] = {
        "key": record.arxiv_id,
        "arxiv_id": record.arxiv_id,
        "status": PaperStatus.TRACKED,
        "origin": Origin.ARXIV,
        "event_type": event,
    } | fields
    return PaperWrite(**values)  # type: ignore[arg-type]


class TestQuietBefore:
    def test_papers_older_than_the_pass_are_history(self) -> None:
        """Added before the day the pass listed from: recorded, announced by nothing; on or
        after it (the harvest should have seen it): announced."""
        writes = [_write(OLD, EventType.ADDED), _write(NEW, EventType.ADDED)]
        quiet = quiet_before(writes, {r.arxiv_id or "": r for r in (OLD, NEW)}, SINCE)
        assert [w.event_type for w in quiet] == [None, EventType.ADDED]
        assert quiet[0] == replace(writes[0], event_type=None)

    def test_a_name_query_baseline_changes_nothing(self) -> None:
        writes = [_write(OLD, EventType.ADDED)]
        assert quiet_before(writes, {OLD.arxiv_id or "": OLD}, None) == writes

    def test_a_revision_is_news_however_old_the_paper(self) -> None:
        writes = [_write(OLD, EventType.REVISED)]
        assert quiet_before(writes, {OLD.arxiv_id or "": OLD}, SINCE) == tuple(writes)

    def test_a_review_notice_is_quiet_only_when_all_it_names_is_old(self) -> None:
        def notice(*held: Record) -> PaperWrite:
            ids = [r.arxiv_id for r in held]
            changes = {"author": {"name": AUTHOR, "candidate_ids": ids}}
            return _write(
                held[0],
                EventType.REVIEW_NEEDED,
                status=PaperStatus.CANDIDATE,
                event_changes=changes,
            )

        records = {r.arxiv_id or "": r for r in (OLD, NEW)}
        only_old = notice(OLD)
        assert quiet_before([only_old], records, SINCE)[0].event_type is None
        mixed = [notice(OLD, NEW), _write(NEW, None, status=PaperStatus.CANDIDATE)]
        assert quiet_before(mixed, records, SINCE)[0].event_type == EventType.REVIEW_NEEDED


class TestPendingPlan:
    def test_a_pass_before_the_baseline_holds_every_paper_awaiting_it(self) -> None:
        """During the pass nothing is decided: written-out name or not, held quietly; a
        claimed or configured paper is theirs at once, quietly too."""
        observed = Observed()
        observed.take([OLD, NEW], {})
        snapshot = Snapshot(
            author=AUTHOR,
            include_ids=(NEW.arxiv_id or "",),
            removal_after=3,
            basis_margin=2.0,
            baseline=True,
            pending=True,
        )
        plan = plan_cycle(snapshot, observed, {})
        by_id = {w.arxiv_id: w for w in plan.writes}
        assert by_id[OLD.arxiv_id].status == PaperStatus.CANDIDATE
        assert by_id[OLD.arxiv_id].candidate_reason == AWAITING_HARVEST
        assert by_id[NEW.arxiv_id].status == PaperStatus.TRACKED
        assert all(w.event_type is None for w in plan.writes)

    def test_the_baseline_decides_them_together(self) -> None:
        """At the pass's end the co-author basis sees every held paper at once: two papers
        sharing a co-author are one group, taken; a stranger's is held with its reason."""
        shared = _record("2607.00003", "2026-07-01T09:00:00Z", "Yang Xu")
        stranger = _record("2607.00004", "2026-07-01T09:00:00Z", "Marie Curie")
        observed = Observed()
        observed.take([OLD, shared, stranger], {})
        snapshot = Snapshot(
            author=AUTHOR, include_ids=(), removal_after=3, basis_margin=2.0, baseline=True
        )
        plan = plan_cycle(snapshot, observed, {})
        status = {w.arxiv_id: w.status for w in plan.writes}
        assert status == {
            OLD.arxiv_id: PaperStatus.TRACKED,
            shared.arxiv_id: PaperStatus.TRACKED,
            stranger.arxiv_id: PaperStatus.CANDIDATE,
        }
        assert plan.baseline is not None and plan.baseline.tracked == 2

    def test_a_first_sync_judges_the_held_papers_with_its_own(self) -> None:
        """A name query's baseline (a sync by hand) after a pass held papers: the held
        ones seen again are grouped with the new ones, not taken unjudged."""
        shared = _record("2607.00003", "2026-07-01T09:00:00Z", "Yang Xu")
        stranger = _record("2607.00004", "2026-07-01T09:00:00Z", "Marie Curie")
        held = Paper(
            id=9,
            author=AUTHOR,
            key=stranger.arxiv_id or "",
            arxiv_id=stranger.arxiv_id,
            status=PaperStatus.CANDIDATE,
            origin=Origin.ARXIV,
            record=stranger,
            record_hash=content_hash(stranger),
            absent_syncs=0,
        )
        observed = Observed()
        observed.take([OLD, shared], {})
        observed.changed[stranger.arxiv_id or ""] = stranger
        snapshot = Snapshot(
            author=AUTHOR,
            include_ids=(),
            removal_after=3,
            basis_margin=2.0,
            baseline=True,
            changed=(held,),
        )
        plan = plan_cycle(snapshot, observed, {})
        status = {w.arxiv_id: w.status for w in plan.writes}
        assert status[OLD.arxiv_id] == status[shared.arxiv_id] == PaperStatus.TRACKED
        assert status.get(stranger.arxiv_id, PaperStatus.CANDIDATE) == PaperStatus.CANDIDATE
        assert plan.baseline is not None and plan.baseline.tracked == 2
