"""syncd seed: the snapshot, idempotence, and malformed seed files."""

from __future__ import annotations

from pathlib import Path

from tests.integration.conftest import SEEDS, Syncd

CALIBRATION = "rethinking-calibration-for-high-sparsity-llm"


def test_seed_imports_the_snapshot(syncd: Syncd) -> None:
    """Nine unlinked papers, authors known (truncated) for the five of 001, no events."""
    outcome = syncd("seed")
    assert outcome.code == 0, outcome.err
    papers = syncd.papers()
    assert len(papers) == 9
    assert {p["status"] for p in papers.values()} == {"unlinked"}
    with_authors = [p for p in papers.values() if p["authors"]]
    assert len(with_authors) == 5
    assert not any(p["authors_complete"] for p in with_authors)
    assert syncd.json("events") == []


def test_calibration_paper_has_both_abstracts(syncd: Syncd) -> None:
    """The calibration paper's history shows the abstract change between the seed documents."""
    syncd("seed")
    history = syncd.json("history", CALIBRATION)
    assert [h["seq"] for h in history] == [1, 2]
    assert [h["source"] for h in history] == [
        "seed:000_bae548b29664adf4.txt",
        "seed:001_486f742ac3512806.txt",
    ]
    assert history[0]["record"]["abstract"] != history[1]["record"]["abstract"]
    assert "abstract" in history[1]["kinds"]
    assert history[1]["changes"]["abstract"]["old"] == history[0]["record"]["abstract"]


def test_seed_is_idempotent(syncd: Syncd) -> None:
    """A second seed adds nothing."""
    syncd("seed")
    before = syncd.counts()
    outcome = syncd("seed")
    assert outcome.code == 0
    assert "0 seed papers imported" in outcome.out
    assert syncd.counts() == before
    assert len(syncd.papers()) == 9


def test_malformed_seed_file_fails_whole(syncd: Syncd, tmp_path: Path) -> None:
    """A malformed seed names its file and line, exits 2, and nothing is half-imported."""
    bad = tmp_path / "broken.txt"
    text = SEEDS[0].read_text(encoding="utf-8")
    bad.write_text(text[: text.index("cs.LG↗")], encoding="utf-8")
    syncd.seeds = (SEEDS[1], bad)
    outcome = syncd("seed")
    assert outcome.code == 2
    assert "broken.txt:" in outcome.err
    assert syncd.counts()["revisions"] == 0
    assert syncd.papers() == {}
