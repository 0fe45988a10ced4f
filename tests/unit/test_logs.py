"""Libraries' own log lines come out as syncd's JSON lines, never as plain text."""

from __future__ import annotations

import logging

from structlog.testing import capture_logs

from syncd.logs import route_library_logs


def test_a_schedulers_warning_is_a_debug_line_and_its_error_a_warning() -> None:
    """APScheduler skips a cycle still running when the next is due, with a warning that
    is routine; an error of its own is worth a warning line."""
    route_library_logs("apscheduler")
    route_library_logs("apscheduler")  # once: a second call adds no second handler
    scheduler = logging.getLogger("apscheduler.scheduler")
    with capture_logs() as lines:
        scheduler.warning("Execution of job %s skipped", "sync")
        scheduler.error("it broke")
    assert lines == [
        {"event": "apscheduler", "message": "Execution of job sync skipped", "log_level": "debug"},
        {"event": "apscheduler", "message": "it broke", "log_level": "warning"},
    ]
