# ruff: noqa: RUF001 -- Greek letters are what TeX is converted into
"""One version, one record: each of arXiv's formats read as the API reads it.

The oracles are arXiv's own answers (``tests/fixtures``): the API's recorded
feeds, author feeds made by arxiv-browse in both formats, and OAI-PMH pages
made by arXiv's service of the same records in ``arXivRaw`` (as submitted)
and in ``arXiv`` (its own reading: names split, text in UTF-8).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from lxml import etree

from syncd.domain.canonical import canonical, canonical_text, same_names, split_joined_names
from syncd.domain.record import Record, normalize_text
from syncd.sources.arxiv import parse_author_feed, parse_feed
from syncd.sources.oai import parse_page

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FEEDS = FIXTURES / "arxiv-real" / "author-feeds"
OAI = FIXTURES / "arxiv-real" / "oai"
API = sorted((FIXTURES / "arxiv-api").glob("query_*.xml")) + [
    FIXTURES / "arxiv-api" / name
    for name in (
        "oldbackend_doi.xml",
        "oldbackend_single.xml",
        "single_affiliations_journalref_oldstyle_id.xml",
        "single_title_is_0.xml",
    )
]
ARXIV_FORMAT = "{http://arxiv.org/OAI/arXiv/}"

RECORD = Record(
    arxiv_id="2401.00001",
    version=2,
    title="A title",
    abstract="An abstract.",
    authors=("Ada Lovelace", "Charles Babbage"),
    authors_complete=True,
    primary_category="cs.LG",
    categories=("cs.LG", "stat.ML"),
    published="2024-01-01T09:00:00Z",
    updated="2024-02-01T09:00:00Z",
)


def _feed(name: str, feed_format: str) -> tuple[Record, ...]:
    body = (FEEDS / f"{name}.{feed_format}").read_bytes()
    return parse_author_feed(body, "atom" if feed_format == "atom" else "atom2").records


def _arxiv_format() -> dict[str, tuple[list[str], dict[str, str | None]]]:
    """arXiv's own reading of the OAI page's records, by id: names, and text in UTF-8."""
    read: dict[str, tuple[list[str], dict[str, str | None]]] = {}
    for metadata in etree.parse(OAI / "ListRecords_arXiv_page1.xml").iter("{*}metadata"):
        (record,) = metadata
        names = [
            " ".join(
                part
                for part in (
                    author.findtext(ARXIV_FORMAT + "forenames"),
                    author.findtext(ARXIV_FORMAT + "keyname"),
                    author.findtext(ARXIV_FORMAT + "suffix"),
                )
                if part
            )
            for author in record.iter(ARXIV_FORMAT + "author")
        ]
        texts = {
            field: normalize_text(record.findtext(ARXIV_FORMAT + tag))
            for field, tag in (
                ("title", "title"),
                ("abstract", "abstract"),
                ("comment", "comments"),
                ("journal_ref", "journal-ref"),
                ("doi", "doi"),
            )
        }
        read[record.findtext(ARXIV_FORMAT + "id") or ""] = (names, texts)
    return read


def _harvested() -> dict[str, Record]:
    """The OAI page's arXivRaw records as syncd reads them, by id."""
    page = parse_page((OAI / "ListRecords_arXivRaw_page1.xml").read_bytes())
    return {raw.arxiv_id: raw.as_record() for raw in page.records}


