"""The one table layout of the CLI: fits a width, cuts titles with "…", never an id."""

from __future__ import annotations

import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from syncd.cli.table import (
    Column,
    display_width,
    fit_table,
    minimum_width,
    table_lines,
    table_width,
)
from syncd.domain.textcontrols import for_terminal
from tests.hypothesis_profiles import examples

ID, DATE, TITLE = Column("ID"), Column("DATE", drop_rank=1), Column("TITLE", shrink_to=10)
ROWS = [
    ("2601.00001", "2026-01-02 03:04:05", "A title long enough to be cut at a narrow width"),
    ("2601.00002", "2026-01-03 03:04:05", "Short"),
]

# Cells as arXiv sends them: wide CJK, combining marks, controls, bidi, plain words.
_cell = st.text(
    st.one_of(
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
        st.sampled_from("漢字\u0301\u200b\x1b\u202e… "),
    ),
    max_size=40,
)
_column = st.builds(
    Column,
    header=st.text(st.characters(min_codepoint=65, max_codepoint=90), min_size=1, max_size=12),
    shrink_to=st.one_of(st.none(), st.integers(1, 20)),
    drop_rank=st.one_of(st.none(), st.integers(1, 3)),
    wants=st.integers(0, 30),
)


@st.composite
def _tables(draw: st.DrawFn) -> tuple[list[Column], list[list[str]], int]:
    columns = draw(st.lists(_column, min_size=1, max_size=6))
    rows = draw(st.lists(st.lists(_cell, min_size=len(columns), max_size=len(columns))))
    slack = draw(st.integers(0, 120))
    return columns, rows, minimum_width(columns, rows) + slack


class TestLayout:
    def test_wide_enough_shows_everything_whole(self) -> None:
        """With room for every cell nothing is cut and nothing dropped."""
        lines = table_lines((ID, DATE, TITLE), ROWS, 200)
        assert lines[0].split() == ["ID", "DATE", "TITLE"]
        assert lines[1].endswith(ROWS[0][2])
        assert table_lines((ID, DATE, TITLE), ROWS, None) == lines

    def test_titles_shrink_before_a_secondary_column_goes(self) -> None:
        """The title is cut with "…" while the date still fits; then the date goes."""
        lines = table_lines((ID, DATE, TITLE), ROWS, 60)
        assert "2026-01-02 03:04:05" in lines[1]
        assert lines[1].endswith("…") and len(lines[1]) == 60
        narrow = table_lines((ID, DATE, TITLE), ROWS, 30)
        assert narrow[0].split() == ["ID", "TITLE"]
        assert narrow[1] == "2601.00001  A title long enou…"
        assert max(map(len, narrow)) <= 30

    def test_the_lowest_rank_goes_first(self) -> None:
        """Secondary columns go in rank order, the lowest first."""
        key = Column("KEY", drop_rank=2)
        kept, _ = fit_table((key, ID, DATE, TITLE), [("a-long-key", *ROWS[0])], 45)
        assert [c.header for c in kept] == ["KEY", "ID", "TITLE"]

    def test_a_secondary_column_goes_before_a_title_is_cut_below_what_it_wants(self) -> None:
        """At 50 a title of ten cells would fit beside the key; it wants twenty (54 with
        the key), so the key goes."""
        key, title = Column("KEY", drop_rank=1), Column("TITLE", shrink_to=10, wants=20)
        row = ("a-key-of-twenty-cell", "2601.00001", ROWS[0][2])
        assert table_lines((key, ID, title), [row], 54)[0].split() == ["KEY", "ID", "TITLE"]
        lines = table_lines((key, ID, title), [row], 50)
        assert lines[0].split() == ["ID", "TITLE"]
        assert lines[1] == "2601.00001  A title long enough to be cut at a na…"

    def test_below_the_minimum_ids_still_show_whole(self) -> None:
        """Narrower than the ids and the title's floor, lines run over and ids stay whole."""
        assert minimum_width((ID, DATE, TITLE), ROWS) == 10 + 2 + 10
        lines = table_lines((ID, DATE, TITLE), ROWS, 12)
        assert lines[1] == "2601.00001  A title l…"

    def test_wide_characters_take_two_cells(self) -> None:
        """A CJK title is cut by the cells it takes, not by its characters."""
        assert display_width("漢字e\u0301") == 5
        lines = table_lines((ID, TITLE), [("1", "漢字漢字漢字漢字漢字漢字")], 14)
        assert display_width(lines[1]) <= 14
        assert lines[1] == "1   漢字漢字…"

    def test_a_header_alone_is_not_cut(self) -> None:
        """A table without rows is its header; a text column's header is never cut."""
        assert table_lines((ID, Column("A LONG HEADER", shrink_to=3)), [], 5) == [
            "ID  A LONG HEADER"
        ]


class TestProperties:
    @settings(max_examples=examples(300))
    @given(_tables())
    @example(([ID, TITLE], [["漢", "漢字漢字漢字"]], 14))
    def test_no_line_is_wider_than_the_width_from_the_minimum_up(
        self, table: tuple[list[Column], list[list[str]], int]
    ) -> None:
        """At any width from ``minimum_width`` up, every line fits it."""
        columns, rows, width = table
        for line in table_lines(columns, rows, width):
            assert display_width(line) <= width, (line, width)

    @settings(max_examples=examples(300))
    @given(_tables())
    def test_ids_are_never_cut_and_a_cut_ends_with_an_ellipsis(
        self, table: tuple[list[Column], list[list[str]], int]
    ) -> None:
        """Identifier cells are whole; a text cell is whole, or its start and "…"."""
        columns, rows, width = table
        kept, fitted = fit_table(columns, rows, width)
        positions = [next(i for i, c in enumerate(columns) if c is k) for k in kept]
        for shown, given_row in zip(fitted[1:], rows, strict=True):
            for column, cell, index in zip(kept, shown, positions, strict=True):
                whole = for_terminal(given_row[index])
                if column.shrink_to is None:
                    assert cell == whole
                elif cell != whole:
                    assert cell.endswith("…") and whole.startswith(cell[:-1])
        assert all(c.drop_rank is not None for c in columns if c not in kept)


class TestWidth:
    def test_columns_wins(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """COLUMNS sets the width, a terminal or not."""
        monkeypatch.setenv("COLUMNS", "72")
        assert table_width() == 72

    def test_a_pipe_has_no_width(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Into a pipe or a file, without COLUMNS, nothing is cut."""
        monkeypatch.delenv("COLUMNS", raising=False)
        monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
        assert table_width() is None

    @pytest.mark.parametrize("value", ["", "0", "wide"])
    def test_a_terminal_without_columns_uses_its_size(
        self, monkeypatch: pytest.MonkeyPatch, value: str
    ) -> None:
        """On a terminal, an unset or unusable COLUMNS leaves the terminal's own size."""
        monkeypatch.setenv("COLUMNS", value)
        monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
        width = table_width()
        assert width is not None and width > 0
