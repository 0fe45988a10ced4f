"""syncd.web.index: the status strip's verdicts, the index's search and order; change words."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from syncd.domain.model import SyncRun, SyncTally
from syncd.domain.throttle import Cooldown
from syncd.domain.vocabulary import RunStatus
from syncd.render.describe import change_words, counted
from syncd.storage.paper_lists import search_terms
from syncd.web.index import sync_status

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
