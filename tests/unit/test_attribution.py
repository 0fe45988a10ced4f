"""Tests for syncd.domain.attribution: whom a paper goes to, and the identity verdict for one."""

from __future__ import annotations

from collections.abc import Collection

import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncd.domain.attribution import IdentityFacts, NameIndex, attribute, read, split_batch
from syncd.domain.names import NameMatch, could_be
from syncd.domain.record import Record

FOLLOWED = ["Zhida Jiang", "Ada Lovelace", "José Müller", "Ke Zhang", "Kai Zhang"]
JOHN, JANE = "John Smith", "Jane Smith"
SMITHS = NameIndex([JOHN, JANE])


def paper(*authors: str, categories: tuple[str, ...] = ("cs.LG",)) -> Record:
    return Record(arxiv_id="2607.00001", version=1, authors=authors, categories=categories)


class TestNameIndex:
    def test_finds_every_followed_name_on_a_record(self) -> None:
        """Initials that fit two followed authors find both; each then judges for itself."""
        record = paper("Z. Jiang", "Charles Babbage", "Jose Muller", "K. Zhang")
        assert NameIndex(FOLLOWED).authors_of(record.authors) == {
            "Zhida Jiang",
            "José Müller",
            "Ke Zhang",
            "Kai Zhang",
        }

    def test_a_record_of_strangers_goes_to_nobody(self) -> None:
        """Nobody followed is named: the record is no one's."""
        assert NameIndex(FOLLOWED).authors_of(("Marie Curie", "Pierre Curie")) == set()

    @pytest.mark.parametrize(
        ("names", "owners"),
        [
            pytest.param(("Jane Smith", "Dave Doe"), {JANE}, id="Jane's paper is not John's"),
            pytest.param(("John Smith", "Ada Lovelace"), {JOHN}, id="John's is not Jane's"),
            pytest.param(("Joe Smith",), set(), id="a namesake's is nobody's"),
            pytest.param(("J. Smith",), {JOHN, JANE}, id="an initial goes to both to judge"),
            pytest.param(("John Smith", "Jane Smith"), {JOHN, JANE}, id="a paper of both"),
        ],
    )
    def test_authors_of_one_batch_never_lend_each_other_papers(
        self, names: tuple[str, ...], owners: set[str]
    ) -> None:
        """John and Jane Smith queried together: a paper goes to whom its names can be, and a
        first name that disagrees is another person, whatever the initial."""
        shares, orphans = split_batch([paper(*names)], [JOHN, JANE])
        assert set(shares) == owners
        assert orphans == []

    def test_only_a_record_naming_no_author_at_all_is_an_orphan(self) -> None:
        """arXiv's loose matching brings namesakes (no one's, no failure); a record without even
        the surname of an author means the answer was misread."""
        namesake, initials, stranger = paper("Joe Smith"), paper("J. Q. Smith"), paper("Ada Byron")
        shares, orphans = split_batch([namesake, initials, stranger], [JOHN, JANE])
        assert shares == {JOHN: [initials], JANE: [initials]}
        assert orphans == [stranger]

    def test_tex_braces_hide_no_followed_name(self) -> None:
        """A name arXiv writes with a converted accent's braces is found, ASCII or not."""
        index = NameIndex(["Patrick Plötz", "Anna Plotz"])
        found = index.authors_of(("Patrick Pl{ö}tz", "Anna Pl{o}tz"))
        assert found == {"Patrick Plötz", "Anna Plotz"}


NAMES = st.sampled_from(
    [
        *("Zhida Jiang", "Z. Jiang", "Zhi Jiang", "Y. Jiang", "Ada Lovelace", "A Lovelace"),
        *("Ke Zhang", "K. Zhang", "John Smith", "Jane Smith", "J. Q. Smith", "John Smith Jr."),
        *("Patrick Plötz", "P. Pl{ö}tz", "Anna Pl{o}tz"),
    ]
)


@given(st.lists(NAMES, max_size=4, unique=True), st.lists(NAMES, min_size=1, max_size=4))
def test_the_index_agrees_with_could_be(followed: list[str], listed: list[str]) -> None:
    """The index finds exactly the authors a pairwise could_be would."""
    expected = {a for a in followed if any(could_be(n, a) for n in listed)}
    assert NameIndex(followed).authors_of(listed) == expected


class TestRead:
    def test_every_form_of_the_authors_name_is_their_own(self) -> None:
        """ "John Smith" and "J. Smith" on one paper are both the author: the written one is how
        the paper names him, and neither is a co-author of his."""
        names = ("J. Smith", "Ada Lovelace", "John Smith")
        reading = read(names, JOHN)
        assert (reading.level, reading.listed) == (NameMatch.WRITTEN, "John Smith")
        assert _facts(names=names).people == {"ada lovelace"}

    def test_a_namesake_does_not_name_the_author(self) -> None:
        """A paper of Jane Smith's reads as a namesake's for John, naming nobody of his."""
        reading = read(("Jane Smith", "Dave Doe"), JOHN, SMITHS)
        assert (reading.level, reading.listed) == (NameMatch.NAMESAKE, None)

    @pytest.mark.parametrize(
        ("names", "author", "followed", "rivals"),
        [
            pytest.param(("J. Smith",), JOHN, [JOHN, JANE], ("Jane Smith",), id="an initial"),
            pytest.param(("J. Smith",), JANE, [JOHN, JANE], ("John Smith",), id="either way"),
            pytest.param(("J. Smith",), JOHN, [JOHN], (), id="nobody else followed"),
            pytest.param(("John Smith",), JOHN, [JOHN, JANE], (), id="a written-out name"),
            pytest.param(
                ("John Smith",),
                JOHN,
                [JOHN, "John A. Smith"],
                ("John A. Smith",),
                id="a written-out name two followed authors share",
            ),
            pytest.param(
                ("John Smith",), "J. Smith", [JOHN, "J. Smith"], ("John Smith",), id="weaker"
            ),
            pytest.param(("John Smith",), JOHN, [JOHN, "J. Smith"], (), id="stronger"),
            pytest.param(
                ("J. Smith", "Jane Smith"),
                JOHN,
                [JOHN, JANE],
                (),
                id="a rival the paper names elsewhere",
            ),
        ],
    )
    def test_rivals_are_the_followed_authors_the_name_could_as_well_be(
        self, names: tuple[str, ...], author: str, followed: list[str], rivals: tuple[str, ...]
    ) -> None:
        """A rival reads the author's name at least as well and is not on the paper already."""
        assert read(names, author, NameIndex(followed)).rivals == rivals


