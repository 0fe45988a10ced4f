"""The exports' formats, read back by readers that did not write them (tests/citationreaders.py).

Real records first: every paper of arXiv's own OAI-PMH pages
(tests/fixtures/arxiv-real), whose TeX syncd turns into Unicode, written in
each format and read back whole.  Then names and titles drawn by hypothesis,
the keys, and which papers an export holds.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import replace
from datetime import date
from functools import cache
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from syncd.domain.citations import (
    Cited,
    ExportFilter,
    ExportFormat,
    PersonName,
    citation_key,
    cited,
    person_name,
)
from syncd.domain.model import Paper
from syncd.domain.record import Record, normalize_text
from syncd.domain.vocabulary import Origin, PaperStatus
from syncd.render.exports import bibtex, csl_json, export, ris
from syncd.sources.oai import parse_page
from tests.citationreaders import read_bibtex, read_ris, render_csl, ris_name

OAI = Path(__file__).resolve().parents[1] / "fixtures" / "arxiv-real" / "oai"


def paper(record: Record, status: PaperStatus = PaperStatus.TRACKED, row: int = 1) -> Paper:
    assert record.arxiv_id is not None
    return Paper(
        row,
        "Hans Müller",
        record.arxiv_id,
        record.arxiv_id,
        status,
        Origin.ARXIV,
        record,
        "hash",
        0,
    )


WITHDRAWN = Record(
    arxiv_id="2301.01234",
    version=3,
    title="Quantum & {strange} 50% of $x^2$ -- a #1 study_of ~ \\o",
    abstract="We withdraw it.",
    authors=(
        "Hans Müller",
        "Łukasz Kowalski",
        "李明",
        "ATLAS Collaboration",
        "Johannes Diderik van der Waals",
        "Gerard 't Hooft",
        "John Smith Jr.",
    ),
    authors_complete=True,
    primary_category="hep-th",
    categories=("hep-th", "gr-qc"),
    journal_ref="Phys. Rev. D 107, 012345 (2023)",
    doi="10.1103/PhysRevD.107.012345",
    published="2023-01-05T10:00:00Z",
    updated="2023-06-01T10:00:00Z",
    withdrawn=True,
    withdrawn_by="author",
)


def keyed(*papers: Paper) -> list[Cited]:
    """``papers`` under their keys, in their order, as storage hands them to the writers."""
    return [Cited(citation_key(p), p) for p in papers]


@cache
def real_papers() -> tuple[Paper, ...]:
    """Every record of arXiv's own arXivRaw pages, as syncd reads them (TeX turned into
    Unicode), as papers."""
    records = [
        raw.as_record()
        for page in sorted(OAI.glob("ListRecords_arXivRaw_page*.xml"))
        for raw in parse_page(page.read_bytes()).records
    ]
    return tuple(paper(record, row=row) for row, record in enumerate(records, 1))


def test_the_real_records_hold_what_the_exports_must_keep() -> None:
    """The fixture is worth reading back: Unicode names and titles, DOIs, journal references
    and withdrawals, in hundreds of papers."""
    records = [p.record for p in real_papers()]
    assert len(records) > 400
    assert sum(not " ".join(r.authors).isascii() for r in records) > 20
    assert sum(r.doi is not None for r in records) > 50
    assert sum(r.journal_ref is not None for r in records) > 50
    assert any(r.withdrawn for r in records)


def test_bibtex_of_real_records_reads_back_whole() -> None:
    """pybtex reads every entry: each title and author exactly, and the arXiv fields."""
    papers = real_papers()
    entries = read_bibtex(bibtex(keyed(*papers)))
    assert list(entries) == [citation_key(p) for p in papers]
    for p in papers:
        entry, record = entries[citation_key(p)], p.record
        assert entry.type == "misc"
        assert entry.fields["title"] == record.title
        assert entry.authors == [spoken(person_name(a)) for a in record.authors]
        assert entry.fields["eprint"] == p.arxiv_id
        assert entry.fields["archivePrefix"] == "arXiv"
        assert entry.fields["version"] == str(record.version)
        assert entry.fields.get("doi") == record.doi
        assert entry.fields.get("journal") == record.journal_ref
        assert ("Withdrawn" in entry.fields.get("note", "")) == record.withdrawn


def test_csl_json_of_real_records_renders_in_citeproc() -> None:
    """citeproc-py renders every item: its first author's family name, title and year."""
    papers = real_papers()
    items, rendered = render_csl(csl_json(keyed(*papers)))
    assert [item["id"] for item in items] == [citation_key(p) for p in papers]
    for p, item in zip(papers, items, strict=True):
        text = rendered[item["id"]]
        assert p.record.title is not None
        assert p.record.title in text
        first = person_name(p.record.authors[0])
        assert (first.family or first.literal) in text
        assert str(item["issued"]["date-parts"][0][0]) in text