class TestAuthorFeeds:
    """arxiv-browse's ``.atom`` and ``.atom2`` of the same papers."""

    @pytest.mark.parametrize("name", ["hard-cases", "arxiv-browse-test-33510"])
    def test_both_formats_read_as_the_same_records(self, name: str) -> None:
        """``.atom2``'s one joined <name> is split back into ``.atom``'s people, exactly."""
        assert _feed(name, "atom") == _feed(name, "atom2")

    def test_a_joined_name_is_many_people(self) -> None:
        """The PHENIX paper's 381 names, not one author named "A. Adare, S. Afanasiev, ..."."""
        (phenix,) = [r for r in _feed("hard-cases", "atom2") if r.arxiv_id == "1310.8286"]
        assert len(phenix.authors) == 381
        assert phenix.authors[:2] == ("A. Adare", "S. Afanasiev")

    def test_names_are_read_in_utf8(self) -> None:
        """The feed carries TeX as submitted; the record holds the API's UTF-8."""
        (phenix,) = [r for r in _feed("hard-cases", "atom") if r.arxiv_id == "1310.8286"]
        assert {"M. Csanád", "T. Csörgő", "H. -Å. Gustafsson", "T. Liška"} <= set(phenix.authors)
        # arXiv's own parser reads "M. Finger,\, Jr." as a person "\, Jr.": kept as arXiv reads it.
        assert [n for n in phenix.authors if "\\" in n] == ["\\, Jr."]

    def test_a_suffix_joined_back_stays_with_its_name(self) -> None:
        """arXiv joins ", Jr." to its name before joining names with ", ": the split keeps it."""
        (lo,) = [r for r in _feed("hard-cases", "atom2") if r.arxiv_id == "0704.0802"]
        assert lo.authors == ("Caleb K. Lo", "Robert W. Heath, Jr.", "Sriram Vishwanath")

    def test_times_are_written_as_the_api_writes_them(self) -> None:
        """``2007-03-31T09:49:10+00:00`` in the feed, ``...Z`` in the record, as from the API."""
        first = _feed("hard-cases", "atom")[0]
        assert (first.published, first.updated) == ("2007-03-31T09:49:10Z", "2007-03-31T09:49:10Z")
        assert all(r.updated and r.updated.endswith("Z") for r in _feed("hard-cases", "atom"))

    def test_math_keeps_its_tex_but_greek(self) -> None:
        """A TeX title reads as the API writes it: Greek converted, other math as typed."""
        (cms,) = [r for r in _feed("hard-cases", "atom") if r.arxiv_id == "1411.4413"]
        assert cms.title is not None
        assert cms.title.startswith("Observation of the rare $B^0_s\\toμ^+μ^-$ decay")

    def test_an_alias_category_is_named_as_the_api_names_it(self) -> None:
        """The feed lists cs.IT and its alias math.IT; the record cs.IT alone, as the API's
        answers list canonical names (cs.IT, math.ST, econ.GN) and never their aliases."""
        (lo,) = [r for r in _feed("hard-cases", "atom") if r.arxiv_id == "0704.0802"]
        assert (lo.primary_category, lo.categories) == ("cs.IT", ("cs.IT",))
        listed = {
            c for path in API for r in parse_feed(path.read_bytes()).records for c in r.categories
        }
        assert {"cs.IT", "math.ST", "econ.GN"} <= listed
        assert not {"math.IT", "stat.TH", "q-fin.EC", "math.MP", "cs.SY", "cs.NA"} & listed


class TestOaiPmh:
    """arXivRaw read by syncd against arXiv's own ``arXiv`` format of the same 200 records."""

    def test_every_text_equals_arxivs_own_reading(self) -> None:
        """Title, abstract, comment, journal-ref and DOI equal arXiv's UTF-8, record by record."""
        raw, oracle = _harvested(), _arxiv_format()
        assert raw.keys() == oracle.keys() and len(raw) == 200
        differ = [
            (arxiv_id, field)
            for arxiv_id, record in raw.items()
            for field, text in oracle[arxiv_id][1].items()
            if getattr(record, field) != text
        ]
        assert differ == []

    def test_every_author_list_is_arxivs_names(self) -> None:
        """Every list names arXiv's own people in UTF-8: TeX converted before the split."""
        raw, oracle = _harvested(), _arxiv_format()
        differ = [i for i, r in raw.items() if not same_names(r.authors, oracle[i][0])]
        assert differ == []
        assert not [i for i, r in raw.items() if any("\\" in name for name in r.authors)]

    def test_the_header_names_are_converted_too(self) -> None:
        """The names a harvest matches followed authors against are UTF-8 as well."""
        page = parse_page((OAI / "ListRecords_arXivRaw_page1.xml").read_bytes())
        for entry in page.entries:
            assert entry.authors == entry.read().as_record().authors
        names = {name for entry in page.entries for name in entry.authors}
        assert {"Patrick Plötz", "Marie-Noëlle Célérier", "V. V. França"} <= names
        assert not [name for name in names if "\\" in name]


