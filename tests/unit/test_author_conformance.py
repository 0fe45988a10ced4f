"""Every real arXivRaw author string reads as arXiv's own parser reads it, but for listed reasons.

arXiv's reading comes from arXiv's code (``tests/fixtures/arxiv-real``, see
its README): the ``arXiv`` OAI format of the same records (``keyname``,
``forenames``, ``suffix``, made by ``parse_author_affil`` after ``tex2utf``)
and, where the corpus holds it, the oracle of ``parse_author_affil(tex2utf(
authors))`` over ``browse.db`` and the ``.abs`` files.  The API writes each
author "Forenames Keyname Suffix"; so is arXiv's reading written here.  Ours
is the harvester's: the string with single spaces, converted from TeX, split.

Every difference is in ``KNOWN``, with the reason: a new one fails, and so
does one that is gone.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from lxml import etree

from syncd.domain.author_list import split_authors
from syncd.domain.tex import tex_to_utf8
from syncd.sources.arxiv import clean_text

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "arxiv-real"
OAI = "oai"
MIN_AGREEMENT = 0.995


@dataclass(frozen=True)
class Difference:
    """Where syncd reads a record's authors otherwise than arXiv, and why."""

    source: str
    arxiv_id: str
    excerpt: str  # the part of the author string the difference comes from
    arxivs: tuple[str, ...]  # names only arXiv reads there
    ours: tuple[str, ...]  # names only syncd reads there
    why: str


KNOWN: list[Difference] = []

# What each source pairs: arXiv id -> (the author string as written, arXiv's reading).
Pairs = dict[str, tuple[str, tuple[str, ...]]]


def _api_name(keyname: str, forenames: str, suffix: str) -> str:
    return f"{forenames} {keyname} {suffix}".strip()


def _oai_pairs() -> Pairs:
    """Each record of the ``arXivRaw`` pages with the same record's ``arXiv`` authors."""
    written: dict[str, str] = {}
    for page in sorted((REAL / "oai").glob("ListRecords_arXivRaw_page*.xml")):
        for raw in etree.parse(page).iter("{*}arXivRaw"):
            written[raw.findtext("{*}id") or ""] = raw.findtext("{*}authors") or ""
    read: dict[str, tuple[str, ...]] = {}
    for page in sorted((REAL / "oai").glob("ListRecords_arXiv_page*.xml")):
        for record in etree.parse(page).iter("{*}arXiv"):
            read[record.findtext("{*}id") or ""] = tuple(
                _api_name(
                    author.findtext("{*}keyname") or "",
                    author.findtext("{*}forenames") or "",
                    author.findtext("{*}suffix") or "",
                )
                for author in record.iter("{*}author")
            )
    assert written and written.keys() == read.keys()
    return {arxiv_id: (written[arxiv_id], read[arxiv_id]) for arxiv_id in written}


def _oracle_pairs(path: Path) -> Pairs:
    """Each record of an oracle file: its ``authors`` and ``parse_author_affil(tex2utf(...))``."""
    records = json.loads(path.read_text(encoding="utf-8"))["records"]
    return {
        arxiv_id: (
            record["authors"],
            tuple(_api_name(*author[:3]) for author in record["authors_parsed_tex2utf"]),
        )
        for arxiv_id, record in records.items()
    }


SOURCES = [OAI, *(f"oracle/{path.name}" for path in sorted(REAL.glob("oracle/*.json")))]


@cache
def pairs(source: str) -> Pairs:
    return _oai_pairs() if source == OAI else _oracle_pairs(REAL / source)


def syncd_reading(written: str) -> tuple[str, ...]:
    """The harvester's reading of an author string."""
    return split_authors(tex_to_utf8(clean_text(written) or ""))


def difference(arxivs: tuple[str, ...], ours: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """The names only arXiv reads and the names only syncd reads, where the lists part."""
    only_arxiv: list[str] = []
    only_ours: list[str] = []
    matcher = difflib.SequenceMatcher(a=arxivs, b=ours, autojunk=False)
    for tag, a_from, a_to, b_from, b_to in matcher.get_opcodes():
        if tag != "equal":
            only_arxiv += arxivs[a_from:a_to]
            only_ours += ours[b_from:b_to]
    return tuple(only_arxiv), tuple(only_ours)


@pytest.mark.parametrize("source", SOURCES)
def test_reads_as_arxiv_but_for_the_known_differences(source: str) -> None:
    """Each record's authors read as arXiv reads them, but for the differences listed here."""
    found = {}
    for arxiv_id, (written, arxivs) in pairs(source).items():
        ours = syncd_reading(written)
        if ours != arxivs:
            found[arxiv_id] = difference(arxivs, ours)
    known = {d.arxiv_id: (d.arxivs, d.ours) for d in KNOWN if d.source == source}
    expected = {arxiv_id: known[arxiv_id] for arxiv_id in known.keys() & pairs(source).keys()}
    assert found == expected
    assert 1 - len(found) / len(pairs(source)) >= MIN_AGREEMENT


def test_each_known_difference_comes_from_its_record() -> None:
    """Every listed difference names a record of the corpus whose author string holds it."""
    missing = [d for d in KNOWN if d.source not in SOURCES or d.arxiv_id not in pairs(d.source)]
    for listed in KNOWN:
        if listed not in missing:
            assert listed.excerpt in pairs(listed.source)[listed.arxiv_id][0]
    if missing:
        pytest.skip(f"not in this checkout's corpus: {[(d.source, d.arxiv_id) for d in missing]}")