def test_ris_of_real_records_parses_strictly() -> None:
    """The strict RIS parser reads every record: title, each author, DOI, journal."""
    papers = real_papers()
    records = read_ris(ris(keyed(*papers)))
    assert len(records) == len(papers)
    for p, record in zip(papers, records, strict=True):
        assert record["TI"] == [p.record.title]
        assert [ris_name(a) for a in record["AU"]] == [
            spoken(person_name(a)) for a in p.record.authors
        ]
        assert record.get("DO") == ([p.record.doi] if p.record.doi else None)
        assert record["AN"] == [f"arXiv:{p.arxiv_id}"]
        assert record["TY"] == ["JOUR" if p.record.journal_ref else "UNPB"]


def test_a_withdrawn_published_paper_in_bibtex() -> None:
    """Every field of the @misc, special characters and all, as pybtex reads it."""
    (entry,) = read_bibtex(bibtex(keyed(paper(WITHDRAWN)))).values()
    assert entry.fields == {
        "title": WITHDRAWN.title,
        "year": "2023",
        "month": "January",  # the month's macro, which pybtex expands
        "eprint": "2301.01234",
        "archivePrefix": "arXiv",
        "primaryClass": "hep-th",
        "version": "3",
        "doi": "10.1103/PhysRevD.107.012345",
        "journal": "Phys. Rev. D 107, 012345 (2023)",
        "howpublished": "Phys. Rev. D 107, 012345 (2023)",
        "note": "Withdrawn from arXiv by its authors (v3)",
        "url": "https://arxiv.org/abs/2301.01234",
    }
    assert entry.authors == list(WITHDRAWN.authors)
    assert entry.families == [
        "Müller",
        "Kowalski",
        "李明",
        "ATLAS Collaboration",
        "van der Waals",
        "'t Hooft",
        "Smith",
    ]
    # Braced whole: no style lower-cases it.
    assert entry.raw["title"].startswith("{") and entry.raw["title"].endswith("}")


def test_a_withdrawn_published_paper_in_csl_json() -> None:
    (item,), rendered = render_csl(csl_json(keyed(paper(WITHDRAWN))))
    assert item["type"] == "article"
    assert item["archive"] == "arXiv"
    assert item["number"] == "2301.01234"
    assert item["DOI"] == WITHDRAWN.doi
    assert item["container-title"] == WITHDRAWN.journal_ref
    assert item["issued"] == {"date-parts": [[2023, 1, 5]]}
    assert item["note"] == "Withdrawn from arXiv by its authors (v3)"
    assert item["author"][:3] == [
        {"family": "Müller", "given": "Hans"},
        {"family": "Kowalski", "given": "Łukasz"},
        {"literal": "李明"},
    ]
    assert item["author"][4] == {
        "family": "Waals",
        "given": "Johannes Diderik",
        "non-dropping-particle": "van der",
    }
    text = rendered[item["id"]]
    assert "Müller, H." in text and "(2023)" in text and WITHDRAWN.title in text