class TestApi:
    """The API already writes the canonical form: reading it again changes nothing."""

    @pytest.mark.parametrize("path", API, ids=[p.name for p in API])
    def test_every_recorded_entry_is_already_canonical(self, path: Path) -> None:
        """Each record the API gave is returned as it is (the same object) by ``canonical``."""
        records = parse_feed(path.read_bytes()).records
        assert records and all(canonical(record) is record for record in records)
        texts = [t for r in records for t in (r.title, r.abstract, r.comment, *r.authors) if t]
        assert [t for t in texts if canonical_text(t) != t] == []


class TestCanonical:
    """The rules one at a time."""

    def test_a_canonical_record_is_returned_as_it_is(self) -> None:
        """Nothing to convert: the same object, no copy."""
        assert canonical(RECORD) is RECORD

    def test_tex_in_every_text_field(self) -> None:
        """Title, abstract, authors, comment and journal-ref are converted as arXiv converts."""
        typed = replace(
            RECORD,
            title='The H$\\alpha$ line of Pl\\"otz',
            abstract="We thank Jos\\'e.\n  A second line.",
            authors=('Patrick Pl\\"otz', "{\\O}ystein Ore"),
            comment="12 pages, \\copyright\\ 2007",
            journal_ref='Ann. Phys. (Leipz\\"ig) 3 (2007)',
        )
        read = canonical(typed)
        assert read.title == "The H$α$ line of Plötz"
        assert read.abstract == "We thank José. A second line."
        assert read.authors == ("Patrick Plötz", "Øystein Ore")
        assert read.comment == "12 pages, © 2007"
        assert read.journal_ref == "Ann. Phys. (Leipzïg) 3 (2007)"
        assert canonical(read) is read

    @pytest.mark.parametrize(
        ("written", "expected"),
        [
            ("2007-03-31T09:49:10+00:00", "2007-03-31T09:49:10Z"),
            ("2007-03-31T05:49:10-04:00", "2007-03-31T09:49:10Z"),
            ("2007-03-31T09:49:10Z", "2007-03-31T09:49:10Z"),
            ("not a time", "not a time"),
        ],
    )
    def test_times(self, written: str, expected: str) -> None:
        """Any offset is written as the API writes UTC; what is no time is left as sent."""
        read = canonical(replace(RECORD, published=written, updated=written))
        assert (read.published, read.updated) == (expected, expected)

    @pytest.mark.parametrize(
        ("primary", "categories", "expected"),
        [
            ("cs.IT", ("cs.IT", "math.IT"), ("cs.IT", ("cs.IT",))),
            ("math.IT", ("math.IT", "cs.IT", "stat.ML"), ("cs.IT", ("cs.IT", "stat.ML"))),
            (
                "math.ST",
                ("math.ST", "stat.TH", "cs.SY", "eess.SY"),
                ("math.ST", ("math.ST", "eess.SY")),
            ),
            ("hep-th", ("hep-th", "math.MP", "math-ph"), ("hep-th", ("hep-th", "math-ph"))),
            ("stat.ML", ("cs.LG", "stat.ML"), ("stat.ML", ("stat.ML", "cs.LG"))),
            ("ao-sci", ("ao-sci", "physics.ao-ph"), ("ao-sci", ("ao-sci", "physics.ao-ph"))),
        ],
    )
    def test_categories(
        self, primary: str, categories: tuple[str, ...], expected: tuple[str, tuple[str, ...]]
    ) -> None:
        """An alias pair by its canonical name, once; the primary first; archives as recorded."""
        read = canonical(replace(RECORD, primary_category=primary, categories=categories))
        assert (read.primary_category, read.categories) == expected

    def test_an_old_paper_without_categories_is_filed_under_its_archive(self) -> None:
        """arxiv-browse writes no category for an abstract naming none; arXiv files it by id."""
        old = replace(RECORD, arxiv_id="hep-th/9108001", primary_category=None, categories=())
        assert (canonical(old).primary_category, canonical(old).categories) == (
            "hep-th",
            ("hep-th",),
        )

    def test_a_seed_record_is_left_as_the_page_showed_it(self) -> None:
        """Seeds are not arXiv's formats: nothing is re-read."""
        seed = Record(title='Pl\\"otz', authors=('Pl\\"otz',), categories=("math.IT",))
        assert canonical(seed) is seed

    @pytest.mark.parametrize(
        ("joined", "names"),
        [
            ("A. Adare, S. Afanasiev", ("A. Adare", "S. Afanasiev")),
            ("Caleb K. Lo, Robert W. Heath, Jr., Sriram Vishwanath",
             ("Caleb K. Lo", "Robert W. Heath, Jr.", "Sriram Vishwanath")),
            ("M. Finger, \\, Jr., F. Fleuret", ("M. Finger", "\\, Jr.", "F. Fleuret")),
            ("Ada Lovelace", ("Ada Lovelace",)),
        ],
    )  # fmt: skip
    def test_split_joined_names(self, joined: str, names: tuple[str, ...]) -> None:
        """``.atom2``'s <name> back into the names arXiv joined, suffixes where arXiv put them."""
        assert split_joined_names(joined) == names


