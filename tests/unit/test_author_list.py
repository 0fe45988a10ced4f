"""arXivRaw's one author string splits into the names arXiv's own parser reads, rule by rule.

Each expected reading is arXiv's (``parse_author_affil`` after ``tex2utf``,
written "Forenames Keyname Suffix" as the API writes it), except in
``TestBetterThanArxiv``, whose cases say what arXiv reads instead.
``tests/unit/test_author_conformance.py`` checks the same rules over every
real author string of the corpus.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncd.domain.author_list import split_authors

Case = tuple[str, str, tuple[str, ...]]


def _cases(cases: list[Case]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize(
        ("text", "names"), [case[1:] for case in cases], ids=[case[0] for case in cases]
    )


SEPARATORS: list[Case] = [
    ("commas and a final and", "A. One, B. Two, and C. Three", ("A. One", "B. Two", "C. Three")),
    ("and", "A. One and B. Two", ("A. One", "B. Two")),
    ("ampersand", "A. One & B. Two", ("A. One", "B. Two")),
    ("colon", "LHCb Collaboration: R. Aaij", ("LHCb Collaboration", "R. Aaij")),
    ("and inside a word", "Rand Paul and Anderson Cooper", ("Rand Paul", "Anderson Cooper")),
    ("capital And is a name's", "N. H. Risebro, And M. Svard", ("N. H. Risebro", "And M. Svard")),
    ("AND is a name's", "Sandra Andersen AND Bo Li", ("Sandra Andersen AND Bo Li",)),
    ("semicolon is not a separator", "A. One; B. Two", ("A. One; B. Two",)),
    ("one name", "Alexander Andersen", ("Alexander Andersen",)),
    ("nothing", "", ()),
]

INITIALS: list[Case] = [
    ("glued initials", "C.N. Pope and T.A Tran", ("C. N. Pope", "T. A Tran")),
    ("initial glued to the surname", "T. F.Li", ("T. F. Li",)),
    ("hyphenated initials", "J.-P. Blaizot, H.-H. Klauss", ("J. -P. Blaizot", "H. -H. Klauss")),
    ("accented initials", "É.B. Nagy and Ł. Stawarz", ("É. B. Nagy", "Ł. Stawarz")),
    ("lone initials", "K. and A.B.", ("K.", "A. B.")),
    ("TeX's dot accent is no initial", r"J\.Doe", (r"J\.Doe",)),
    ("a doubled dot spaced once", "M..N. Name", ("M. .N. Name",)),
    ("TeX braces stay", "A. Pl{ö}tz and B. Two", ("A. Pl{ö}tz", "B. Two")),
]

COLLABORATIONS: list[Case] = [
    (
        "collaboration opening the list",
        "LHCb Collaboration: R. Aaij, B. Adeva",
        ("LHCb Collaboration", "R. Aaij", "B. Adeva"),
    ),
    (
        "two collaborations",
        "LIGO Scientific Collaboration and Virgo Collaboration: B. P. Abbott",
        ("LIGO Scientific Collaboration", "Virgo Collaboration", "B. P. Abbott"),
    ),
    (
        "cut to its noun",
        "The ATLAS Collaborations, A. Author",
        ("The ATLAS Collaboration", "A. Author"),
    ),
    ("cut at a hyphen", "Fermi-LAT Collaboration: A. A. Abdo", ("LAT Collaboration", "A. A. Abdo")),
    ("team", "Planck Team: A. B. Author", ("Planck Team", "A. B. Author")),
    (
        "a dotted name is no collaboration, nor swallows its colon",
        "The H.E.S.S. Collaboration: A. B. Author",
        ("The H. E. S. S. Collaboration", ":", "A. B. Author"),
    ),
    (
        "a collaboration later stays whole",
        "A. A. Abdo, Fermi-LAT Collaboration",
        ("A. A. Abdo", "Fermi-LAT Collaboration"),
    ),
    (
        "for the collaboration, later",
        "A. Smith, B. Jones for the LHCb Collaboration",
        ("A. Smith", "B. Jones for the LHCb Collaboration"),
    ),
    (
        "for the collaboration, first",
        "B. Jones for the LHCb Collaboration, A. Smith",
        ("Jones for the LHCb Collaboration", "A. Smith"),
    ),
    ("for the collaboration, as a note", "A. Smith (for the CMS Collaboration)", ("A. Smith",)),
]

SUFFIXES: list[Case] = [
    ("Jr. after a comma", "M. Finger, Jr. and A. Other", ("M. Finger, Jr.", "A. Other")),
    ("Jr. without a comma", "Waldyr A. Rodrigues Jr", ("Waldyr A. Rodrigues Jr",)),
    ("III without a comma", "W. T. Hill III", ("W. T. Hill III",)),
    ("Sr. after a comma is a name", "A. Smith, Sr.", ("A. Smith", "Sr.")),
    ("III after a comma is a name", "A. Smith, III", ("A. Smith", "III")),
    ("TeX thin space before Jr.", r"M. Finger,\, Jr.", ("M. Finger", r"\, Jr.")),
    ("Jr. after a note goes with it", "A. Smith (MIT), Jr.", ("A. Smith",)),
    ("a name starting Jr", "Anatoly Zlotnik and Jr-Shin Li", ("Anatoly Zlotnik", "Jr-Shin Li")),
    ("a dot before the comma spaced", "Sr., Jr.", ("Sr. , Jr.",)),
]

ET_AL: list[Case] = [
    ("et al", "A. One, B. Two, et al", ("A. One", "B. Two")),
    ("et al.", "A. One, B. Two, et al.", ("A. One", "B. Two")),
    ("et.al.", "A. One, et.al.", ("A. One",)),
    ("Et Al.", "A. One, Et Al.", ("A. One",)),
    ("et al. inside a name stays", "A. One et al.", ("A. One et al.",)),
]

NOTES: list[Case] = [
    ("affiliations", "A. One (MIT), B. Two (CERN)", ("A. One", "B. Two")),
    ("numbered affiliations", "A (1), B (2) ((1) MIT, (2) CERN)", ("A", "B")),
    (
        "numbered with and",
        "A. One (1,2) and B. Two (2) ((1) MIT, (2) CERN)",
        ("A. One", "B. Two"),
    ),
    ("glued to the name", "sum won(1,2)((1)lab a,(2)lab b)", ("sum won",)),
    ("nested", "A. One ((a) MIT (b) CERN), B. Two", ("A. One", "B. Two")),
    (
        "separators inside a note",
        "A. One (Dept. of Physics, MIT: Cambridge and Boston), B. Two",
        ("A. One", "B. Two"),
    ),
    (
        # As the parser hands it over: the line breaks of the submission gone.
        "multi-line affiliations",
        " ".join(
            "A. One (1), B. Two (2) ((1) Dept. of\n  Physics, MIT, (2) CERN,\n  Geneva)".split()
        ),
        ("A. One", "B. Two"),
    ),
    ("a note ends a name", "A. Smith (MIT) B. Jones (CERN)", ("A. Smith", "B. Jones")),
    ("left open", "A. One, B. Two (MIT", ("A. One", "B. Two")),
    ("a stray closing parenthesis", "A. One) B. Two", ("A. One) B. Two",)),
]

# (case, text, arXiv's reading, what a person might read instead)
QUIRKS: list[tuple[str, str, tuple[str, ...], tuple[str, ...]]] = [
    (
        "a note ends a name, a nickname too",
        "Zhe (Rita) Liang, Matei I. Radulescu",
        ("Zhe", "Liang", "Matei I. Radulescu"),
        ("Zhe Liang", "Matei I. Radulescu"),
    ),
    (
        "a stray semicolon is a name",
        "Gibor Basri (6); (1 - Swarthmore College; 2 - Vanderbilt)",
        ("Gibor Basri", ";"),
        ("Gibor Basri",),
    ),
    (
        "a doubled and is a name's first word",
        "Naihong Hu, Dong Liu and and Linsheng Zhu",
        ("Naihong Hu", "Dong Liu", "and Linsheng Zhu"),
        ("Naihong Hu", "Dong Liu", "Linsheng Zhu"),
    ),
]


class TestSeparators:
    @_cases(SEPARATORS)
    def test_between_names(self, text: str, names: tuple[str, ...]) -> None:
        """Commas, colons, and "and" or "&" between spaces separate names; semicolons do not."""
        assert split_authors(text) == names


class TestInitials:
    @_cases(INITIALS)
    def test_spaced(self, text: str, names: tuple[str, ...]) -> None:
        """A dot glued to what follows gets a space, unless it is TeX's dot accent."""
        assert split_authors(text) == names