def test_a_withdrawn_published_paper_in_ris() -> None:
    (record,) = read_ris(ris(keyed(paper(WITHDRAWN))))
    assert record["TY"] == ["JOUR"]
    assert record["AU"][:3] == ["Müller, Hans", "Kowalski, Łukasz", "李明"]
    assert record["AU"][-1] == "Smith, John, Jr."
    assert record["N1"] == ["Withdrawn from arXiv by its authors (v3)"]
    assert record["PY"] == ["2023"]
    assert record["DA"] == ["2023/01/05/"]
    assert record["JO"] == [WITHDRAWN.journal_ref]
    assert record["KW"] == ["hep-th", "gr-qc"]
    assert record["ET"] == ["v3"]


# A name's words: letters of any script, some with an apostrophe, hyphen or dot as in
# "O'Brien", "Jean-Pierre", "J.".
_LETTERS = st.characters(categories=("Lu", "Ll", "Lt", "Lo"))
_WORD = st.builds(
    lambda head, tail, mark: head + tail + mark,
    _LETTERS,
    st.text(_LETTERS, max_size=8),
    st.sampled_from(["", "", "", ".", "-Marie", "'s"]),
)
_NAME = st.lists(_WORD, min_size=1, max_size=5).map(" ".join)
# Titles: any text a record can hold (one space between words, NFC), TeX's specials included.
_TITLE = (
    st.text(
        st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Co", "Cn", "Zl", "Zp")),
        min_size=1,
        max_size=60,
    )
    .map(normalize_text)
    .filter(lambda t: t is not None)
)


@given(authors=st.lists(_NAME, min_size=1, max_size=3), title=_TITLE)
@example(authors=["A"], title="{")  # BibTeX counts braces, a backslash before one or not
def test_any_names_and_title_read_back_in_every_format(authors: list[str], title: str) -> None:
    """Unicode names and titles, TeX's special characters in them, come back exactly."""
    # Without a comma, a name's parts said in order are the name.
    assert [spoken(person_name(a)) for a in authors] == authors
    record = replace(WITHDRAWN, authors=tuple(authors), title=title)
    p = paper(record)
    (entry,) = read_bibtex(bibtex(keyed(p))).values()
    assert entry.fields["title"] == title
    assert entry.authors == authors
    (item,), _ = render_csl(csl_json(keyed(p)))
    assert item["title"] == title
    assert [_csl_name(name) for name in item["author"]] == authors
    (ris_record,) = read_ris(ris(keyed(p)))
    assert ris_record["TI"] == [title]
    assert [ris_name(a) for a in ris_record["AU"]] == authors


def spoken(name: PersonName) -> str:
    """The name whole: its parts in the order they are said, or the literal."""
    parts = (name.given, name.particle, name.family, name.suffix)
    return name.literal or " ".join(part for part in parts if part)


def _csl_name(name: dict[str, str]) -> str:
    parts = ("given", "non-dropping-particle", "family", "suffix")
    return name.get("literal") or " ".join(name[part] for part in parts if part in name)


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("Hans Müller", PersonName(given="Hans", family="Müller")),
        ("J. R. R. Tolkien", PersonName(given="J. R. R.", family="Tolkien")),
        ("Johannes Diderik van der Waals", PersonName("Johannes Diderik", "van der", "Waals")),
        ("Gerard 't Hooft", PersonName(given="Gerard", particle="'t", family="Hooft")),
        ("John Smith Jr.", PersonName(given="John", family="Smith", suffix="Jr.")),
        ("ATLAS Collaboration", PersonName(literal="ATLAS Collaboration")),
        ("李明", PersonName(literal="李明")),
        ("Ann and Bob", PersonName(literal="Ann and Bob")),
        ("Smith, J.", PersonName(literal="Smith, J.")),
        ("G. David Forney, Jr.", PersonName(given="G. David", family="Forney", suffix="Jr.")),
        ("bell hooks", PersonName(given="bell", family="hooks")),
    ],
)
def test_names_split_into_parts(name: str, parts: PersonName) -> None:
    assert person_name(name) == parts


