"""What the CLI writes to a terminal: arXiv's text, never a control that acts on the terminal.

A title may hold ANSI escapes (C0 ESC, C1 CSI) that recolour, move or retitle
the terminal, or bidi controls (U+202E) that reverse the columns after it.
"""

from __future__ import annotations

import json
import re

import pytest

from syncd.cli.output import print_json, print_table
from syncd.cli.table import Column

HOSTILE_TITLE = "Evil \x1b[2J\x1b]0;pwned\x07 \x9b31m \u202ereversed \u2067isolated\r\nline"
# C0 (tab, newline included), DEL, C1 and Unicode's bidi formatting characters.
ACTING = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@pytest.mark.parametrize("columns", ["", "60"])
def test_a_table_cell_shows_no_control(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    """Whole or cut to a width, a cell shows no control a terminal would act on."""
    monkeypatch.setenv("COLUMNS", columns)
    rows = [("2601.00001", HOSTILE_TITLE * 3), ("2601.00002", "Fine")]
    print_table((Column("KEY"), Column("TITLE", shrink_to=10)), rows)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3  # the title's own line breaks do not break the table
    for line in lines:
        assert not ACTING.search(line), repr(line)
    assert "Evil" in lines[1] and "reversed" in lines[1]
    assert lines[1].endswith("…" if columns else "line")


def test_json_escapes_what_would_act_and_keeps_the_value(
    capsys: pytest.CaptureFixture[str],
) -> None:
    print_json([{"title": HOSTILE_TITLE}])
    out = capsys.readouterr().out
    assert not ACTING.search(out.replace("\n", "")), repr(out)
    assert json.loads(out) == [{"title": HOSTILE_TITLE}]
