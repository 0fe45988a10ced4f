"""Atom pages built from the real arXiv entries in tests/fixtures/arxiv-api/.

Every synthetic entry is a copy of a recorded entry (the current backend's
exact bytes: same elements, same text sizes) with a new arXiv id and version,
so a page of 2,000 entries has the size and shape of a real one.  For the sync
rows each entry also names the tracked author and one of the seed papers'
co-authors first, as an ``au:`` answer would, so that syncd takes the paper as
the author's own (``syncd.domain.linking.identify``).

Pages are rendered once, before anything is timed, and served as static bytes.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "arxiv-api"
SEEDS = tuple(sorted((ROOT / "seeds").glob("*.txt")))
# The current backend's query answers: 110 distinct entries.
_SOURCES = (
    "query_all-testing_start0_max100.xml",
    "query_all-testing_start0_max10.xml",
    "query_all-testing_start10_max10.xml",
)
ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
ENTRY = ATOM + "entry"

# The author whose papers the sync rows track: the project's own seeded author,
# with his seeds (so identity has a basis, as in a real deployment).
AUTHOR = "Zhida Jiang"
COAUTHOR = "Zhaolong Xing"  # a co-author of the seed papers


def _load() -> tuple[etree._Element, list[etree._Element]]:
    header: etree._Element | None = None
    entries: dict[str, etree._Element] = {}
    for name in _SOURCES:
        root = etree.fromstring((FIXTURES / name).read_bytes())
        if header is None:
            header = root
        for entry in root.iterchildren(ENTRY):
            entry_id = entry.findtext(ATOM + "id") or ""
            entries.setdefault(entry_id.rsplit("v", 1)[0], entry)
    assert header is not None
    header = copy.deepcopy(header)
    for entry in list(header.iterchildren(ENTRY)):
        header.remove(entry)
    return header, list(entries.values())


_HEADER, _ENTRIES = _load()


def template_count() -> int:
    """How many distinct recorded entries the pages cycle through."""
    return len(_ENTRIES)


def arxiv_id(index: int) -> str:
    """The synthetic arXiv id of paper ``index`` (0-based): 2001.00000 onwards, 5 digits."""
    return f"{2001 + index // 100_000:04d}.{index % 100_000:05d}"


@dataclass(frozen=True, slots=True)
class PageSpec:
    """What one page holds: papers ``first`` to ``first + count - 1`` of ``total``."""

    first: int
    count: int
    total: int
    max_results: int


def _entry(index: int, version: int, *, author: str | None) -> etree._Element:
    entry = copy.deepcopy(_ENTRIES[index % len(_ENTRIES)])
    versioned = f"{arxiv_id(index)}v{version}"
    for child in entry:
        if child.tag == ATOM + "id":
            child.text = f"http://arxiv.org/abs/{versioned}"
        elif child.tag == ATOM + "link" and "/abs/" in (child.get("href") or ""):
            child.set("href", f"https://arxiv.org/abs/{versioned}")
        elif child.tag == ATOM + "link" and "/pdf/" in (child.get("href") or ""):
            child.set("href", f"https://arxiv.org/pdf/{versioned}")
    if author is not None:
        first = next(entry.iterchildren(ATOM + "author"))
        position = entry.index(first)
        for offset, name in enumerate((author, COAUTHOR)):
            element = etree.Element(ATOM + "author")
            etree.SubElement(element, ATOM + "name").text = name
            element.tail = first.tail
            element[0].text = name
            entry.insert(position + offset, element)
    return entry


def render_page(
    first: int,
    count: int,
    *,
    total: int,
    max_results: int,
    version: int = 1,
    author: str | None = AUTHOR,
    versions: Sequence[int] | None = None,
) -> bytes:
    """One page of the answer, in the current backend's format (namespaces on the root)."""
    root = copy.deepcopy(_HEADER)
    for child in root:
        if child.tag == OPENSEARCH + "totalResults":
            child.text = str(total)
        elif child.tag == OPENSEARCH + "startIndex":
            child.text = str(first)
        elif child.tag == OPENSEARCH + "itemsPerPage":
            child.text = str(max_results)
    for index in range(first, first + count):
        v = versions[index] if versions is not None else version
        root.append(_entry(index, v, author=author))
    etree.indent(root, space="  ")
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def pages(
    total: int, page_size: int, *, version: int = 1, author: str | None = AUTHOR
) -> Iterator[tuple[int, bytes]]:
    """``(start, body)`` of every page of a ``total``-paper answer paged by ``page_size``.

    When the last page is full, also arXiv's answer one page further: no
    entries, the same ``totalResults`` (syncd asks for it to confirm the end).
    """
    for start in range(0, max(total, 1), page_size):
        count = min(page_size, total - start)
        yield (
            start,
            render_page(
                start, count, total=total, max_results=page_size, version=version, author=author
            ),
        )
    if total and total % page_size == 0:
        yield total, render_page(total, 0, total=total, max_results=page_size, author=author)
