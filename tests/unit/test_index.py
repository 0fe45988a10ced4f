"""syncd.web.index: the status strip's verdicts, the index's search and order; change words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from syncd.domain.model import AuthorSyncs, SyncRun
from syncd.domain.throttle import Cooldown
from syncd.domain.vocabulary import RunStatus
from syncd.render.describe import change_words, counted
from syncd.storage.paper_lists import search_terms
from syncd.web.index import STRIP_AUTHORS, StripSummary, sync_status

NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _run(run_id: int, status: RunStatus, error: str | None = None) -> SyncRun:
    started = NOON + timedelta(minutes=run_id)
    return SyncRun(run_id, "Zhida Jiang", started, started, status, error, 1, 1, 0)


class TestSearchTerms:
    """What a search asks for; what it finds is tests/integration/test_paper_lists.py's."""

    def test_words_are_folded(self) -> None:
        assert search_terms("Élodie MÜLLER, re-calibration") == (
            None,
            ["elodie", "muller", "re", "calibration"],
        )

    def test_an_arxiv_id_as_people_write_it(self) -> None:
        for written in ("2602.00003", "arXiv:2602.00003v2", "https://arxiv.org/abs/2602.00003"):
            assert search_terms(written) == ("2602.00003", []), written
        assert search_terms("2602.0000") == (None, ["2602", "0000"])  # a prefix: words

    def test_a_blank_search_asks_for_nothing(self) -> None:
        assert search_terms("  ") == (None, [])


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