def test_keys_are_the_papers_own() -> None:
    """Surname, year and first title word in ASCII, then the arXiv id: the same for the same
    paper in any set, never the same for two papers."""
    first = paper(WITHDRAWN)
    twin = paper(replace(WITHDRAWN, arxiv_id="2301.05678"), row=2)
    assert citation_key(first) == "muller2023quantum_2301.01234"
    assert citation_key(twin) == "muller2023quantum_2301.05678"
    alone = read_bibtex(bibtex(keyed(first)))
    together = read_bibtex(bibtex(keyed(twin, first)))
    assert set(alone) < set(together)
    old = replace(WITHDRAWN, arxiv_id="hep-th/0601001", authors=("李明",), title="On the Ørsted")
    assert citation_key(paper(old)) == "2023orsted_hep-th-0601001"


def test_a_key_is_the_first_versions() -> None:
    """A later version that reorders the authors and retitles the paper keeps its key."""
    v2 = replace(WITHDRAWN, version=2, authors=("Ann Other", *WITHDRAWN.authors), title="Classical")
    assert citation_key(paper(v2), WITHDRAWN) == "muller2023quantum_2301.01234"
    assert citation_key(paper(v2)) == "other2023classical_2301.01234"
    (first,) = cited([paper(v2, row=7)], {7: WITHDRAWN})
    assert first.key == "muller2023quantum_2301.01234"


def test_every_format_is_plain_utf8_text() -> None:
    """Unicode stays Unicode: no format escapes ü or 李 into TeX or \\u escapes."""
    for form in ExportFormat:
        text = export(keyed(paper(WITHDRAWN)), form)
        assert "Müller" in text and "李明" in text and "Łukasz" in text
        assert unicodedata.is_normalized("NFC", text)
    json.loads(export([], ExportFormat.CSL_JSON))


def _dated(arxiv_id: str, published: str, doi: str | None = None) -> Paper:
    return paper(
        replace(WITHDRAWN, arxiv_id=arxiv_id, published=published, doi=doi, journal_ref=None)
    )


def selected(papers: list[Paper], wanted: ExportFilter) -> list[Paper]:
    """The papers ``wanted`` takes, in an export's order."""
    return [c.paper for c in cited([p for p in papers if wanted.passes(p)], {})]


def test_the_filter_takes_first_versions_in_the_period_inclusive() -> None:
    early = _dated("2301.00001", "2023-01-01T00:00:00Z")
    late = _dated("2312.00001", "2023-12-31T23:59:59Z", doi="10.1/x")
    undated = paper(replace(early.record, published=None, arxiv_id="2301.00003"))
    everything = [undated, early, late]
    # Newest first version first; one whose date is unknown last, and in no period.
    assert selected(everything, ExportFilter()) == [late, early, undated]
    period = ExportFilter(since=date(2023, 1, 1), until=date(2023, 12, 31))
    assert selected(everything, period) == [late, early]
    assert selected(everything, ExportFilter(since=date(2023, 1, 2))) == [late]
    assert selected(everything, ExportFilter(until=date(2023, 12, 30))) == [early]
    assert selected(everything, ExportFilter(published=True)) == [late]
    assert selected(everything, ExportFilter(published=False)) == [early, undated]


def test_a_period_that_ends_before_it_starts_is_a_problem() -> None:
    assert ExportFilter(since=date(2024, 1, 2), until=date(2024, 1, 1)).problem() == (
        "until (2024-01-01) is before since (2024-01-02)"
    )
    assert ExportFilter(since=date(2024, 1, 1), until=date(2024, 1, 1)).problem() is None
