"""syncd.web.index: the status strip's verdicts, the index's search and order; change words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from syncd.domain.model import AuthorSyncs, LatestChange, Paper, SyncRun
from syncd.domain.record import Record
from syncd.domain.throttle import Cooldown
from syncd.domain.vocabulary import Origin, PaperStatus, RunStatus
from syncd.render.describe import change_words, counted
from syncd.web.index import (
    MAX_QUERY,
    STRIP_AUTHORS,
    StripSummary,
    by_latest_change,
    search,
    sync_status,
)

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


class TestSyncStatus:
    def test_a_failure_after_a_success_is_failing(self) -> None:
        runs = AuthorSyncs("Zhida Jiang", _run(1, RunStatus.OK), _run(2, RunStatus.FAILED), False)
        assert runs.failing
        status = sync_status([runs], ["Zhida Jiang"], None)
        assert status.every_sync_failed is None
        assert (status.scheduled, status.next_sync) == (False, None)

    def test_a_success_after_a_failure_is_not(self) -> None:
        runs = AuthorSyncs("Zhida Jiang", _run(3, RunStatus.OK), _run(2, RunStatus.FAILED), False)
        assert not runs.failing

    def test_every_sync_failed_names_the_latest_failure(self) -> None:
        first = AuthorSyncs("Zhida Jiang", None, _run(1, RunStatus.FAILED, "HTTP 503"), False)
        second = AuthorSyncs("Ada", None, _run(2, RunStatus.ABANDONED, "killed"), False)
        status = sync_status([first, second], ["Zhida Jiang", "Ada"], None)
        failed = status.every_sync_failed
        assert failed is not None
        assert failed.error == "killed"

    def test_followed_authors_without_runs_are_listed_never_synced(self) -> None:
        status = sync_status([], ["Zhida Jiang"], lambda: NOON)
        (only,) = status.authors
        assert (only.author, only.last_success, only.failing) == ("Zhida Jiang", None, False)
        assert status.every_sync_failed is None  # nothing failed: nothing tried yet
        assert (status.scheduled, status.next_sync) == (True, NOON)

    def test_hosts_that_slow_us_down_are_listed_by_name(self) -> None:
        """Throttling and recovering hosts show, by host name; one never throttled does not."""
        throttling = Cooldown(240.0, NOON, NOON, 3)
        recovering = Cooldown(120.0, NOON, NOON, 0)
        cooldowns = {
            "oaipmh.arxiv.org": throttling,
            "export.arxiv.org": recovering,
            "arxiv.org": Cooldown(throttled_at=NOON),
        }
        status = sync_status([], ["Zhida Jiang"], None, cooldowns=cooldowns)
        assert status.throttled == (
            ("export.arxiv.org", recovering),
            ("oaipmh.arxiv.org", throttling),
        )

    def test_a_few_authors_are_named_each(self) -> None:
        names = [f"Author {n}" for n in range(STRIP_AUTHORS)]
        status = sync_status([], names, None)
        assert [a.author for a in status.listed] == names
        assert status.summary is None

    def test_many_are_counted_and_only_those_needing_a_look_named(self) -> None:
        """13 authors: 9 synced, 2 failing, 1 syncing now (never synced), 1 never synced."""
        ok, failed = _run(1, RunStatus.OK), _run(2, RunStatus.FAILED)
        later = _run(5, RunStatus.OK)
        found = [AuthorSyncs(f"Ok {n}", ok, None, False) for n in range(8)]
        found += [
            AuthorSyncs("Latest", later, None, False),
            AuthorSyncs("Failing", ok, failed, False),
            AuthorSyncs("Failing first", None, failed, False),
            AuthorSyncs("Running", None, None, True),
        ]
        names = [a.author for a in found] + ["Never"]
        status = sync_status(found, names, None)
        assert [a.author for a in status.listed] == ["Failing", "Failing first", "Running"]
        assert status.summary == StripSummary(
            authors=13, synced=9, failing=2, last_synced=later.finished_at
        )


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
