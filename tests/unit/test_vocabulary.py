"""Tests for syncd.domain.vocabulary's RevisionSource: the one writer and reader of sources."""

from __future__ import annotations

import pytest

from syncd.domain.vocabulary import RevisionSource, source_label


@pytest.mark.parametrize(
    ("source", "stored"),
    [
        (RevisionSource.arxiv(), "arxiv"),
        (RevisionSource.backfilled(2), "arxiv:v2"),
        (RevisionSource.seed("000_bae548b29664adf4.txt"), "seed:000_bae548b29664adf4.txt"),
    ],
)
def test_sources_are_stored_as_before_and_read_back(source: RevisionSource, stored: str) -> None:
    """The stored strings are those revisions always carried; parsing gives the source back."""
    assert str(source) == stored
    assert RevisionSource.parse(stored) == source


@pytest.mark.parametrize("stored", ["", "arXiv", "arxiv:", "arxiv:v", "arxiv:vx", "arxiv:v\u0661"])
def test_strings_syncd_never_writes_are_no_source(stored: str) -> None:
    """Anything else is not a source (an Arabic-Indic digit is not a version number)."""
    assert RevisionSource.parse(stored) is None


@pytest.mark.parametrize(
    ("stored", "version", "label"),
    [
        ("seed:page.txt", None, "seed document page.txt"),
        ("arxiv", 2, "arXiv v2, seen by a sync"),
        ("arxiv", None, "arXiv, by a sync"),
        ("arxiv:v1", 1, "arXiv v1, fetched later for the history"),
        ("something else", 3, "something else"),
    ],
)
def test_labels_are_the_pages_wording(stored: str, version: int | None, label: str) -> None:
    """The pages' labels: where a revision was read, in words; an unknown source as stored."""
    assert source_label(stored, version) == label