class TestSameNames:
    """Two author lists that are the same people read by other rules."""

    @pytest.mark.parametrize(
        ("old", "new"),
        [
            (("C.N. Pope", "H. Lu"), ("C. N. Pope", "H. Lu")),
            (("A. Adare, S. Afanasiev, M. Finger",), ("A. Adare", "S. Afanasiev", "M. Finger")),
            (('Patrick Pl\\"otz', "Jos\\'e Garc\\'ia"), ("Patrick Plötz", "José García")),
            (("M. Finger", "Jr."), ("M. Finger Jr.",)),
            (("LHCb Collaboration: R. Aaij",), ("LHCb Collaboration", "R. Aaij")),
            (("Ada Lovelace & Charles Babbage",), ("Ada Lovelace", "Charles Babbage")),
            (("Ada Lovelace", "Charles Babbage", "et al"), ("Ada Lovelace", "Charles Babbage")),
            (('Patrick Pl{\\"o}tz',), ("Patrick Plötz",)),
        ],
    )
    def test_the_same_people_read_two_ways(
        self, old: tuple[str, ...], new: tuple[str, ...]
    ) -> None:
        """Splitting, initials' spacing, TeX and "et al" are readings, not people."""
        assert same_names(old, new)

    @pytest.mark.parametrize(
        ("old", "new"),
        [
            (("Ada Lovelace", "Charles Babbage"), ("Charles Babbage", "Ada Lovelace")),
            (("Ada Lovelace",), ("Ada Lovelace", "Charles Babbage")),
            (("Jose Garcia",), ("José García",)),
            (("ada lovelace",), ("Ada Lovelace",)),
            (("Ada Lovelace",), ("Ada Byron",)),
        ],
    )
    def test_other_people_or_other_spellings_differ(
        self, old: tuple[str, ...], new: tuple[str, ...]
    ) -> None:
        """An order, a person, an accent or a capital a submitter changed is a change."""
        assert not same_names(old, new)