def _facts(
    author: str = JOHN,
    followed: Collection[str] = (JOHN, JANE),
    **fields: Collection[str],
) -> IdentityFacts:
    """John's known papers: with Ada Lovelace in cs.LG, one listing him as "J. Smith"."""
    values: dict[str, Collection[str]] = {
        "names": ("John Smith", "Ada Lovelace", "J. Smith", "Grace Hopper"),
        "categories": ("cs.LG",),
    } | fields
    return IdentityFacts(author, followed=NameIndex(followed), **values)  # type: ignore[arg-type]


STRANGER = ("J. Smith", "Emmy Noether")  # a co-author John's papers do not have
CLAIMED = {"claimed": ("2607.00001",)}
INCLUDED = {"include_ids": ("2607.00001",)}


class TestAttribute:
    @pytest.mark.parametrize(
        ("names", "categories", "followed", "facts", "reason"),
        [
            pytest.param(("John Smith",), ("cs.LG",), (JOHN, JANE), {}, None, id="name, field"),
            pytest.param(
                ("John Smith", "Ada Lovelace"), ("hep-th",), (JOHN, JANE), {}, None, id="co-author"
            ),
            pytest.param(
                ("John Smith",),
                ("hep-th",),
                (JOHN, JANE),
                {},
                "shares no co-author or category with the known papers",
                id="name alone",
            ),
            pytest.param(STRANGER, ("cs.LG",), (JOHN,), {}, None, id="initial, field"),
            pytest.param(
                STRANGER,
                ("hep-th",),
                (JOHN,),
                {},
                "J. Smith may be John Smith, but only initials (or part of the name) agree;"
                " the paper shares no co-author or category with the known papers",
                id="initial alone",
            ),
            pytest.param(
                STRANGER,
                ("cs.LG",),
                (JOHN, JANE),
                {},
                "ambiguous: J. Smith could be John Smith or Jane Smith;"
                " no claim, seed or co-author of the known papers says which",
                id="contested initial, field only",
            ),
            pytest.param(
                ("J. Smith", "Ada Lovelace"),
                ("hep-th",),
                (JOHN, JANE),
                {},
                None,
                id="contested initial, co-author",
            ),
            pytest.param(STRANGER, ("hep-th",), (JOHN, JANE), CLAIMED, None, id="claimed"),
            pytest.param(STRANGER, ("hep-th",), (JOHN, JANE), INCLUDED, None, id="included"),
            pytest.param(
                ("Jane Smith", "Ada Lovelace"),
                ("cs.LG",),
                (JOHN, JANE),
                {},
                "no name on the paper can be John Smith",
                id="a namesake's, whatever it shares",
            ),
        ],
    )
    def test_corroboration(
        self,
        names: tuple[str, ...],
        categories: tuple[str, ...],
        followed: tuple[str, ...],
        facts: dict[str, Collection[str]],
        reason: str | None,
    ) -> None:
        """A written-out name needs a co-author or a field; an initial no one else followed
        could be, the same; an initial another followed author could be needs a claim, an
        inclusion or a co-author, never a field alone; a namesake's paper is never theirs."""
        verdict = attribute(
            paper(*names, categories=categories), _facts(followed=followed, **facts)
        )
        assert (verdict.theirs, verdict.reason) == (reason is None, reason)

    def test_the_authors_own_variant_is_no_coauthor(self) -> None:
        """John's papers list him as "J. Smith" once: that vouches for no other "J. Smith" paper,
        in a field of his or not."""
        for category in ("cs.LG", "astro-ph.GA"):
            verdict = attribute(paper("J. Smith", categories=(category,)), _facts())
            assert not verdict.theirs
        alone = attribute(paper("J. Smith", categories=("astro-ph.GA",)), _facts(followed=[JOHN]))
        assert not alone.theirs

    def test_an_ambiguous_paper_is_each_ones_candidate_naming_the_other(self) -> None:
        """A "J. Smith" paper in the field both John and Jane work in is held by both, each
        reason naming the rival."""
        record = paper(*STRANGER, categories=("cs.LG",))
        johns = attribute(record, _facts())
        janes = attribute(record, _facts(JANE, names=("Jane Smith", "Sophie Germain")))
        assert not johns.theirs and not janes.theirs
        assert (
            johns.reason is not None
            and "J. Smith could be John Smith or Jane Smith" in johns.reason
        )
        assert (
            janes.reason is not None
            and "J. Smith could be Jane Smith or John Smith" in janes.reason
        )
