"""Withdrawal detection: arXiv's notice decides, a word in the comment does not."""

from __future__ import annotations

import pytest

from syncd.domain.withdrawal import (
    NOT_WITHDRAWN,
    Withdrawal,
    detect_withdrawal,
    source_type_verdict,
)

AUTHOR = Withdrawal(True, "author")
ADMIN = Withdrawal(True, "admin")
ABSTRACT = "We pipeline nested embedding lookups across GPUs and cut training time by 40%."

# (case, abstract, comment, expected): real-shaped versions of arXiv entries.
CASES = [
    # The three false alarms of issue 15: ordinary comments of new versions.
    ("supersedes", ABSTRACT, "Supersedes the withdrawn arXiv:2101.00001; 12 pages", NOT_WITHDRAWN),
    (
        "claim restored",
        ABSTRACT,
        "v2: the claim withdrawn in v1 is restored with a new proof",
        NOT_WITHDRAWN,
    ),
    (
        "workshop version",
        ABSTRACT,
        "Our earlier workshop version was withdrawn from the proceedings; this is the full paper",
        NOT_WITHDRAWN,
    ),
    # The four notice forms arXiv puts at the opening of the summary.
    ("by person", "This paper has been withdrawn by Zhida Jiang", None, AUTHOR),
    ("bracketed", "[This paper has been withdrawn by the authors.]", None, AUTHOR),
    (
        "submission",
        "This submission has been withdrawn at the request of the author.",
        "The main theorem relies on a false lemma.",
        AUTHOR,
    ),
    (
        "admin note",
        "arXiv admin note: this paper has been withdrawn by arXiv administrators because it"
        " was submitted without the consent of its co-authors.",
        None,
        ADMIN,
    ),
    (
        "by administrators",
        "This submission has been withdrawn by arXiv administrators.",
        None,
        ADMIN,
    ),
    # The reason in the comment, without the word: the abstract's notice decides.
    ("reason only", "This paper has been withdrawn.", "A sign error in Eq. (3).", AUTHOR),
    # Before 2023 the notice opened the comment and the abstract stayed.
    (
        "comment opens",
        ABSTRACT,
        "This paper has been withdrawn by the author due to an error",
        AUTHOR,
    ),
    # arXiv appends admin notes to a comment; one that withdraws counts.
    (
        "appended admin note",
        ABSTRACT,
        "12 pages. arXiv admin note: this submission has been withdrawn by arXiv administrators",
        ADMIN,
    ),
    # Admin notes that are not withdrawals.
    (
        "text overlap",
        ABSTRACT,
        "arXiv admin note: text overlap with arXiv:2101.00001",
        NOT_WITHDRAWN,
    ),
    (
        "duplicate",
        ABSTRACT,
        "arXiv admin note: this submission duplicates arXiv:2101.00001, which has been withdrawn",
        NOT_WITHDRAWN,
    ),
    (
        "substantial overlap",
        ABSTRACT,
        "10 pages; arXiv admin note: substantial text overlap with arXiv:2101.00001",
        NOT_WITHDRAWN,
    ),
    # Papers about withdrawal, of drugs from a market.
    (
        "drugs",
        "This paper studies drugs withdrawn from the market after approval, and the withdrawal"
        " of rofecoxib in particular.",
        "Withdrawn drugs dataset included",
        NOT_WITHDRAWN,
    ),
    (
        "drug clause",
        "This paper shows that rofecoxib has been withdrawn for cardiovascular risk.",
        None,
        NOT_WITHDRAWN,
    ),
    ("from a venue", ABSTRACT, "This paper has been withdrawn from ICLR 2024.", NOT_WITHDRAWN),
    ("from arXiv", "This paper has been withdrawn from arXiv by its author.", None, AUTHOR),
    # The old backend hard-wrapped the summary: two leading spaces, line breaks.
    (
        "wrapped",
        "  This paper has been\nwithdrawn by the author due to a\ncrucial error in Lemma 2\n",
        None,
        AUTHOR,
    ),
    (
        "wrapped admin",
        "  arXiv admin note: this\npaper has been withdrawn by\narXiv administrators\n",
        None,
        ADMIN,
    ),
    ("other subject", "The following manuscript has been withdrawn.", None, AUTHOR),
    ("next sentence", "This paper is new. It has been withdrawn elsewhere.", None, NOT_WITHDRAWN),
    # A notice clause that does not open the text: about another version, not this one.
    (
        "earlier version",
        "The earlier version of this paper has been withdrawn; this one corrects Lemma 2.",
        None,
        NOT_WITHDRAWN,
    ),
    (
        "earlier version in the comment",
        ABSTRACT,
        "The earlier version of this paper has been withdrawn; this one corrects Lemma 2",
        NOT_WITHDRAWN,
    ),
    # The admin lead-in alone makes it the administrators', with no "by arXiv ..." after.
    (
        "admin lead-in only",
        "arXiv admin note: this paper has been withdrawn due to a dispute over authorship",
        None,
        ADMIN,
    ),
    (
        "appended admin lead-in only",
        ABSTRACT,
        "9 pages. arXiv admin note: this paper has been withdrawn due to a dispute over authorship",
        ADMIN,
    ),
    ("ordinary", ABSTRACT, "12 pages, 4 figures", NOT_WITHDRAWN),
    ("nothing", None, None, NOT_WITHDRAWN),
]


@pytest.mark.parametrize(
    ("abstract", "comment", "expected"),
    [pytest.param(a, c, e, id=name) for name, a, c, e in CASES],
)
def test_detect_withdrawal(abstract: str | None, comment: str | None, expected: Withdrawal) -> None:
    """Each real-shaped case gets exactly the verdict and withdrawer arXiv's notice gives."""
    assert detect_withdrawal(abstract, comment) == expected


def test_authoritative_verdict_overrides_the_text() -> None:
    """An authoritative verdict decides whether; the text still says who."""
    notice = "This paper has been withdrawn by arXiv administrators."
    assert detect_withdrawal(notice, None, authoritative=False) == NOT_WITHDRAWN
    assert detect_withdrawal(notice, None, authoritative=True) == ADMIN
    assert detect_withdrawal(ABSTRACT, None, authoritative=True) == Withdrawal(True, None)


def test_comment_or_abstract_marks_a_withdrawal() -> None:
    """A withdrawal comment or replaced abstract marks a withdrawal; a mere mention does not."""
    assert detect_withdrawal(None, "This paper has been withdrawn by the authors").withdrawn
    assert detect_withdrawal("This paper has been withdrawn due to an error.", None).withdrawn
    assert not detect_withdrawal("We study withdrawal symptoms.", "12 pages, 4 figures").withdrawn
    assert not detect_withdrawal(
        None, "Supersedes the withdrawn arXiv:2101.00001; 12 pages"
    ).withdrawn


@pytest.mark.parametrize(
    ("source_type", "verdict"), [("I", True), ("AI", True), ("D", False), ("", False), (None, None)]
)
def test_source_type_verdict(source_type: str | None, verdict: bool | None) -> None:
    """arXivRaw's source flag I marks a withdrawn version; no flag, no verdict."""
    assert source_type_verdict(source_type) is verdict
