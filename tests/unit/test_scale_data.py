"""The scale benchmark's bulk generator (benchmarks/scale_data.py): rows syncd reads back."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from benchmarks import scale_data
from benchmarks.scale_data import Size, World
from syncd.storage import Storage, schema


@pytest.fixture
def built(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'scale.sqlite3'}"
    scale_data.build(url, Size(authors=40, papers=400), log=lambda line: None)
    return url


def test_every_table_holds_its_rows(built: str) -> None:
    engine = sa.create_engine(built)
    with engine.connect() as conn:
        count = {
            t.name: conn.scalar(sa.select(sa.func.count()).select_from(t))
            for t in (schema.authors_table, schema.papers_table, schema.revisions_table)
        }
    engine.dispose()
    assert count["authors"] == 40
    assert count["papers"] == 400
    assert count["revisions"] > 400  # every v1, and a v2 for about one in four


def test_syncd_reads_the_rows(built: str) -> None:
    world = World(Size(authors=40, papers=400))
    store = Storage(built)
    try:
        paper = store.papers.find(world.arxiv_id(7))
    finally:
        store.close()
    assert paper is not None
    assert paper.record.arxiv_id == world.arxiv_id(7)
    assert paper.record.authors[0] == world.names[world.holders[7][0] - 1]


def test_the_first_author_holds_the_most_papers(built: str) -> None:
    pa = schema.paper_authors_table
    engine = sa.create_engine(built)
    with engine.connect() as conn:
        held = dict(
            conn.execute(sa.select(pa.c.author_id, sa.func.count()).group_by(pa.c.author_id)).all()
        )
    engine.dispose()
    assert held[1] == max(held.values())
    assert held[1] > 5 * sorted(held.values())[len(held) // 2]  # a power law: the median far below


def test_a_required_column_it_cannot_fill_is_named() -> None:
    table = sa.Table(
        "papers",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("key", sa.String(120), nullable=False),
        sa.Column("mystery", sa.Integer, nullable=False),
    )
    with pytest.raises(RuntimeError, match=r"papers\.mystery"):
        scale_data.row_filler(table)


def test_derived_columns_are_filled_when_the_schema_has_them() -> None:
    table = sa.Table(
        "papers",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("search_text", sa.Text),
    )
    row = next(World(Size(authors=3, papers=3)).papers())
    filled = scale_data.row_filler(table)(row)
    assert "_derive" not in filled
    assert "0704 00001" in filled["search_text"]  # the arXiv id, folded
