"""Tests for syncd.domain.names: how far a name on a paper can be a followed author."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncd.domain.names import NameMatch, best_match, could_be, index_key, name_match

WRITTEN, INITIALS = NameMatch.WRITTEN, NameMatch.INITIALS
NAMESAKE, NONE = NameMatch.NAMESAKE, NameMatch.NONE

# (listed on the paper, followed author, level, why)
LEVELS = [
    ("John Smith", "John Smith", WRITTEN, "the same name"),
    ("JOHN  SMITH", "John Smith", WRITTEN, "case and spacing folded"),
    ("José Müller", "Jose Muller", WRITTEN, "accents folded"),
    ("Patrick Pl{ö}tz", "Patrick Plötz", WRITTEN, "TeX's braces around an accent, as arXiv writes"),
    ("Anna Pl{o}tz", "Anna Plotz", WRITTEN, "TeX's braces in an ASCII name"),
    ("J. Smith", "John Smith", INITIALS, "an initial that fits"),
    ("J Smith", "John Smith", INITIALS, "an initial without its dot"),
    ("Jane Smith", "John Smith", NAMESAKE, "another written-out first name"),
    ("Joe Smith", "John Smith", NAMESAKE, "another written-out first name"),
    ("Y. Smith", "John Smith", NAMESAKE, "another initial"),
    ("John A. Smith", "John Smith", WRITTEN, "a middle initial one side leaves out"),
    ("John Adam Smith", "John A. Smith", WRITTEN, "a middle name and its initial"),
    ("John B. Smith", "John A. Smith", NAMESAKE, "middle initials that disagree"),
    ("J. A. Smith", "John Smith", INITIALS, "initials only, a middle one more"),
    ("J. Q. Smith", "John Smith", INITIALS, "initials only, a middle one more"),
    ("J. B. Smith", "John A. Smith", NAMESAKE, "a middle initial that disagrees"),
    ("Jean-Pierre Serre", "Jean-Pierre Serre", WRITTEN, "a compound given name"),
    ("J.-P. Serre", "Jean-Pierre Serre", INITIALS, "a compound's initials"),
    ("J.P. Serre", "Jean-Pierre Serre", INITIALS, "a compound's initials, no hyphen"),
    ("Jean Serre", "Jean-Pierre Serre", INITIALS, "only part of a compound"),
    ("Jean-Paul Serre", "Jean-Pierre Serre", NAMESAKE, "another compound"),
    ("Zhi-Da Jiang", "Zhida Jiang", WRITTEN, "a name written with a hyphen"),
    ("Zhi Da Jiang", "Zhida Jiang", WRITTEN, "a name written in two words"),
    ("Z.-D. Jiang", "Zhida Jiang", INITIALS, "a syllable's initials"),
    ("Jan van der Berg", "Jan van der Berg", WRITTEN, "particles"),
    ("J. van der Berg", "Jan van der Berg", INITIALS, "an initial before particles"),
    ("Jan A. van der Berg", "Jan van der Berg", WRITTEN, "a middle initial before particles"),
    ("Anna van der Berg", "Jan van der Berg", NAMESAKE, "another given name: van is no given name"),
    ("Jan Berg", "Jan van der Berg", INITIALS, "particles one side leaves out"),
    ("Jan van Berg", "Jan van der Berg", NAMESAKE, "particles that disagree"),
    ("Di Wang", "Dan Wang", NAMESAKE, "a first word is a given name, never a particle"),
    ("John Smith Jr.", "John Smith Jr", WRITTEN, "the same suffix"),
    ("John Smith Jr.", "John Smith", INITIALS, "a suffix one side lacks"),
    ("John Smith Jr.", "John Smith Sr.", NAMESAKE, "suffixes that disagree"),
    ("Naoki Ii", "Naoki Ii", WRITTEN, "a surname that looks like a suffix"),
    ("ATLAS Collaboration", "ATLAS Collaboration", WRITTEN, "a collaboration"),
    ("CMS Collaboration", "ATLAS Collaboration", NAMESAKE, "another collaboration"),
    ("Ronaldo", "Ronaldo", WRITTEN, "a single-word name"),
    ("Ronaldo", "Cristiano Ronaldo", NAMESAKE, "a single word is no initial"),
    ("Mary Smith-Jones", "John Smith", NAMESAKE, "the surname inside another"),
    ("Smith John", "John Smith", NAMESAKE, "arXiv writes no name surname-first"),
    ("Marie Curie", "John Smith", NONE, "nothing of the surname"),
    ("", "John Smith", NONE, "no name"),
]


@pytest.mark.parametrize(
    ("listed", "author", "level"),
    [pytest.param(listed, author, level, id=why) for listed, author, level, why in LEVELS],
)
def test_name_levels(listed: str, author: str, level: NameMatch) -> None:
    """A listed name reads as the author at the level the table gives."""
    assert name_match(listed, author) is level


@pytest.mark.parametrize(
    ("listed", "author"),
    [(a, b) for a, b, _, _ in LEVELS if a and "Smith John" not in a and "Smith-Jones" not in a],
)
def test_levels_are_symmetric(listed: str, author: str) -> None:
    """Whether John is on Jane's paper or Jane on John's, the verdict is one (but for a surname
    found inside another, which only reads one way)."""
    assert name_match(author, listed) is name_match(listed, author)


def test_could_be_is_initials_or_better() -> None:
    """Only a written-out name or fitting initials can be the author; a namesake cannot."""
    assert could_be("J. Smith", "John Smith")
    assert could_be("John A. Smith", "John Smith")
    assert not could_be("Jane Smith", "John Smith")
    assert not could_be("Marie Curie", "John Smith")


def test_a_paper_reads_as_its_best_name() -> None:
    """A paper listing a namesake and the author reads as the author; no names, as nobody."""
    assert best_match(("Jane Smith", "J. Smith"), "John Smith") is INITIALS
    assert best_match(("Jane Smith", "Ada Lovelace"), "John Smith") is NAMESAKE
    assert best_match((), "John Smith") is NONE


NAMES = st.sampled_from(
    [row[0] for row in LEVELS if row[0]] + ["Jöhn Smith", "j. smith", "John   Smith III"]
)


@given(NAMES, NAMES)
def test_the_index_key_finds_every_possible_pair(listed: str, author: str) -> None:
    """Two names that could be one person share (surname, first initial): the index misses none."""
    if name_match(listed, author) >= INITIALS:
        assert index_key(listed) == index_key(author)
