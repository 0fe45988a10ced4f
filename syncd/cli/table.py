"""Tables that fit the terminal: one layout for every command's table.

A column is one of three kinds.  An identifier (the default) is shown whole,
always: a user copies it into the next command.  A text column (a title)
shrinks, cut with "…", down to its ``shrink_to`` cells.  A secondary column
(a key slug, a date) is dropped, lowest ``drop_rank`` first, when the columns
that stay would not fit with their text cut to what it ``wants`` (a title of
ten cells beside a whole key slug reads worse than a title of fifty alone).

The width is ``COLUMNS`` when set, else the terminal's when stdout is one;
written to a pipe or a file, a table has no width and nothing is cut, so
``grep`` and ``awk`` see every title whole (``COLUMNS=80 syncd papers | less``
cuts it).  Widths are counted in terminal cells: East Asian wide characters
take two, combining marks none.
"""

from __future__ import annotations

import os
import shutil
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from syncd.domain.textcontrols import for_terminal

__all__ = ["Column", "display_width", "fit_table", "minimum_width", "table_lines", "table_width"]

ELLIPSIS = "…"
GAP = "  "
# Invisible format characters a terminal draws in no cell (the soft hyphen, U+00AD, it draws).
_ZERO_WIDTH_FORMATS = frozenset("\u200b\u200c\u200d\u2060\ufeff")


@dataclass(frozen=True)
class Column:
    """A table column: its header, and how it gives way on a narrow terminal."""

    header: str
    shrink_to: int | None = None  # a text column: cut with "…" down to this many cells
    drop_rank: int | None = None  # a secondary column: dropped at narrow widths, lowest first
    wants: int = 0  # a text column: secondary columns go before it is cut below this

    def floor(self, natural: int, *, wanted: bool = False) -> int:
        """The fewest cells this column takes when kept (its header is never cut), or
        with ``wanted`` the fewest it is given while secondary columns remain."""
        if self.shrink_to is None:
            return natural
        least = max(self.shrink_to, self.wants) if wanted else self.shrink_to
        return min(natural, max(display_width(self.header), least))


def table_width() -> int | None:
    """The width tables fit: ``COLUMNS`` if set, the terminal's if stdout is one, else None."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


def display_width(text: str) -> int:
    """How many terminal cells ``text`` takes."""
    if text.isascii():  # most cells: one each, without a Unicode lookup per character
        return len(text)
    return sum(_cells(char) for char in text)


def _cells(char: str) -> int:
    if unicodedata.combining(char) or char in _ZERO_WIDTH_FORMATS:
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells, ending with "…" when something was cut."""
    if display_width(text) <= width:
        return text
    kept, used = [], 0
    for char in text:
        cells = _cells(char)
        if used + cells > width - 1:
            break
        kept.append(char)
        used += cells
    return "".join(kept) + ELLIPSIS


def minimum_width(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> int:
    """The narrowest width every line of the table fits: what stays with its text cut
    to the floor.  Narrower, the identifiers still show whole and the lines run over."""
    naturals = _naturals(columns, _cells_of(columns, rows))
    kept = [i for i, c in enumerate(columns) if c.drop_rank is None]
    return _floor_width(columns, naturals, kept)


def fit_table(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int | None
) -> tuple[list[Column], list[list[str]]]:
    """The columns kept and every row's cells (header first), fitted to ``width``.

    A control character in a cell is shown as U+FFFD (``for_terminal``).
    """
    cells = _cells_of(columns, rows)
    naturals = _naturals(columns, cells)
    kept = list(range(len(columns)))
    if width is not None:
        droppable = sorted(
            (c.drop_rank, -i) for i, c in enumerate(columns) if c.drop_rank is not None
        )
        while droppable and _floor_width(columns, naturals, kept, wanted=True) > width:
            kept.remove(-droppable.pop(0)[1])
    widths = _text_widths(columns, naturals, kept, width)
    fitted = [[_cut(row[i], widths[i]) for i in kept] for row in cells]
    return [columns[i] for i in kept], fitted


def table_lines(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int | None
) -> list[str]:
    """The table as lines: header, then rows, in aligned columns fitted to ``width``."""
    _, fitted = fit_table(columns, rows, width)
    if not fitted[0]:
        return []
    column_widths = [max(display_width(c) for c in col) for col in zip(*fitted, strict=True)]
    return [
        GAP.join(
            c + " " * (w - display_width(c)) for c, w in zip(row, column_widths, strict=True)
        ).rstrip()
        for row in fitted
    ]


def _cells_of(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> list[list[str]]:
    table = [[c.header for c in columns], *([str(c) for c in row] for row in rows)]
    return [[for_terminal(cell) for cell in row] for row in table]


def _naturals(columns: Sequence[Column], cells: Sequence[Sequence[str]]) -> list[int]:
    return [max(display_width(row[i]) for row in cells) for i in range(len(columns))]


def _floor_width(
    columns: Sequence[Column], naturals: Sequence[int], kept: Sequence[int], *, wanted: bool = False
) -> int:
    floors = sum(columns[i].floor(naturals[i], wanted=wanted) for i in kept)
    return floors + len(GAP) * max(len(kept) - 1, 0)


def _text_widths(
    columns: Sequence[Column], naturals: Sequence[int], kept: Sequence[int], width: int | None
) -> dict[int, int]:
    """Each kept column's width: identifiers whole, text columns given the room left,
    the rightmost (the title) first, each at least its floor."""
    widths = {i: naturals[i] for i in kept}
    if width is None:
        return widths
    texts = [i for i in kept if columns[i].shrink_to is not None]
    for i in texts:
        widths[i] = columns[i].floor(naturals[i])
    room = width - _floor_width(columns, naturals, kept)
    for i in reversed(texts):
        grown = min(naturals[i] - widths[i], max(room, 0))
        widths[i] += grown
        room -= grown
    return widths
