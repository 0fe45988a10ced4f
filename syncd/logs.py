"""Logging: structlog, configured once by the CLI.

JSON lines when the stream is not a terminal (containers, log shippers),
a readable console format when it is.  Event names are stable snake_case.
"""

from __future__ import annotations

import logging
import sys
from typing import Literal, TextIO

import structlog

__all__ = ["configure_logging", "route_library_logs"]

LogFormat = Literal["auto", "json", "console"]

_log = structlog.get_logger(__name__)


def configure_logging(
    level: str = "info", fmt: LogFormat = "auto", stream: TextIO | None = None
) -> None:
    """Route structlog to ``stream`` (stderr by default) at ``level`` in ``fmt``."""
    out = stream or sys.stderr
    as_json = fmt == "json" or (fmt == "auto" and not out.isatty())
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer()
        if as_json
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )


class _ToStructlog(logging.Handler):
    """A library's own log lines, as syncd's JSON lines named after the library: its
    warnings are routine and go to debug, its errors to warning."""

    def __init__(self, library: str) -> None:
        super().__init__()
        self.library = library

    def emit(self, record: logging.LogRecord) -> None:
        level = "warning" if record.levelno >= logging.ERROR else "debug"
        getattr(_log, level)(self.library, message=record.getMessage()[:500])


def route_library_logs(library: str) -> None:
    """Send the library's loggers through structlog once (without it they print plain text)."""
    logger = logging.getLogger(library)
    if not any(isinstance(h, _ToStructlog) for h in logger.handlers):
        logger.addHandler(_ToStructlog(library))
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
