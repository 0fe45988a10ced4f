"""The paper object of `syncd papers --json` and the API, from a paper and its details."""

from __future__ import annotations

from datetime import UTC, datetime

from syncd.domain.model import Paper, PaperDetails, VersionDate
from syncd.domain.record import Record
from syncd.domain.views import paper_json
from syncd.domain.vocabulary import Origin, PaperStatus

V1 = datetime(2026, 1, 5, 12, tzinfo=UTC)


def _paper(record: Record) -> Paper:
    return Paper(
        id=1,
        author="Zhida Jiang",
        key=record.arxiv_id or "key",
        arxiv_id=record.arxiv_id,
        status=PaperStatus.TRACKED,
        origin=Origin.ARXIV,
        record=record,
        record_hash="",
        absent_syncs=0,
        claimed=True,
    )


def test_the_primary_category_comes_first_once() -> None:
    """arXiv may list the primary category anywhere among the others, or not at all."""
    listed = Record(
        arxiv_id="2601.00001",
        version=1,
        primary_category="cs.LG",
        categories=("math.CO", "cs.LG", "stat.ML"),
    )
    unlisted = Record(
        arxiv_id="2601.00001", version=1, primary_category="cs.LG", categories=("math.CO",)
    )
    details = PaperDetails((), ())
    assert paper_json(_paper(listed), details)["categories"] == ["cs.LG", "math.CO", "stat.ML"]
    assert paper_json(_paper(unlisted), details)["categories"] == ["cs.LG", "math.CO"]
    assert paper_json(_paper(Record(arxiv_id="2601.00001")), details)["categories"] == []


def test_details_and_the_withdrawal_are_carried() -> None:
    """Followed authors, versions (an unknown date is null), the claim; a notice in the comment."""
    record = Record(
        arxiv_id="2601.00001",
        version=2,
        abstract="An abstract.",
        withdrawn=True,
        withdrawn_by="admin",
        comment="This article has been withdrawn by arXiv administrators.",
    )
    details = PaperDetails(
        ("Ada Lovelace", "Zhida Jiang"), (VersionDate(1, V1), VersionDate(2, None))
    )
    shown = paper_json(_paper(record), details)
    assert shown["followed_authors"] == ["Ada Lovelace", "Zhida Jiang"]
    assert shown["versions"] == [
        {"version": 1, "date": "2026-01-05T12:00:00+00:00"},
        {"version": 2, "date": None},
    ]
    assert (shown["withdrawn"], shown["withdrawn_by"], shown["claimed"]) == (True, "admin", True)
    assert shown["withdrawal_notice"] == record.comment
    assert shown["abstract"] == "An abstract."
