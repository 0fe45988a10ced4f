"""How commands print: aligned tables and JSON arrays, safe for a terminal."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from syncd.domain.textcontrols import for_terminal, json_for_terminal

__all__ = ["print_json", "print_table"]


def print_json(items: list[dict[str, Any]]) -> int:
    """``items`` as one JSON array; controls escaped. Returns exit code 0."""
    sys.stdout.write(json_for_terminal(json.dumps(items, ensure_ascii=False, indent=2)))
    sys.stdout.write("\n")
    return 0


def print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """``rows`` under ``header`` in aligned columns; a control in a cell shows as U+FFFD."""
    cells = [[for_terminal(str(c)) for c in row] for row in (header, *rows)]
    widths = [max(len(c) for c in col) for col in zip(*cells, strict=True)]
    for row in cells:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
