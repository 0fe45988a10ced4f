"""Withdrawal detection: arXiv's notice decides, a word in the comment does not.

The notices come from arXiv's own test data, each case naming its paper and
where it is: ``abs_files`` are the ``.abs`` files of arXiv/arxiv-browse
(``tests/data/abs_files``, with each version's size and flags), ``browse.db``
is arXiv/oaipmh's ``tests/data/browse.db`` (every version's abstract,
comment and source format), and ``tests/fixtures/arxiv-real/oai`` holds the
``ListRecords`` pages arXiv's own OAI-PMH code wrote from that database.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from syncd.domain.withdrawal import (
    NOT_WITHDRAWN,
    Withdrawal,
    detect_withdrawal,
    source_type_verdict,
)
from syncd.sources.arxiv import parse_feed
from syncd.sources.oai import parse_page

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
REAL_OAI = FIXTURES / "arxiv-real" / "oai"

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
    # Notice forms of arXiv's test data (issue 29), every one flagged I there.
    # abs_files 0704.0480v2: no "this", no "has been", in the comment and the abstract.
    ("paper withdrawn by author", ABSTRACT, "paper withdrawn by author", AUTHOR),
    (
        "paper withdrawn due to",
        "paper withdrawn due to the possible error in numerical eigenfunction\ncalculation",
        None,
        AUTHOR,
    ),
    # abs_files 0704.0525v2: the comment opens with the participle.
    (
        "withdrawn by arXiv administrators",
        "  This paper has been removed by arXiv administrators because it plagiarizes"
        " gr-qc/0410004, gr-qc/0603075, and others.",
        "withdrawn by arXiv administrators due to plagiarism. See\n"
        "  http://arxiv.org/new/withdrawals.aug.07.html",
        ADMIN,
    ),
    # abs_files 2101.10016v8: "This" without a noun.
    (
        "this has been withdrawn",
        ABSTRACT,
        "This has been withdrawn by arXiv administrators due to an\n"
        "  unresolvable authorship dispute",
        ADMIN,
    ),
    # browse.db and arxiv-real 0903.0442v5: the notice starts the comment's second sentence.
    (
        "mid-comment",
        ABSTRACT,
        "5 pages, 1 figures. This paper has been withdrawn by the author due to emphasis"
        " of the other articles of the author",
        AUTHOR,
    ),
    # browse.db and arxiv-real 1101.6031v2: a plural verb, and a comment of one word.
    ("have been withdrawn", "This paper and abstract have been withdrawn.", None, AUTHOR),
    ("comment withdrawn", ABSTRACT, "Withdrawn", AUTHOR),
    # Issue 29's review: the plural subject.
    ("these papers", "These papers have been withdrawn by the authors.", None, AUTHOR),
    # browse.db and arxiv-real cond-mat/0703772v2: "The paper".
    (
        "the paper",
        ABSTRACT,
        "The paper has been withdrawn by the author due to the crucial error in maximum"
        " entropy method calculation",
        AUTHOR,
    ),
    # abs_files 0704.0615v3: "papers" with "has".
    ("this papers", ABSTRACT, "This papers has been withdrawn", AUTHOR),
    # abs_files 0704.0213v2: a notice whose reason holds "has been" again.
    (
        "this article",
        ABSTRACT,
        "This article has been withdrawn because it has been merged with the\n"
        "  earlier article (GCT3) in the series",
        AUTHOR,
    ),
    # Sentences that mention a withdrawal and announce none (issue 29's review).
    (
        "drug in a later sentence",
        ABSTRACT,
        "12 pages. Rofecoxib has been withdrawn from the market.",
        NOT_WITHDRAWN,
    ),
    (
        "drugs, plural",
        "These drugs have been withdrawn from the market; we model their adverse events.",
        None,
        NOT_WITHDRAWN,
    ),
    (
        "another paper in a later sentence",
        ABSTRACT,
        "12 pages. The paper arXiv:2101.00001 has been withdrawn; this one replaces it",
        NOT_WITHDRAWN,
    ),
    (
        "which has been withdrawn",
        ABSTRACT,
        "12 pages. This paper replaces arXiv:2101.00001, which has been withdrawn",
        NOT_WITHDRAWN,
    ),
    # A bare "Withdrawn" counts only where a text opens: later it is about a part.
    (
        "bare word in a later sentence",
        ABSTRACT,
        "v2 corrects Lemma 3. Withdrawn: the bound of Theorem 2",
        NOT_WITHDRAWN,
    ),
    ("bare word from a venue", ABSTRACT, "Paper withdrawn from ICML 2020", NOT_WITHDRAWN),
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


# Versions arXiv flags I whose text announces no withdrawal: only the flag tells,
# so the API and the author feeds read them as not withdrawn.  None is a
# latest version, the only one arXivRaw gives the text of.
FLAGGED_WITHOUT_NOTICE = [
    # browse.db 0908.3762v2: the comment says "under revision", not "withdrawn".
    ("0908.3762v2", "This paper is currently under revision"),
    # browse.db 0908.3762v4: "withdrawn" after another clause's colon, where the rule
    # does not read a bare participle ("Withdrawn: the bound of Theorem 2" is about a part).
    ("0908.3762v4", "Under revision: withdrawn after persistent problems with Lemma 2.20"),
    # abs_files 0704.0615v2: I means "no files"; an administrator removed an upload.
    ("0704.0615v2", "Unintended file upload removed by arXiv admin"),
    # abs_files adap-org/9509003v1 (and astro-ph/9709175v2, physics/9707012v2 and v3,
    # funct-an/9301001v1): versions replaced before arXiv kept every version.
    (
        "adap-org/9509003v1",
        "This version (adap-org/9509003v1) was not stored by arXiv. A\n"
        "  subsequent replacement was made before versioning was introduced.",
    ),
]


@pytest.mark.parametrize(
    "comment", [pytest.param(c, id=name) for name, c in FLAGGED_WITHOUT_NOTICE]
)
def test_a_flag_without_a_notice_is_left_to_the_flag(comment: str) -> None:
    """A version arXiv flags I whose text announces nothing is withdrawn only by the flag."""
    assert detect_withdrawal(ABSTRACT, comment) == NOT_WITHDRAWN
    assert detect_withdrawal(ABSTRACT, comment, authoritative=True) == Withdrawal(True, None)


# The records of the real arXivRaw page whose latest version is flagged I, and who
# withdrew each by its text.
PAGE_FLAGGED = {
    "0901.3666": "author",
    "0903.0442": "author",
    "1101.6031": "author",
    "1102.0219": "author",
    "cond-mat/0703772": "author",
}
# Records of that page whose text the rule reads otherwise than arXiv's flag, with
# the reason.  None: the disagreements of the rest of arXiv's test data, versions
# not on the page, are FLAGGED_WITHOUT_NOTICE above.
PAGE_DISAGREEMENTS: dict[str, str] = {}


class TestArxivTestData:
    """The text rule over every abstract and comment of arXiv's test data we ship."""

    def test_the_text_agrees_with_the_arxivraw_flags(self) -> None:
        """On the arXivRaw page arXiv's own code wrote, the text alone finds the flagged versions.

        arXiv's OAI-PMH writes ``I`` for every version stored as withdrawn, so
        a latest version without it is one arXiv does not call withdrawn.
        """
        body = (REAL_OAI / "ListRecords_arXivRaw_page1.xml").read_bytes()
        records = parse_page(body).records
        flagged = {r.arxiv_id for r in records if source_type_verdict(r.latest.source_type)}
        read = {
            r.arxiv_id: verdict.by
            for r in records
            if (verdict := detect_withdrawal(r.abstract, r.comments)).withdrawn
        }
        assert len(records) == 200
        assert flagged == set(PAGE_FLAGGED)
        assert flagged ^ set(read) == set(PAGE_DISAGREEMENTS)
        assert {i: read[i] for i in flagged & set(read)} == PAGE_FLAGGED

    def test_the_utf8_twin_agrees_too(self) -> None:
        """The same records in arXiv's ``arXiv`` format, text in UTF-8 as the API serves it."""
        root = etree.parse(REAL_OAI / "ListRecords_arXiv_page1.xml").getroot()
        namespace = "{http://arxiv.org/OAI/arXiv/}"
        entries = list(root.iter(f"{namespace}arXiv"))
        read = {
            e.findtext(f"{namespace}id")
            for e in entries
            if detect_withdrawal(
                e.findtext(f"{namespace}abstract"), e.findtext(f"{namespace}comments")
            ).withdrawn
        }
        assert len(entries) == 200
        assert read ^ set(PAGE_FLAGGED) == set(PAGE_DISAGREEMENTS)

    @pytest.mark.parametrize(
        "name",
        [
            "query_all-testing_start0_max100.xml",
            "query_all-testing_start10_max10.xml",
            "single_affiliations_journalref_oldstyle_id.xml",
        ],
    )
    def test_recorded_api_answers_raise_no_false_alarm(self, name: str) -> None:
        """No entry of the recorded API answers (none withdrawn) reads as a withdrawal."""
        records = parse_feed((FIXTURES / "arxiv-api" / name).read_bytes()).records
        assert records
        assert [
            r.arxiv_id for r in records if detect_withdrawal(r.abstract, r.comment).withdrawn
        ] == []
