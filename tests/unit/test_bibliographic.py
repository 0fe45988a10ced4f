"""The bibliographic score: realistic pairs land where they should, and its parts behave."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncd.domain.bibliographic import (
    YEAR_WINDOW,
    author_share,
    normalize_title,
    score_work,
    title_similarity,
    year_gap,
)
from syncd.domain.publications import MatchLevel, PublicationSource, Work
from syncd.domain.record import Record

CHEMCROW = (
    "Andres M. Bran",
    "Sam Cox",
    "Oliver Schilter",
    "Carlo Baldassari",
    "Andrew D. White",
    "Philippe Schwaller",
)
RL = ("Ana Silva", "Ben Okafor", "Chen Li", "Dana Ivanova")
TRANSFORMER = ("Ashish Vaswani", "Noam Shazeer", "Niki Parmar")


def preprint(title: str, authors: tuple[str, ...], first_version: str) -> Record:
    return Record(
        arxiv_id="2304.05376",
        version=1,
        title=title,
        authors=authors,
        authors_complete=True,
        published=f"{first_version}T09:00:00Z",
    )


def work(title: str, authors: tuple[str, ...], year: int | None) -> Work:
    return Work(
        source=PublicationSource.CROSSREF,
        doi="10.1038/s42256-024-00832-8",
        title=title,
        authors=authors,
        year=year,
        date=None,
        venue="Nature Machine Intelligence",
        type="journal-article",
    )


# (what the pair is, the preprint, the work it is scored against)
TRUE_MATCHES = [
    (
        "a name prefix dropped on publication",
        preprint(
            "ChemCrow: Augmenting large-language models with chemistry tools",
            CHEMCROW,
            "2023-04-11",
        ),
        work("Augmenting large language models with chemistry tools", CHEMCROW, 2024),
    ),
    (
        "a changed subtitle, a name written Family, Given, an accent dropped",
        preprint(
            "Graph Neural Networks for Materials Discovery: A Benchmark Study",
            ("Wei Zhang", "Maria Rossi", "Kristof T. Schütt"),
            "2022-10-03",
        ),
        work(
            "Graph neural networks for materials discovery: benchmarks and best practices",
            ("Wei Zhang", "Rossi, Maria", "Kristof T. Schutt"),
            2023,
        ),
    ),
    (
        "TeX on arXiv, markup at the publisher, initials, a hyphen, a Polish letter",
        preprint(
            r"Half-integer thermal Hall effect in $\alpha$-RuCl$_3$ from Majorana edge modes",
            ("Yuji Matsuda", "José García-Pérez", "Łukasz Wójcik"),
            "2018-05-01",
        ),
        work(
            "Half-integer thermal Hall effect in <i>α</i>-RuCl<sub>3</sub> "  # noqa: RUF001
            "from Majorana edge modes",
            ("Y. Matsuda", "Jose Garcia Perez", "Lukasz Wojcik"),
            2018,
        ),
    ),
    (
        "an author added by the journal, Towards/Toward",
        preprint("Towards a Theory of Generalization in Reinforcement Learning", RL, "2021-02-01"),
        work(
            "Toward a theory of generalization in reinforcement learning",
            (*RL, "Eli Cohen"),
            2022,
        ),
    ),
    (
        "British and American spelling, pre-training and pretraining",
        preprint(
            "Optimising Pre-Training Data Mixtures for Language Models",
            RL[:2],
            "2024-06-01",
        ),
        work("Optimizing pretraining data mixtures for language models", RL[:2], 2025),
    ),
]
NEAR_MISSES = [
    (
        "the same title by other authors",
        preprint("Attention Is All You Need", TRANSFORMER, "2017-06-12"),
        work("Attention is all you need", ("Maria Rossi", "Wei Zhang"), 2018),
    ),
    (
        "a title rewritten, the same authors",
        preprint(
            "Learning to Simulate Complex Physics with Graph Networks",
            ("Alvaro Sanchez-Gonzalez", "Jonathan Godwin", "Peter Battaglia"),
            "2020-02-21",
        ),
        work(
            "Simulating complex physics with learned graph networks",
            ("Alvaro Sanchez-Gonzalez", "Jonathan Godwin", "Peter Battaglia"),
            2020,
        ),
    ),
    (
        "the same title, half the authors in common",
        preprint("Towards a Theory of Generalization in Reinforcement Learning", RL, "2021-02-01"),
        work(
            "Towards a theory of generalization in reinforcement learning",
            (*RL[:2], "Farid Haddad", "Gina Moretti"),
            2022,
        ),
    ),
]
UNRELATED = [
    (
        "the same group's other paper on the same subject",
        preprint(
            "ChemCrow: Augmenting large-language models with chemistry tools",
            CHEMCROW,
            "2023-04-11",
        ),
        work(
            "Assessment of chemistry knowledge in large language models that generate code",
            ("Andrew D. White", "Glen M. Hocky", "Heta A. Gandhi"),
            2023,
        ),
    ),
    (
        "the same authors' other paper sharing most words",
        preprint(
            "Self-Supervised Learning of Pretext-Invariant Representations",
            ("Ishan Misra", "Laurens van der Maaten"),
            "2019-12-04",
        ),
        work(
            "Self-supervised learning of visual representations from video",
            ("Misra, Ishan", "van der Maaten, Laurens"),
            2020,
        ),
    ),
    (
        "a reply with the title and a 'not', by others",
        preprint("Attention Is All You Need", TRANSFORMER, "2017-06-12"),
        work("Attention is not all you need", ("Yihe Dong", "Jean-Baptiste Cordonnier"), 2021),
    ),
    (
        "the same series name before a colon",
        preprint(
            "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
            ("Jacob Devlin", "Ming-Wei Chang"),
            "2018-10-11",
        ),
        work(
            "BERT: a review of applications in natural language processing",
            ("Jacob Devlin",),
            2020,
        ),
    ),
    (
        "the same title and authors six years on",
        preprint("Attention Is All You Need", TRANSFORMER, "2017-06-12"),
        work("Attention is all you need", TRANSFORMER, 2023),
    ),
]


def _ids(cases: list[tuple[str, Record, Work]]) -> list[str]:
    return [case[0] for case in cases]


@pytest.mark.parametrize(("what", "record", "found"), TRUE_MATCHES, ids=_ids(TRUE_MATCHES))
def test_a_true_match_scores_at_least_0_9(what: str, record: Record, found: Work) -> None:
    assert score_work(record, found).score >= 0.9, what


@pytest.mark.parametrize(("what", "record", "found"), NEAR_MISSES, ids=_ids(NEAR_MISSES))
def test_a_near_miss_is_held_for_review(what: str, record: Record, found: Work) -> None:
    assert 0.6 <= score_work(record, found).score < 0.9, what


@pytest.mark.parametrize(("what", "record", "found"), UNRELATED, ids=_ids(UNRELATED))
def test_an_unrelated_paper_scores_below_0_6(what: str, record: Record, found: Work) -> None:
    assert score_work(record, found).score < 0.6, what


def test_the_evidence_keeps_the_parts_and_follows_the_formula() -> None:
    _, record, found = TRUE_MATCHES[3]  # one author added, Towards/Toward
    evidence = score_work(record, found)
    assert evidence.level is MatchLevel.BIBLIOGRAPHIC
    assert evidence.source is PublicationSource.CROSSREF
    assert evidence.how == "crossref-search"
    assert evidence.author_share == round(2 * 4 / (4 + 5), 3)
    assert evidence.year_gap == 1
    assert evidence.title_similarity is not None
    assert 0.95 < evidence.title_similarity < 1.0
    above_chance = 2 * evidence.title_similarity - 1
    assert evidence.score == round(above_chance * (0.6 + 0.4 * evidence.author_share), 3)


def test_a_title_alone_scores_0_6() -> None:
    _, record, found = NEAR_MISSES[0]
    evidence = score_work(record, found)
    assert (evidence.title_similarity, evidence.author_share, evidence.score) == (1.0, 0.0, 0.6)


@pytest.mark.parametrize(
    ("markup", "plain"),
    [
        ("<i>In situ</i> RuCl<sub>3</sub> &amp; more", r"\emph{In situ} RuCl$_3$ \& more"),
        (
            '<mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML"><mml:mi>α</mml:mi>'  # noqa: RUF001
            "</mml:math>-decay",
            r"$\alpha$-decay",
        ),
        ("Ångström-scale Naïve Bayes", r"\AA ngstr\"om scale Na\"ive Bayes"),
        ("Fig.~1 versus a<b", "FIG. 1 VERSUS A < B"),
    ],
)
def test_markup_and_tex_leftovers_read_the_same(markup: str, plain: str) -> None:
    assert normalize_title(markup) == normalize_title(plain)
    assert normalize_title(markup)


def test_a_colon_inside_markup_does_not_split_a_title() -> None:
    title = '<mml:math xmlns:mml="x"><mml:mi>x</mml:mi></mml:math> ray bursts from magnetars'
    assert title_similarity(title, "X ray bursts from magnetars") == 1.0


def test_a_short_part_before_a_colon_does_not_count() -> None:
    assert title_similarity("BERT: one thing", "BERT: quite another") < 0.9


@pytest.mark.parametrize(
    ("ours", "theirs", "share"),
    [
        (("Andrew D. White",), ("White, Andrew",), 1.0),
        (("Vincent van Gogh",), ("van Gogh, Vincent",), 1.0),
        (("John Smith Jr.",), ("J. Smith",), 1.0),
        (("José García-Pérez",), ("Jose Garcia-Perez",), 1.0),
        (("Jean-Pierre Serre",), ("J.-P. Serre",), 1.0),
        (("Wei Zhang",), ("Zhang",), 1.0),  # a family name alone
        (("Wei Zhang",), ("Li Zhang",), 0.0),  # another initial
        (("Wei Zhang", "Wei Zhang"), ("W. Zhang",), 2 / 3),  # one name pairs once
        ((), ("W. Zhang",), 0.0),
    ],
)
def test_authors_in_common(ours: tuple[str, ...], theirs: tuple[str, ...], share: float) -> None:
    assert author_share(ours, theirs) == pytest.approx(share)


def test_the_year_gap_counts_from_the_first_version() -> None:
    record = preprint("T", RL, "2021-12-31")
    assert year_gap(record, work("T", RL, 2020)) == -1
    assert year_gap(record, work("T", RL, None)) is None
    assert year_gap(Record(title="T"), work("T", RL, 2020)) is None


def test_an_unknown_year_rules_nothing_out() -> None:
    _, record, found = TRUE_MATCHES[0]
    evidence = score_work(record, work(found.title, found.authors, None))
    assert evidence.year_gap is None
    assert evidence.score == 1.0


names = st.sampled_from(
    [*CHEMCROW, *RL, *TRANSFORMER, "Bran, Andres", "A. White", "Zhang", "", "Łukasz Wójcik"]
)
titles = st.one_of(
    st.sampled_from([case[1].title or "" for case in TRUE_MATCHES + UNRELATED]),
    st.text(max_size=80),
)


@given(titles, st.lists(names, max_size=6), st.integers(min_value=1990, max_value=2040))
def test_a_score_is_between_0_and_1(title: str, authors: list[str], year: int) -> None:
    _, record, _ = TRUE_MATCHES[0]
    evidence = score_work(record, work(title, tuple(authors), year))
    assert 0.0 <= evidence.score <= 1.0
    gap = year - 2023
    if not YEAR_WINDOW[0] <= gap <= YEAR_WINDOW[1]:
        assert evidence.score == 0.0


@given(titles, titles)
def test_title_similarity_is_symmetric_and_bounded(first: str, second: str) -> None:
    similarity = title_similarity(first, second)
    assert similarity == title_similarity(second, first)
    assert 0.0 <= similarity <= 1.0


@given(titles)
def test_a_title_is_like_itself_and_normalised_once(title: str) -> None:
    normalised = normalize_title(title)
    assert normalize_title(normalised) == normalised
    assert title_similarity(title, title) == (1.0 if normalised else 0.0)


@given(st.lists(names, max_size=8), st.lists(names, max_size=8))
def test_author_share_is_a_share(first: list[str], second: list[str]) -> None:
    assert 0.0 <= author_share(first, second) <= 1.0


@given(st.lists(names.filter(bool), min_size=1, max_size=8))
def test_a_list_shares_all_its_authors_with_itself(authors: list[str]) -> None:
    assert author_share(authors, authors) == 1.0
