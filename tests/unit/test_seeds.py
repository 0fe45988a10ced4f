"""Tests for syncd.sources.seeds: parsing the two seed page formats and folding them into papers."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from syncd.domain.model import SeedPaper
from syncd.errors import SeedError
from syncd.sources.seeds import MAX_SEED_BYTES, load_seeds, parse_seed_file
from tests.hypothesis_profiles import examples

SEEDS = Path(__file__).resolve().parents[2] / "seeds"
PAGE = SEEDS / "000_bae548b29664adf4.txt"
LIST = SEEDS / "001_486f742ac3512806.txt"

EXPECTED_KEYS = [
    "lrmoe-demand-side-load-re-calibration",
    "flexmarl-graph-driven-rollout-training-co",
    "rethinking-calibration-for-high-sparsity-llm",
    "compilemask-bridging-the-gap-between",
    "flowtrain-flow-based-decoupled-training-for",
    "the-hidden-power-of-scaling-factor",
    "nestpipe-large-scale-recommendation-training-on",
    "oxygenrec-an-instruction-following-generative",
    "adaptive-control-of-client-selection-and",
]
CALIBRATION = "rethinking-calibration-for-high-sparsity-llm"
FEDCG = "adaptive-control-of-client-selection-and"


@pytest.fixture(scope="module")
def papers() -> dict[str, SeedPaper]:
    return {paper.key: paper for paper in load_seeds([PAGE, LIST])}


def _page(records: list[tuple[str, str, str]], declared: int | None = None) -> str:
    """An author page holding (title, abstract, category) records."""
    count = len(records) if declared is None else declared
    parts = ["arXiv subjects", "Test Author", "Publications of Test Author.", f"{count} records"]
    for title, abstract, category in records:
        parts += ["arXiv2024", title, abstract, f"{category}↗"]
    return "\n\n".join(parts)


def _list(records: list[tuple[str, str]]) -> str:
    """An author list holding (authors line, abstract) records."""
    parts = ["Test Author"]
    for authors, abstract in records:
        parts += [authors, abstract]
    return "\n\n".join(parts)


# --------------------------------------------------------------------------- real seeds


def test_real_seeds_parse_by_format() -> None:
    """The author page holds nine records and the author list five, each with its start line."""
    page, authors = parse_seed_file(PAGE), parse_seed_file(LIST)
    assert (page.format, page.author, len(page.items)) == ("author-page", "Zhida Jiang", 9)
    assert [item.line for item in page.items] == [9, 17, 25, 33, 41, 49, 57, 65, 73]
    assert page.items[0].year == 2026 and page.items[-1].year == 2022
    assert (authors.format, authors.author) == ("author-list", "Zhida Jiang")
    assert [item.line for item in authors.items] == [3, 7, 11, 15, 19]


def test_real_seeds_give_nine_papers_with_stable_keys() -> None:
    """The real seeds fold into nine papers whose keys are exactly these, run after run."""
    first = [paper.key for paper in load_seeds([PAGE, LIST])]
    again = [paper.key for paper in load_seeds([LIST, PAGE])]
    assert first == EXPECTED_KEYS
    assert again == first


def test_calibration_paper_has_two_revisions(papers: dict[str, SeedPaper]) -> None:
    """The calibration paper's two different abstracts are two revisions, in file-name order."""
    paper = papers[CALIBRATION]
    assert len(paper.revisions) == 2
    first, second = paper.revisions
    assert first.record.abstract != second.record.abstract
    assert second.record.abstract is not None
    assert second.record.abstract.startswith("Post-training pruning compresses")
    assert (first.source, first.line) == (f"seed:{PAGE.name}", 25)
    assert (second.source, second.line) == (f"seed:{LIST.name}", 7)
    # The second revision is merged: it keeps the page's title and gains the authors.
    assert second.record.title == first.record.title
    assert second.record.authors == ("Hu Xu", "Zhaolong Xing", "Congcong Liu")
    assert paper.record is second.record


def test_other_papers_have_one_revision(papers: dict[str, SeedPaper]) -> None:
    """Every paper but the calibration one has a single revision named after the author page."""
    for key, paper in papers.items():
        if key == CALIBRATION:
            continue
        assert len(paper.revisions) == 1, key
        assert paper.revisions[0].source == f"seed:{PAGE.name}"


def test_truncated_authors_known_for_linked_papers(papers: dict[str, SeedPaper]) -> None:
    """Each of the author list's five records lends its truncated authors to one paper."""
    # DESIGN.md says the list names six papers; the captured file holds five
    # records (four abstracts identical to the page's, plus the calibration one).
    with_authors = {key for key, paper in papers.items() if paper.record.authors}
    assert with_authors == {
        CALIBRATION,
        FEDCG,
        "flowtrain-flow-based-decoupled-training-for",
        "the-hidden-power-of-scaling-factor",
        "nestpipe-large-scale-recommendation-training-on",
    }
    assert all(not papers[key].record.authors_complete for key in with_authors)
    assert all(len(papers[key].record.authors) == 3 for key in with_authors)