class TestCollaborations:
    @_cases(COLLABORATIONS)
    def test_opening_the_list(self, text: str, names: tuple[str, ...]) -> None:
        """Collaborations that open the list are names cut to their noun phrase; later ones stay."""
        assert split_authors(text) == names


class TestSuffixes:
    @_cases(SUFFIXES)
    def test_jr_after_a_comma(self, text: str, names: tuple[str, ...]) -> None:
        """Jr. after a comma joins the name before it; Sr. and III after a comma stand alone."""
        assert split_authors(text) == names


class TestEtAl:
    @_cases(ET_AL)
    def test_dropped(self, text: str, names: tuple[str, ...]) -> None:
        """A name that starts with "et al" is dropped, however it is written."""
        assert split_authors(text) == names


class TestNotes:
    @_cases(NOTES)
    def test_dropped(self, text: str, names: tuple[str, ...]) -> None:
        """Parenthesised notes, nested or numbered, are dropped and end the name before them."""
        assert split_authors(text) == names


class TestArxivsQuirks:
    @pytest.mark.parametrize(
        ("text", "arxivs", "nicer"), [case[1:] for case in QUIRKS], ids=[case[0] for case in QUIRKS]
    )
    def test_kept(self, text: str, arxivs: tuple[str, ...], nicer: tuple[str, ...]) -> None:
        """Where arXiv reads a fragment as a person, so does syncd: the API lists it so, and
        a nicer reading would be a false author change when a harvest meets a name query."""
        assert split_authors(text) == arxivs != nicer


_WORD = st.text("abcdefghijklmnopqrstuvwxyzéøł-'", min_size=1, max_size=8).filter(
    lambda word: word[0].isalpha() and word[-1].isalpha()
)
# "Et Al..." is "et al", "X Team" a collaboration: not plain names.
_NAME = st.builds(
    lambda first, last: f"{first.capitalize()} {last.capitalize()}",
    _WORD.filter(lambda word: word != "et"),
    _WORD.filter(lambda word: word not in ("team", "group")),
)


@given(st.lists(_NAME, min_size=1, max_size=12))
def test_plain_names_read_back(names: list[str]) -> None:
    """Plain names written "A, B and C" read back as themselves, in order."""
    text = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    assert split_authors(text) == tuple(names)
