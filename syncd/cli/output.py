"""What every command shares: exit codes, tables, JSON, errors."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from syncd.cli.table import Column, table_lines, table_width
from syncd.domain.textcontrols import json_for_terminal

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_FAILURE",
    "EXIT_OK",
    "EXIT_USAGE",
    "TIME_FORMAT",
    "fail",
    "print_json",
    "print_table",
]

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
# 128 + SIGPIPE: what a shell reports for `yes | head` or `git log | head`,
# whose writers die of the signal when their reader goes away.  Scripts under
# `set -o pipefail` thus see syncd end as coreutils and git do (0 would claim
# every line was written; 1 would claim a failure).
EXIT_BROKEN_PIPE = 141

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def print_table(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> None:
    """``rows`` under the ``columns``' headers, fitted to the terminal (``syncd.cli.table``);
    a control in a cell shows as U+FFFD."""
    for line in table_lines(columns, rows, table_width()):
        print(line)


def print_json(items: list[dict[str, Any]] | dict[str, Any]) -> int:
    sys.stdout.write(json_for_terminal(json.dumps(items, ensure_ascii=False, indent=2)))
    sys.stdout.write("\n")
    return EXIT_OK


def fail(code: int, message: str) -> int:
    print(f"syncd: error: {message}", file=sys.stderr)
    return code