def test_fedcg_authors(papers: dict[str, SeedPaper]) -> None:
    """FedCG's authors are the three names before 'et al.', without it."""
    assert papers[FEDCG].record.authors == ("Zhida Jiang", "Yang Xu", "Hongli Xu")
    assert papers[FEDCG].record.authors_complete is False


def test_category_arrows_stripped(papers: dict[str, SeedPaper]) -> None:
    """The link marker after a category is not part of it."""
    categories = {paper.record.primary_category for paper in papers.values()}
    assert categories == {"cs.AI", "cs.LG", "cs.DC", "cs.IR"}
    for paper in papers.values():
        assert paper.record.categories == (paper.record.primary_category,)


def test_text_is_normalised(papers: dict[str, SeedPaper]) -> None:
    """Titles and abstracts carry no stray whitespace."""
    for paper in papers.values():
        for text in (paper.record.title, paper.record.abstract):
            assert text is not None
            assert text == " ".join(text.split())


def test_format_detected_by_content_under_odd_names(tmp_path: Path) -> None:
    """Renamed copies in the same order give the same papers, only the sources differ."""
    shutil.copy(PAGE, tmp_path / "a.dat")
    shutil.copy(LIST, tmp_path / "b")
    renamed = load_seeds([tmp_path / "b", tmp_path / "a.dat"])
    original = load_seeds([PAGE, LIST])
    assert [p.key for p in renamed] == [p.key for p in original]
    assert [p.record for p in renamed] == [p.record for p in original]
    assert parse_seed_file(tmp_path / "a.dat").format == "author-page"
    assert parse_seed_file(tmp_path / "b").format == "author-list"


def test_format_detected_by_content_under_swapped_names(tmp_path: Path) -> None:
    """Swapped names parse by content; the list then comes first and revisions follow that order."""
    list_copy, page_copy = tmp_path / PAGE.name, tmp_path / LIST.name
    shutil.copy(LIST, list_copy)
    shutil.copy(PAGE, page_copy)
    assert parse_seed_file(list_copy).format == "author-list"
    assert parse_seed_file(page_copy).format == "author-page"
    papers = {paper.key: paper for paper in load_seeds([page_copy, list_copy])}
    assert sorted(papers) == sorted(EXPECTED_KEYS)
    assert papers[FEDCG].record.authors == ("Zhida Jiang", "Yang Xu", "Hongli Xu")
    first, second = papers[CALIBRATION].revisions
    assert first.source == f"seed:{PAGE.name}"  # the list's content, now named 000_...
    assert first.record.abstract is not None
    assert first.record.abstract.startswith("Post-training pruning compresses")
    assert second.record.title is not None
    assert second.record.title.startswith("Rethinking Calibration")


# --------------------------------------------------------------------------- bad input


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _page_text() -> str:
    return PAGE.read_text(encoding="utf-8")


def _list_text() -> str:
    return LIST.read_text(encoding="utf-8")


def _duplicated_page() -> str:
    fedcg = parse_seed_file(PAGE).items[-1].record
    extra = f"\n\narXiv2023\n\nA Retitled Copy\n\n{fedcg.abstract}\n\ncs.DC↗"
    return _page_text().replace("9 records", "10 records") + extra


BAD_SEEDS: dict[str, tuple[str | bytes, int]] = {
    "empty": (b"", 1),
    "blank": ("\n \n\t\n", 1),
    "binary": (b"arXiv subjects\n\nabc\x00def", 3),
    "not-utf8-binary": (b"arXiv subjects\n\n\x89PNG\r\n", 3),
    "invalid-utf8": (_list_text().encode() + b"\n\n\xff\xfe", 23),
    "control-character": ("Zhida Jiang\n\n\x07", 3),
    "unknown-format": ("Hello world.\n\nThis is not a seed page at all.", 1),
    "page-without-count": ("arXiv subjects\n\nZhida Jiang\n\narXiv2026", 1),
    # The last record loses its category line (the file's last line).
    "truncated-page-end": (_page_text().rsplit("\n\n", 1)[0], 73),
    # The first record loses its category: the next record's source line is found instead.
    "truncated-page-middle": (_page_text().replace("cs.AI↗\n\n", "", 1), 15),
    # The first record loses its title: its category stands where the abstract belongs.
    "truncated-page-title": (
        _page_text().replace(
            "LRMoE: Demand-Side Load Re-Calibration for Efficient MoE Training on "
            "Memory-Constrained Nodes\n\n",
            "",
        ),
        13,
    ),
    "truncated-list-end": (_list_text() + "\n\nNew Person, Other Person et al.", 23),
    # The second record loses its abstract: another authors line follows.
    "truncated-list-middle": (
        "\n\n".join(_list_text().split("\n\n")[:4] + _list_text().split("\n\n")[5:]),
        9,
    ),
    "duplicated-page": (_duplicated_page(), 81),
    "duplicated-list": (_list_text() + "\n\nA Person\n\n" + _list_text().split("\n\n")[2], 23),
    "wrong-count": (_page_text().replace("9 records", "8 records"), 7),
    "no-records": ("arXiv subjects\n\nZhida Jiang\n\n0 records", 5),
}


