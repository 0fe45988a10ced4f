"""A name-only author's basis: the largest co-author group, when it is clearly the largest."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from syncd.domain.attribution import NameIndex
from syncd.domain.basis import NEEDS_REVIEW, choose_basis, coauthor_groups
from syncd.domain.names import could_be
from syncd.domain.record import Record, normalize_name
from tests.hypothesis_profiles import examples

ME = "Ke Zhang"


def _paper(number: int, *coauthors: str, category: str = "cs.LG") -> Record:
    return Record(
        arxiv_id=f"2601.{number:05d}",
        version=1,
        title=f"Paper {number}",
        authors=(ME, *coauthors),
        primary_category=category,
        categories=(category,),
    )


def test_one_big_group_is_the_basis_and_strangers_are_held_with_a_reason() -> None:
    """Six papers chained through co-authors beat two strangers' papers."""
    group = [
        _paper(1, "Ada Lovelace"),
        _paper(2, "Ada Lovelace", "Charles Babbage"),
        _paper(3, "Charles Babbage"),
        _paper(4, "Charles Babbage", "Mary Somerville"),
        _paper(5, "Mary Somerville"),
        _paper(6, "Ada Lovelace"),
    ]
    strangers = [_paper(7, "Emmy Noether", category="math.AG"), _paper(8, "Alan Turing")]
    basis = choose_basis([*strangers, *group], ME, 2.0)
    assert basis.taken == {r.arxiv_id for r in group}
    assert basis.reasons == {
        "2601.00007": "shares no co-author with the 6 papers of the basis",
        "2601.00008": "shares no co-author with the 6 papers of the basis",
    }
    assert not basis.needs_review


def test_the_author_themself_joins_nothing() -> None:
    """Every paper lists the author (as "K. Zhang" too); that is no shared co-author."""
    first = _paper(1, "Ada Lovelace")
    second = Record(arxiv_id="2601.00002", version=1, authors=("K. Zhang", "Alan Turing"))
    assert len(coauthor_groups([first, second], ME)) == 2


def test_a_namesake_is_a_coauthor_not_the_author() -> None:
    """ "Kai Zhang" on two of Ke Zhang's papers is someone else: a co-author who joins them."""
    papers = [_paper(1, "Kai Zhang"), _paper(2, "Kai Zhang"), _paper(3, "Alan Turing")]
    assert [len(g) for g in coauthor_groups(papers, ME)] == [2, 1]


JOHN = "John Smith"


def _johns(number: int, *names: str, category: str = "cs.LG") -> Record:
    return Record(
        arxiv_id=f"2601.{number:05d}",
        version=1,
        authors=names,
        primary_category=category,
        categories=(category,),
    )


def test_initials_neither_make_the_basis_nor_join_it_without_a_coauthor() -> None:
    """Five "J. Smith" papers of one circle are not John's basis against his three written-out
    ones; a "J. Smith" paper with a co-author of his basis joins it, the others are held."""
    mine = [_johns(1, JOHN, "Ada Lovelace"), _johns(2, JOHN, "Ada Lovelace"), _johns(3, JOHN)]
    initials = [_johns(10 + i, "J. Smith", "Grace Hopper") for i in range(5)]
    with_ada = _johns(20, "J. Smith", "Ada Lovelace", category="hep-th")
    basis = choose_basis([*initials, with_ada, *mine], JOHN, 2.0)
    assert basis.taken == {"2601.00001", "2601.00002", "2601.00020"}
    assert basis.reasons["2601.00010"] == (
        "J. Smith may be John Smith, but only initials (or part of the name) agree;"
        " the paper shares no co-author with the 2 papers of the basis"
    )
    assert basis.reasons["2601.00003"] == "shares no co-author with the 2 papers of the basis"


def test_a_name_another_followed_author_could_be_is_held_as_ambiguous() -> None:
    """With Jane Smith followed too, a "J. Smith" paper sharing nothing with John's basis is
    held naming her; one sharing a co-author with it is still his."""
    mine = [_johns(1, JOHN, "Ada Lovelace"), _johns(2, JOHN, "Ada Lovelace")]
    contested = [_johns(3, "J. Smith"), _johns(4, "J. Smith", "Ada Lovelace")]
    janes = _johns(5, "Jane Smith", "Ada Lovelace")  # never handed to John; a namesake if it is
    basis = choose_basis([*mine, *contested, janes], JOHN, 2.0, NameIndex([JOHN, "Jane Smith"]))
    assert basis.taken == {"2601.00001", "2601.00002", "2601.00004"}
    assert basis.reasons == {
        "2601.00003": "ambiguous: J. Smith could be John Smith or Jane Smith;"
        " the paper shares no co-author with the 2 papers of the basis"
    }


