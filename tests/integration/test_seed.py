"""syncd seed: the snapshot, idempotence, and malformed seed files."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from syncd.sources import seeds
from syncd.sources.seeds import SeedDocument
from tests.integration.conftest import SEEDS, Syncd
from tests.scenario import CALIBRATION_KEY


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
    history = syncd.json("history", CALIBRATION_KEY)
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


def test_unchanged_seeds_are_parsed_once_per_process(
    syncd: Syncd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Later cycles reuse the parsed seeds; a file whose bytes change is parsed again."""
    # Fresh paths, so nothing another test parsed in this process is reused.
    copies = tuple(Path(shutil.copy(source, tmp_path / source.name)) for source in SEEDS)
    syncd.seeds = copies
    parsed: list[Path] = []
    parse = seeds.parse_seed_file

    def counting(path: Path) -> SeedDocument:
        parsed.append(path)
        return parse(path)

    monkeypatch.setattr(seeds, "parse_seed_file", counting)
    for command in ("sync", "sync", "seed"):
        assert syncd(command).code == 0
    assert parsed == list(copies)
    # Same size and the same mtime: only the bytes tell this file changed.
    before = copies[1].stat()
    data = copies[1].read_bytes()
    copies[1].write_bytes(data.replace(b"the", b"thE", 1))
    os.utime(copies[1], ns=(before.st_atime_ns, before.st_mtime_ns))
    assert copies[1].stat().st_size == before.st_size
    assert syncd("sync").code == 0
    assert parsed == [*copies, *copies]