@pytest.mark.parametrize("case", sorted(BAD_SEEDS))
def test_bad_seed_raises_seed_error_with_file_and_line(tmp_path: Path, case: str) -> None:
    """Each malformed file is a SeedError whose message names the file and the line."""
    content, line = BAD_SEEDS[case]
    path = _write(tmp_path, f"{case}.txt", content)
    with pytest.raises(SeedError) as caught:
        parse_seed_file(path)
    assert caught.value.line == line
    assert f"{path.name}:{line}:" in str(caught.value)


def test_missing_file_raises_seed_error(tmp_path: Path) -> None:
    """An unreadable path is a SeedError naming it, not an OSError."""
    with pytest.raises(SeedError, match=r"nowhere\.txt"):
        parse_seed_file(tmp_path / "nowhere.txt")


def test_seed_at_the_size_limit_is_read(tmp_path: Path) -> None:
    """A file of exactly MAX_SEED_BYTES is read and parsed (here: refused for its content)."""
    path = _write(tmp_path, "limit.txt", b"x" * MAX_SEED_BYTES)
    with pytest.raises(SeedError, match="unknown seed format"):
        parse_seed_file(path)


def test_seed_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    """One byte over MAX_SEED_BYTES is refused by its size, naming the file."""
    path = _write(tmp_path, "over.txt", b"x" * (MAX_SEED_BYTES + 1))
    with pytest.raises(SeedError, match=r"over\.txt: the file is larger than the 4 MiB"):
        parse_seed_file(path)


def test_one_bad_file_fails_the_whole_load(tmp_path: Path) -> None:
    """A bad file among good ones fails load_seeds before anything is returned."""
    bad = _write(tmp_path, "999_bad.txt", b"\x00")
    with pytest.raises(SeedError, match=r"999_bad\.txt:1"):
        load_seeds([PAGE, LIST, bad])


# --------------------------------------------------------------------------- linking


def test_ambiguous_record_stays_separate(tmp_path: Path) -> None:
    """A record equally similar to two papers links to neither and logs seed_link_ambiguous."""
    page = _write(
        tmp_path,
        "a.txt",
        _page(
            [
                ("Alpha Paper", "graph neural routing latency shards", "cs.DC"),
                ("Beta Paper", "graph neural routing memory caches", "cs.DC"),
            ]
        ),
    )
    authors = _write(tmp_path, "b.txt", _list([("Ann Lee, Bo Chen", "graph neural routing")]))
    with capture_logs() as logs:
        papers = load_seeds([page, authors])
    assert [p.key for p in papers] == ["alpha-paper", "beta-paper", "graph-neural-routing"]
    assert [len(p.revisions) for p in papers] == [1, 1, 1]
    assert papers[0].record.authors == () and papers[1].record.authors == ()
    assert papers[2].record.authors == ("Ann Lee", "Bo Chen")
    assert papers[2].record.authors_complete is True
    warnings = [entry for entry in logs if entry["event"] == "seed_link_ambiguous"]
    assert len(warnings) == 1
    assert warnings[0]["log_level"] == "warning"
    assert warnings[0]["line"] == 3
    assert warnings[0]["candidates"] == ["seed:a.txt:9", "seed:a.txt:17"]


def test_unrelated_record_becomes_new_paper_silently(tmp_path: Path) -> None:
    """A record similar to nothing is a new paper keyed by its abstract, with no warning."""
    page = _write(tmp_path, "a.txt", _page([("Alpha Paper", "graph routing shards", "cs.DC")]))
    authors = _write(tmp_path, "b.txt", _list([("Ann Lee", "protein folding kinetics")]))
    with capture_logs() as logs:
        papers = load_seeds([page, authors])
    assert [p.key for p in papers] == ["alpha-paper", "protein-folding-kinetics"]
    assert not logs


