"""syncd.web.index: the status strip's verdicts, the index's search and order; change words."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from syncd.domain.model import LatestChange, Paper, SyncRun, SyncTally
from syncd.domain.record import Record
from syncd.domain.throttle import Cooldown
from syncd.domain.vocabulary import Origin, PaperStatus, RunStatus
from syncd.render.describe import change_words, counted
from syncd.web.index import MAX_QUERY, by_latest_change, search, sync_status

NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _paper(
    paper_id: int, key: str, title: str, authors: tuple[str, ...] = ("Ada Lovelace",)
) -> Paper:
    arxiv_id = f"2602.{paper_id:05d}"
    return Paper(
        id=paper_id,
        author="Zhida Jiang",
        key=key,
        arxiv_id=arxiv_id,
        status=PaperStatus.TRACKED,
        origin=Origin.ARXIV,
        record=Record(arxiv_id=arxiv_id, version=1, title=title, authors=authors),
        record_hash="",
        absent_syncs=0,
    )


def _run(run_id: int, status: RunStatus, error: str | None = None) -> SyncRun:
    started = NOON + timedelta(minutes=run_id)
    return SyncRun(run_id, "Zhida Jiang", started, started, status, error, 1, 1, 0)


PAPERS = [
    _paper(1, "flexmarl", "FlexMARL: Graph-Driven Rollout", ("Zhida Jiang", "Élodie Müller")),
    _paper(2, "nestpipe", "NestPipe: Scaling Recommendation Training"),
    _paper(3, "lrmoe", "LRMoE: Demand-Side Load Re-Calibration"),
]


class TestSearch:
    def test_title_words_in_any_case_and_order(self) -> None:
        assert [p.key for p in search(PAPERS, "training NESTPIPE")] == ["nestpipe"]

    def test_an_arxiv_id_as_people_write_it(self) -> None:
        for written in ("2602.00003", "arXiv:2602.00003v2", "https://arxiv.org/abs/2602.00003"):
            assert [p.key for p in search(PAPERS, written)] == ["lrmoe"], written
        assert [p.key for p in search(PAPERS, "2602.0000")] == [p.key for p in PAPERS]  # a prefix

    def test_an_author_without_accents_or_case(self) -> None:
        assert [p.key for p in search(PAPERS, "elodie muller")] == ["flexmarl"]
        assert len(search(PAPERS, "zhida")) == 3  # the followed author: every paper

    def test_punctuation_and_blank_searches(self) -> None:
        assert search(PAPERS, "  ") == PAPERS
        assert [p.key for p in search(PAPERS, "re-calibration")] == ["lrmoe"]

    def test_a_search_is_cut_to_its_bound(self) -> None:
        assert search(PAPERS, "nestpipe" + " " * MAX_QUERY + "nothing") == [PAPERS[1]]


class TestLatestChangeOrder:
    def test_newest_first_ties_and_unknowns_by_key(self) -> None:
        changes = {
            1: LatestChange(NOON, "paper.added", ()),
            2: LatestChange(NOON + timedelta(hours=1), "paper.revised", ("title",)),
            3: LatestChange(NOON, None, ()),
        }
        assert [p.key for p in by_latest_change(PAPERS, changes)] == [
            "nestpipe",
            "flexmarl",
            "lrmoe",
        ]
        assert [p.key for p in by_latest_change(PAPERS, {})] == ["flexmarl", "lrmoe", "nestpipe"]


TALLY = SyncTally(authors=3, synced=1, failing=1, running=0, unknown_ids=0, last_synced=NOON)


class TestSyncStatus:
    """The counting itself is the database's (tests/integration/test_status_strip.py)."""

    def test_without_the_scheduler_the_next_sync_is_not_known(self) -> None:
        status = sync_status(TALLY, None)
        assert status.every_sync_failed is None
        assert (status.scheduled, status.next_sync) == (False, None)

    def test_every_sync_failed_is_the_tallys_latest_failure(self) -> None:
        failed = _run(2, RunStatus.ABANDONED, "killed")
        tally = replace(TALLY, synced=0, last_synced=None, all_failed=failed)
        assert sync_status(tally, None).every_sync_failed == failed

    def test_never_synced_is_what_neither_synced_nor_failing(self) -> None:
        assert TALLY.never == 1
        status = sync_status(TALLY, lambda: NOON, group="Lab")
        assert (status.scheduled, status.next_sync, status.group) == (True, NOON, "Lab")

    def test_hosts_that_slow_us_down_are_listed_by_name(self) -> None:
        """Throttling and recovering hosts show, by host name; one never throttled does not.
        The strip's line names the throttling cooldown that lasts longest."""
        throttling = Cooldown(240.0, NOON + timedelta(minutes=4), NOON, 3)
        sooner = Cooldown(240.0, NOON + timedelta(minutes=1), NOON, 3)
        recovering = Cooldown(120.0, NOON, NOON, 0)
        cooldowns = {
            "oaipmh.arxiv.org": throttling,
            "export.arxiv.org": recovering,
            "static.arxiv.org": sooner,
            "arxiv.org": Cooldown(throttled_at=NOON),
        }
        status = sync_status(TALLY, None, cooldowns=cooldowns)
        assert status.throttled == (
            ("export.arxiv.org", recovering),
            ("oaipmh.arxiv.org", throttling),
            ("static.arxiv.org", sooner),
        )
        assert status.throttling == throttling
        assert sync_status(TALLY, None, cooldowns={"a": recovering}).throttling is None


class TestWords:
    def test_change_words(self) -> None:
        assert change_words("paper.revised", ["version", "journal_ref"]) == (
            "Version, Journal reference"
        )
        assert change_words("paper.linked", ["title"]) == "linked to arXiv; Title"
        assert change_words("paper.added", []) == "new paper"
        assert change_words(None, []) == ""

    def test_counts_agree_in_number(self) -> None:
        assert [counted(n, "event") for n in (0, 1, 2)] == ["0 events", "1 event", "2 events"]
        assert counted(1, "entry", "entries") == "1 entry"
        assert counted(3, "entry", "entries") == "3 entries"