def test_the_basis_is_made_of_papers_as_sure_as_the_name_can_be() -> None:
    """Followed as "John Smith", papers giving only "J. Smith" make no basis: every one needs
    review.  Followed as "Z. Jiang", initials are as sure as the name gets: they make one."""
    basis = choose_basis([_johns(1, "J. Smith", "Ada Lovelace")], JOHN, 2.0)
    assert basis.needs_review
    assert basis.reasons["2601.00001"] == (
        f"{NEEDS_REVIEW}: no paper names the author beyond doubt; J. Smith may be John Smith,"
        " but only initials (or part of the name) agree"
    )
    papers = [
        _johns(1, "Z. Jiang", "Ada Lovelace"),
        _johns(2, "Zhida Jiang", "Ada Lovelace"),
        _johns(3, "Z. Jiang", "Alan Turing"),
    ]
    assert choose_basis(papers, "Z. Jiang", 2.0).taken == {"2601.00001", "2601.00002"}


def test_no_clear_winner_holds_everything_for_review() -> None:
    """Three papers against two is not twice as many: nothing is taken."""
    papers = [
        _paper(1, "Ada Lovelace"),
        _paper(2, "Ada Lovelace"),
        _paper(3, "Ada Lovelace"),
        _paper(4, "Alan Turing"),
        _paper(5, "Alan Turing"),
    ]
    basis = choose_basis(papers, ME, 2.0)
    assert basis.taken == frozenset()
    assert basis.needs_review
    assert set(basis.reasons) == {r.arxiv_id for r in papers}
    reason = basis.reasons["2601.00001"]
    assert reason.startswith(NEEDS_REVIEW)
    assert "largest holds 3 papers, the next 2" in reason


def test_a_group_exactly_margin_times_the_next_is_the_basis() -> None:
    """Four papers against two, at basis_margin 2: "at least margin times" takes the four."""
    mine = [_paper(n, "Ada Lovelace") for n in (1, 2, 3, 4)]
    others = [_paper(5, "Alan Turing"), _paper(6, "Alan Turing")]
    basis = choose_basis([*mine, *others], ME, 2.0)
    assert basis.taken == {r.arxiv_id for r in mine}
    assert not basis.needs_review
    # Just under the margin, nothing is taken.
    assert choose_basis([*mine, *others], ME, 2.01).needs_review


def test_categories_break_a_tie_in_size() -> None:
    """Two groups of one: the one in the field most papers share ranks first."""
    papers = [
        _paper(1, "Emmy Noether", category="math.AG"),
        _paper(2, "Ada Lovelace", category="cs.LG"),
        _paper(3, category="cs.LG"),
        _paper(4, category="cs.LG"),
    ]
    groups = coauthor_groups(papers, ME)
    assert groups[0][0].arxiv_id == "2601.00002"
    assert groups[-1][0].arxiv_id == "2601.00001"


_PEOPLE = ["Ada Lovelace", "Alan Turing", "Emmy Noether", "Mary Somerville", "K. Zhang", ME]
_papers = st.lists(
    st.tuples(
        st.lists(st.sampled_from(_PEOPLE), max_size=3, unique=True),
        st.sampled_from(["cs.LG", "math.AG", "hep-th"]),
    ),
    max_size=12,
).map(lambda rows: [_paper(i + 1, *names, category=c) for i, (names, c) in enumerate(rows)])


def _others(record: Record) -> set[str]:
    return {normalize_name(n) for n in record.authors if not could_be(n, ME)}


@settings(max_examples=examples(200))
@given(_papers, st.floats(min_value=1.0, max_value=5.0), st.randoms(use_true_random=False))
def test_basis_properties(papers: list[Record], margin: float, rng: random.Random) -> None:
    """Every paper is taken or held with a reason; the basis shares no co-author with the
    rest; it is at least ``margin`` times any other group; the input order changes nothing."""
    basis = choose_basis(papers, ME, margin)
    ids = {r.arxiv_id for r in papers}
    assert basis.taken | set(basis.reasons) == ids
    assert not basis.taken & set(basis.reasons)
    taken = [r for r in papers if r.arxiv_id in basis.taken]
    held = [r for r in papers if r.arxiv_id not in basis.taken]
    names_in_basis = set().union(*(_others(r) for r in taken))
    if basis.taken:
        assert all(not _others(r) & names_in_basis for r in held)
        for group in coauthor_groups(papers, ME)[1:]:
            assert len(taken) >= margin * len(group)
    shuffled = list(papers)
    rng.shuffle(shuffled)
    assert choose_basis(shuffled, ME, margin) == basis
