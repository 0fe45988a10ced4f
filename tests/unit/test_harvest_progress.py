"""Tests for the progress of ``syncd harvest`` (``HarvestReporter``): an honest time left."""

from __future__ import annotations

import io

from structlog.testing import capture_logs

from syncd.cli.progress import HarvestReporter
from syncd.service.harvest import HarvestResult

PAGE = 3_500


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    """A clock that moves only when a test moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _after(pages: int, size: int | None, cursor_start: int = 0) -> HarvestResult:
    """The harvest after ``pages`` full pages, from a list of ``size`` records (None: uncounted)."""
    listed = cursor_start + pages * PAGE if size is not None else None
    return HarvestResult(
        pages=pages, records=pages * PAGE, listed=listed, list_size=size, reached="2007-03-01"
    )


def _shown(size: int | None, pages: int, step: float = 2.0) -> list[str]:
    """Each line the bar draws over ``pages`` pages, one every ``step`` seconds."""
    stream, clock = Terminal(), Clock()
    reporter = HarvestReporter(stream, clock)
    lines = []
    for page in range(1, pages + 1):
        reporter(_after(page, size))
        lines.append(stream.getvalue().rsplit("\r", 1)[-1].strip())
        clock.now += step
    return lines


class TestTimeLeft:
    def test_said_only_after_a_few_pages(self) -> None:
        """The first pages' rate says little: no time left until HONEST_AFTER more pages."""
        lines = _shown(2_500_000, HarvestReporter.HONEST_AFTER + 1)
        assert all("left" not in line for line in lines[:-1])
        assert "left" in lines[-1]

    def test_records_left_at_the_observed_rate(self) -> None:
        """3,500 records every 2 s is 1,750 a second: 2,486,000 left is about 23 min 41 s."""
        last = _shown(2_500_000, 4)[-1]
        assert "] 14,000/2,500,000  1,750/s" in last
        assert "about 23 min 41 s left" in last

    def test_a_resumed_list_counts_its_rate_from_this_run(self) -> None:
        """A harvest resumed at record 10.5 million of 24.5: 3,500 records a second over this
        run's pages, so 13,986,000 left is 3,996 s."""
        stream, clock = Terminal(), Clock()
        reporter = HarvestReporter(stream, clock)
        for page in range(1, 5):
            reporter(_after(page, 7_000 * PAGE, cursor_start=3_000 * PAGE))
            clock.now += 1.0
        last = stream.getvalue().rsplit("\r", 1)[-1]
        assert "10,514,000/24,500,000  3,500/s  about 1 h 6 min left" in last

    def test_no_time_left_without_the_list_size(self) -> None:
        """arXiv's 2025 tokens count nothing: how far the datestamps came, the rate, no guess."""
        lines = _shown(None, 6)
        assert all("left" not in line for line in lines)
        assert "21,000 records, listed up to 2007-03-01" in lines[-1]
        assert "1,750/s" in lines[-1]


class TestOffATerminal:
    def test_log_lines_carry_the_counts_and_the_honest_time_left(self) -> None:
        clock = Clock()
        reporter = HarvestReporter(io.StringIO(), clock)
        with capture_logs() as logs:
            for page in range(1, 5):
                reporter(_after(page, 35_000))
                clock.now += 2.0
        assert [line["event"] for line in logs] == ["harvest_progress"] * 4
        assert [line["seconds_left"] for line in logs] == [None, None, None, 12]
        assert (logs[-1]["listed"], logs[-1]["list_size"]) == (14_000, 35_000)
