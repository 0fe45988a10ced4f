"""Authors' own feeds, ``/a/<id>.atom`` and ``.atom2``, written as arXiv writes them.

arXiv serves them from arxiv-browse, not from the API, and their shape is
its own (``tests/fixtures/arxiv-real/author-feeds``, made by that code):
an unpaged feed with a header of its own; per entry id, updated, published,
title, summary, authors, then doi, comment and journal-ref when set, two
links, and the primary category and categories with labels (none at all for
a paper without a primary category).  Times are ``+00:00``, not ``Z``; text
is what the submitter typed, TeX included, and the categories as arXiv files
them, aliases too (``tests.recorded``); ``.atom``
has one <author> per person with their ``arxiv:affiliation``s, ``.atom2``
one <author> whose <name> joins every name with ", ".  Written with the
standard library's ElementTree, indented by two spaces, as arXiv's are.
``tests/unit/test_fakearxiv.py`` compares the structure with the real feeds.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Literal

from syncd.domain.record import Record, parse_arxiv_time
from tests.recorded import as_tex, with_aliases

__all__ = ["FeedFormat", "author_feed_xml", "large_author_feed"]

FeedFormat = Literal["atom", "atom2"]

_ATOM = "http://www.w3.org/2005/Atom"
_ARXIV = "http://arxiv.org/schemas/atom"
_SITE = "https://arxiv.org/"
_ORCID_RE = re.compile(r"[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{3}[0-9X]")
# ElementTree's prefixes are process-wide: the Atom namespace is the default one
# in every tree it writes from now on, as arXiv's code registers it too.
ET.register_namespace("", _ATOM)
ET.register_namespace("arxiv", _ARXIV)

# What a category's label names; arXiv's taxonomy has them all, the fake the ones tests use.
_CATEGORY_NAMES = {
    "cs.AI": "Artificial Intelligence",
    "cs.CL": "Computation and Language",
    "cs.DC": "Distributed, Parallel, and Cluster Computing",
    "cs.IR": "Information Retrieval",
    "cs.IT": "Information Theory",
    "cs.LG": "Machine Learning",
    "cs.MA": "Multiagent Systems",
    "hep-th": "High Energy Physics - Theory",
    "math.AG": "Algebraic Geometry",
    "physics.chem-ph": "Chemical Physics",
    "stat.ML": "Machine Learning",
}


def author_feed_xml(
    feed_id: str,
    records: Sequence[Record],
    feed_format: FeedFormat,
    *,
    affiliations: Mapping[str, Mapping[str, Sequence[str]]],
    now: datetime,
) -> bytes:
    """The feed of ``feed_id`` (an ORCID iD or an arXiv author id) listing ``records``.

    ``affiliations`` maps an arXiv id to ``{author name: affiliations}``;
    ``now`` gives the feed's ``<updated>`` (arXiv writes the day's midnight).
    """
    feed = ET.Element(_tag("feed"))
    _add(feed, _tag("title"), f"{feed_id}'s articles on arXiv")
    orcid = f"https://orcid.org/{feed_id}" if _ORCID_RE.fullmatch(feed_id) else ""
    _add(feed, _tag("link"), attrs={"rel": "describes", "href": orcid})
    midnight = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    _add(feed, _tag("updated"), midnight.isoformat())
    _add(feed, _tag("id"), _SITE + feed_id)
    self_link = {"href": f"{_SITE}a/{feed_id}.{feed_format}", "rel": "self"}
    _add(feed, _tag("link"), attrs={**self_link, "type": "application/atom+xml"})
    _add(feed, _tag("link"), attrs={"rel": "describes", "href": _SITE + feed_id})
    for record in records:
        known = affiliations.get(record.arxiv_id or "", {})
        _entry(feed, record, feed_format, known)
    ET.indent(feed, space="  ")
    body: bytes = ET.tostring(feed, encoding="utf-8", xml_declaration=True)
    return body


def large_author_feed(
    feed_id: str, record: Record, count: int, *, now: datetime
) -> Iterator[bytes]:
    """The ``.atom`` feed of ``feed_id`` listing ``count`` papers like ``record``, in pieces.

    The papers are ``record`` numbered ``YYMM.00000`` up, newest first, from
    ``record``'s month (``count`` at most 100,000).  Written piece by piece
    from one entry as ``author_feed_xml`` writes it, so a feed of 50,000
    entries is served without ever being held, and in a fraction of the time
    ElementTree takes to write it whole.
    """
    month = (record.arxiv_id or "2501.00000").split(".", 1)[0]
    marker = f"{month}.99999"
    one = author_feed_xml(
        feed_id, [replace(record, arxiv_id=marker)], "atom", affiliations={}, now=now
    )
    start, end = one.index(b"<entry>"), one.rindex(b"</entry>") + len(b"</entry>")
    entry = one[start:end] + b"\n  "
    yield one[:start]
    batch: list[bytes] = []
    for number in range(count - 1, -1, -1):
        batch.append(entry.replace(marker.encode(), f"{month}.{number:05d}".encode()))
        if len(batch) == 500:
            yield b"".join(batch)
            batch = []
    yield b"".join(batch) + one[end:].lstrip()


def _entry(
    feed: ET.Element,
    record: Record,
    feed_format: FeedFormat,
    affiliations: Mapping[str, Sequence[str]],
) -> None:
    versioned = f"{record.arxiv_id}v{record.version}"
    entry = _add(feed, _tag("entry"))
    _add(entry, _tag("id"), f"{_SITE}abs/{versioned}")
    for name, value in (("updated", record.updated), ("published", record.published)):
        moment = parse_arxiv_time(value)
        if moment is not None:
            _add(entry, _tag(name), moment.astimezone(UTC).isoformat())
    _add(entry, _tag("title"), as_tex(record.title))
    _add(entry, _tag("summary"), as_tex(record.abstract) or "")
    if feed_format == "atom2":
        author = _add(entry, _tag("author"))
        _add(author, _tag("name"), ", ".join(as_tex(n) or n for n in record.authors))
    else:
        for name in record.authors:
            author = _add(entry, _tag("author"))
            _add(author, _tag("name"), as_tex(name))
            for affiliation in affiliations.get(name, ()):
                _add(author, _arxiv("affiliation"), affiliation)
    for name, value in (
        ("doi", record.doi),
        ("comment", as_tex(record.comment)),
        ("journal_ref", as_tex(record.journal_ref)),
    ):
        if value:
            _add(entry, _arxiv(name), value)
    abs_link = {"href": f"{_SITE}abs/{versioned}", "rel": "alternate", "type": "text/html"}
    _add(entry, _tag("link"), attrs=abs_link)
    pdf_link = {"title": "pdf", "href": f"{_SITE}pdf/{versioned}", "rel": "alternate"}
    _add(entry, _tag("link"), attrs={**pdf_link, "type": "application/pdf"})
    if record.primary_category is None:
        return  # arXiv lists no category then, not even the others
    _add(entry, _arxiv("primary_category"), attrs=_category(record.primary_category))
    for term in with_aliases(tuple(dict.fromkeys([record.primary_category, *record.categories]))):
        _add(entry, _tag("category"), attrs=_category(term))


def _category(term: str) -> dict[str, str]:
    label = f"{_CATEGORY_NAMES.get(term, term)} ({term})"
    return {"term": term, "scheme": _ARXIV, "label": label}


def _tag(name: str) -> str:
    return f"{{{_ATOM}}}{name}"


def _arxiv(name: str) -> str:
    return f"{{{_ARXIV}}}{name}"


def _add(
    parent: ET.Element, tag: str, text: str | None = None, attrs: Mapping[str, str] | None = None
) -> ET.Element:
    child = ET.SubElement(parent, tag, dict(attrs or {}))
    if text is not None:
        child.text = text
    return child
