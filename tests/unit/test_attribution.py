"""Tests for syncd.domain.attribution: the index of folded names and the identity verdict."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from syncd.domain.attribution import IdentityFacts, NameIndex, attribute
from syncd.domain.linking import name_matches
from syncd.domain.record import Record

FOLLOWED = ["Zhida Jiang", "Ada Lovelace", "José Müller", "Ke Zhang", "Kai Zhang"]


def paper(*authors: str, categories: tuple[str, ...] = ("cs.LG",)) -> Record:
    return Record(arxiv_id="2607.00001", version=1, authors=authors, categories=categories)


def test_finds_every_followed_name_on_a_record() -> None:
    index = NameIndex(FOLLOWED)
    record = paper("Z. Jiang", "Charles Babbage", "Jose Muller", "K. Zhang")
    assert index.authors_of(record.authors) == {
        "Zhida Jiang",
        "José Müller",
        "Ke Zhang",
        "Kai Zhang",
    }


def test_tex_braces_hide_no_followed_name() -> None:
    """A name arXiv writes with a converted accent's braces is found, ASCII or not."""
    index = NameIndex(["Patrick Plötz", "Anna Plotz"])
    assert index.authors_of(("Patrick Pl{ö}tz", "Anna Pl{o}tz")) == {"Patrick Plötz", "Anna Plotz"}


def test_a_record_of_strangers_goes_to_nobody() -> None:
    assert NameIndex(FOLLOWED).authors_of(("Marie Curie", "Pierre Curie")) == set()


NAMES = st.sampled_from(
    [
        *("Zhida Jiang", "Z. Jiang", "Zhi Jiang", "Y. Jiang", "Ada Lovelace", "A Lovelace"),
        *("Ke Zhang", "Patrick Plötz", "P. Pl{ö}tz", "Anna Pl{o}tz"),
    ]
)


@given(st.lists(NAMES, max_size=4, unique=True), st.lists(NAMES, min_size=1, max_size=4))
def test_the_index_agrees_with_name_matches(followed: list[str], listed: list[str]) -> None:
    """The index finds exactly the authors a pairwise name_matches would."""
    expected = {a for a in followed if any(name_matches(n, a) for n in listed)}
    assert NameIndex(followed).authors_of(listed) == expected


def test_attribute_follows_the_identity_rules() -> None:
    facts = IdentityFacts("Zhida Jiang", names=("Yang Xu",), categories=("cs.DC",))
    assert attribute(paper("Zhida Jiang", "Yang Xu"), facts).theirs
    assert attribute(paper("Zhida Jiang", categories=("cs.DC",)), facts).theirs
    stranger = attribute(
        paper("Zhida Jiang", "Marie Curie", categories=("physics.chem-ph",)), facts
    )
    assert not stranger.theirs
    assert stranger.reason is not None and "co-author" in stranger.reason
    included = IdentityFacts("Zhida Jiang", include_ids=("2607.00001",))
    assert attribute(paper("Zhida Jiang", categories=("physics.chem-ph",)), included).theirs