def test_retitled_record_is_a_new_revision(tmp_path: Path) -> None:
    """A later page that changes a known title adds a revision; same text only fills gaps."""
    first = _write(tmp_path, "1.txt", _page([("Old Title", "shared abstract text here", "cs.LG")]))
    second = _write(tmp_path, "2.txt", _page([("New Title", "shared abstract text here", "cs.LG")]))
    authors = _write(tmp_path, "3.txt", _list([("Ann Lee et al.", "shared abstract text here")]))
    (paper,) = load_seeds([authors, second, first])
    assert [rev.source for rev in paper.revisions] == ["seed:1.txt", "seed:2.txt"]
    assert [rev.record.title for rev in paper.revisions] == ["Old Title", "New Title"]
    assert paper.revisions[0].record.authors == ()
    assert paper.record.authors == ("Ann Lee",)
    assert paper.key == "old-title"  # the earliest title names the paper


def test_longer_author_list_is_kept(tmp_path: Path) -> None:
    """A shorter truncation of the same authors neither replaces a longer list nor revises."""
    longer = _write(tmp_path, "1.txt", _list([("Ann Lee, Bo Chen, Cy Dee", "same abstract")]))
    shorter = _write(tmp_path, "2.txt", _list([("Ann Lee et al.", "same abstract")]))
    (paper,) = load_seeds([longer, shorter])
    assert len(paper.revisions) == 1
    assert paper.record.authors == ("Ann Lee", "Bo Chen", "Cy Dee")
    assert paper.record.authors_complete is True


def test_colliding_keys_get_suffixes(tmp_path: Path) -> None:
    """Papers whose titles slug alike get -2, -3 in the order they were first seen."""
    title = "A Study of Things in Many Ways and More"
    page = _page(
        [
            (title, "first abstract", "cs.AI"),
            (f"{title}!", "second one", "cs.AI"),
            (title.upper(), "third text", "cs.AI"),
        ]
    )
    keys = [p.key for p in load_seeds([_write(tmp_path, "a.txt", page)])]
    assert keys == [
        "a-study-of-things-in-many",
        "a-study-of-things-in-many-2",
        "a-study-of-things-in-many-3",
    ]


# --------------------------------------------------------------------------- properties

_FRAGMENTS = [
    "arXiv subjects",
    "Zhida Jiang",
    "Publications and source records attributed to Zhida Jiang.",
    "2 recordsLinked to original sources",
    "1 records",
    "arXiv2026",
    "A Title: Of Things",
    "An abstract, which has words in it.",
    "cs.AI↗",
    "hep-th",
    "Ann Lee, Bo Chen et al.",
    "et al.",
    "",
    " ",
    "\ufeff",
    "\r",
]


@settings(max_examples=examples(300), deadline=None)
@given(
    parts=st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=30)), max_size=16),
    separator=st.sampled_from(["\n", "\n\n", "\r\n\r\n", "\n\n\n"]),
)
def test_any_text_parses_or_raises_seed_error(
    tmp_path_factory: pytest.TempPathFactory, parts: list[str], separator: str
) -> None:
    """Any text written to a seed file either parses or raises SeedError, nothing else."""
    path = tmp_path_factory.getbasetemp() / "property.txt"
    path.write_text(separator.join(parts), encoding="utf-8")
    try:
        document = parse_seed_file(path)
    except SeedError as exc:
        assert exc.path == str(path)
    else:
        assert document.items
        load_seeds([path, path])


@settings(max_examples=examples(100), deadline=None)
@given(data=st.binary(max_size=200))
def test_any_bytes_parse_or_raise_seed_error(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    """Arbitrary bytes either parse or raise SeedError, nothing else."""
    path = tmp_path_factory.getbasetemp() / "property.bin"
    path.write_bytes(data)
    with contextlib.suppress(SeedError):
        parse_seed_file(path)


_WORDS = st.sampled_from("graph neural routing memory pipeline sparse model train".split())


@settings(max_examples=examples(100), deadline=None)
@given(
    records=st.lists(
        st.tuples(
            st.lists(_WORDS, min_size=2, max_size=5).map(" ".join).map(str.title),
            st.lists(_WORDS, min_size=6, max_size=12).map(" ".join).map(lambda s: s + "."),
        ),
        min_size=1,
        max_size=6,
        unique_by=lambda record: record[1],
    )
)
def test_generated_author_page_round_trips(
    tmp_path_factory: pytest.TempPathFactory, records: list[tuple[str, str]]
) -> None:
    """A well-formed author page yields its records back, in order, with unique keys."""
    path = tmp_path_factory.getbasetemp() / "generated.txt"
    path.write_text(_page([(t, a, "cs.LG") for t, a in records]), encoding="utf-8")
    document = parse_seed_file(path)
    assert [(i.record.title, i.record.abstract) for i in document.items] == records
    keys = [paper.key for paper in load_seeds([path])]
    assert len(keys) == len(set(keys)) == len(records)
