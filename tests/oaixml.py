"""OAI-PMH ``ListRecords`` answers in ``arXivRaw``, written as arXiv writes them.

The shapes follow the real recorded answers in ``tests/fixtures/arxiv-oai/``:
the OAI-PMH envelope, a header per record (identifier, datestamp, setSpecs),
and arXivRaw's elements in arXiv's order (id, versions, title, authors as one
string, categories space-separated, comments, journal-ref, doi, abstract).
The fake arXiv and the unit tests build their pages here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

OAI = "http://www.openarchives.org/OAI/2.0/"
RAW = "http://arxiv.org/OAI/arXivRaw/"

__all__ = ["OAI", "RAW", "RawPaper", "RawVersionXml", "error_xml", "list_records_xml", "record_xml"]


@dataclass(frozen=True)
class RawVersionXml:
    """One ``<version>``: its date as arXiv writes it, size and optional source flags."""

    date: str = "Mon, 2 Mar 2026 09:00:00 GMT"
    size: str = "120kb"
    source_type: str | None = None


@dataclass(frozen=True)
class RawPaper:
    """What one arXivRaw record says; ``deleted`` writes only the header."""

    arxiv_id: str
    datestamp: str = "2026-03-02"
    title: str = "A title"
    authors: str = "Ada Lovelace"
    abstract: str | None = "An abstract."
    categories: str = "cs.LG"
    comments: str | None = None
    journal_ref: str | None = None
    doi: str | None = None
    versions: Sequence[RawVersionXml] = field(default_factory=lambda: (RawVersionXml(),))
    sets: Sequence[str] = ("cs",)
    deleted: bool = False


def _element(name: str, text: str | None) -> str:
    return "" if text is None else f"<{name}>{escape(text)}</{name}>"


def record_xml(paper: RawPaper) -> str:
    """One ``<record>`` as arXiv writes it."""
    status = ' status="deleted"' if paper.deleted else ""
    header = (
        f"<header{status}>\n <identifier>oai:arXiv.org:{paper.arxiv_id}</identifier>\n"
        f" <datestamp>{paper.datestamp}</datestamp>\n"
        + "".join(f" <setSpec>{spec}</setSpec>\n" for spec in paper.sets)
        + "</header>\n"
    )
    if paper.deleted:
        return f"<record>\n{header}</record>\n"
    versions = "".join(
        f'<version version="v{number}"><date>{v.date}</date><size>{v.size}</size>'
        + _element("source_type", v.source_type)
        + "</version>"
        for number, v in enumerate(paper.versions, start=1)
    )
    body = (
        f"<id>{paper.arxiv_id}</id><submitter>Ada Lovelace</submitter>{versions}"
        + _element("title", paper.title)
        + _element("authors", paper.authors)
        + _element("categories", paper.categories)
        + _element("comments", paper.comments)
        + _element("journal-ref", paper.journal_ref)
        + _element("doi", paper.doi)
        + "<license>http://arxiv.org/licenses/nonexclusive-distrib/1.0/</license>"
        + _element("abstract", paper.abstract)
    )
    return (
        f"<record>\n{header}<metadata>\n"
        f' <arXivRaw xmlns="{RAW}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
        f" {body}</arXivRaw>\n</metadata>\n</record>\n"
    )


def _envelope(response_date: str, request: str, inner: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<OAI-PMH xmlns="{OAI}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
        f"<responseDate>{response_date}</responseDate>\n"
        f"{request}\n{inner}</OAI-PMH>\n"
    ).encode()


def list_records_xml(
    papers: Sequence[RawPaper],
    *,
    token: str | None = None,
    response_date: str = "2026-03-03T04:30:00Z",
    cursor: int | None = None,
    complete_list_size: int | None = None,
) -> bytes:
    """A ``ListRecords`` page; ``token`` ``None`` writes the empty token of a last page.

    ``cursor`` and ``complete_list_size`` go in the token's attributes, as
    arXiv's 2015 service wrote them (its 2025 rewrite writes neither).
    """
    sizes = "".join(
        f' {name}="{value}"'
        for name, value in (("cursor", cursor), ("completeListSize", complete_list_size))
        if value is not None
    )
    tail = (
        f"<resumptionToken{sizes}>{escape(token)}</resumptionToken>"
        if token
        else f"<resumptionToken{sizes}/>"
    )
    inner = "<ListRecords>\n" + "".join(map(record_xml, papers)) + tail + "\n</ListRecords>\n"
    request = '<request verb="ListRecords" metadataPrefix="arXivRaw">http://arxiv/oai</request>'
    return _envelope(response_date, request, inner)


def error_xml(code: str, message: str, *, response_date: str = "2026-03-03T04:30:00Z") -> bytes:
    """An OAI-PMH error answer."""
    inner = f'<error code="{code}">{escape(message)}</error>\n'
    return _envelope(response_date, "<request>http://arxiv/oai</request>", inner)
