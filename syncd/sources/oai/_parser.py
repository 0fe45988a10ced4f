"""Turn one OAI-PMH ``ListRecords`` page in ``arXivRaw`` into an ``OaiPage``.

The page is parsed whole by the API's hardened parser (a page is bounded by
arXiv's page size and the client's response cap), and of each record only
the elements that say whose paper it may be (its header and its author
names) reach Python, found by lxml's tag matching; the rest of a record is
read by ``OaiEntry.read`` when the record turns out to matter, which on a
day's harvest is one record in hundreds.  (``iterparse`` would stream, but
its parser holds the tree in a reference cycle, freed only by a full
collection: a harvest of fifty pages held fifty trees.)
Nothing is handed on before the whole page has parsed: a page cut short or
not well-formed anywhere raises ``FeedError`` and yields no record, so a
harvest applies nothing of it; a record read whole and found malformed
raises too, before anything of its page is applied.

The body is untrusted, as the API's: a DOCTYPE or entity declaration is
refused before parsing (arXiv sends neither), and the parser expands no
entity and loads nothing.  An ``<error>`` answer raises the protocol's typed
error (``syncd.errors.OaiError``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from lxml import etree

from syncd.domain.arxivraw import ArxivRawRecord, RawVersion
from syncd.domain.author_list import split_authors
from syncd.domain.canonical import canonical_text
from syncd.domain.record import ArxivIdError, split_arxiv_id
from syncd.errors import (
    BadArgument,
    BadResumptionToken,
    FeedError,
    NoRecordsMatch,
    OaiError,
)
from syncd.sources.arxiv import clean_text, hardened_parser, refuse_declarations

__all__ = ["OaiEntry", "OaiPage", "parse_page"]

_OAI = "{http://www.openarchives.org/OAI/2.0/}"
_RAW = "{http://arxiv.org/OAI/arXivRaw/}"

_RESPONSE_DATE = _OAI + "responseDate"
_ERROR = _OAI + "error"
_RECORD = _OAI + "record"
_HEADER = _OAI + "header"
_METADATA = _OAI + "metadata"
_TOKEN = _OAI + "resumptionToken"
_LIST_RECORDS = _OAI + "ListRecords"
_IDENTIFIER = _OAI + "identifier"
_DATESTAMP = _OAI + "datestamp"
_SET_SPEC = _OAI + "setSpec"
_ARXIV_RAW = _RAW + "arXivRaw"
_VERSION = _RAW + "version"

_AUTHORS = _RAW + "authors"
# What tells whose paper a record may be: read for every record, the rest only when asked.
_RECORD_PARTS = (_IDENTIFIER, _DATESTAMP, _HEADER, _AUTHORS)
_IDENTIFIER_PREFIX = "oai:arXiv.org:"
_ERRORS: dict[str, type[OaiError]] = {
    error.code: error for error in (BadArgument, BadResumptionToken)
}
# The arXivRaw children read as text, by tag, and their local names; each at most once.
_RAW_TEXT = {
    _RAW + name: name
    for name in (
        "id",
        "title",
        "authors",
        "categories",
        "comments",
        "journal-ref",
        "doi",
        "abstract",
    )
}
_VERSION_TEXT = {_RAW + name: name for name in ("date", "size", "source_type")}
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"),
        start=1,
    )
}
_MAX_VERSIONS = 1000


@dataclass(frozen=True, slots=True)
class OaiEntry:
    """One ``<record>`` of a page, read as far as telling whose paper it may be.

    A day's harvest lists every paper arXiv changed, and almost all of them
    are nobody's here: for those the id and the author names are all that is
    ever read.  ``read`` reads and checks the rest of a record that matters.
    """

    arxiv_id: str
    datestamp: str
    deleted: bool
    authors: tuple[str, ...]
    position: int
    element: etree._Element = field(repr=False, compare=False)

    def read(self) -> ArxivRawRecord:
        """The whole record; ``FeedError`` if it is malformed."""
        return _record(self.element, self.arxiv_id, self.datestamp, self.position)


@dataclass(frozen=True, slots=True)
class OaiPage:
    """One complete page: when arXiv answered, its records, and the token for the next page.

    ``token`` is ``None`` on the last page (arXiv sends an empty
    ``<resumptionToken/>`` or none at all).  The entries hold the page's
    parsed tree until the page is dropped: memory is a page's, never a
    harvest's.
    """

    response_date: str
    entries: tuple[OaiEntry, ...]
    token: str | None

    @property
    def records(self) -> tuple[ArxivRawRecord, ...]:
        """Every entry read whole (``OaiEntry.read``)."""
        return tuple(entry.read() for entry in self.entries)


@dataclass(slots=True)
class _Header:
    """What the record being read says of itself: its header and its author names."""

    identifier: str | None = None
    datestamp: str | None = None
    seen: bool = False
    deleted: bool = False
    authors: str | None = None

    def take(self, tag: str, element: etree._Element) -> None:
        if tag == _AUTHORS:
            self.authors = element.text
        elif tag == _IDENTIFIER:
            self.identifier = _text(element, "identifier")
        elif tag == _DATESTAMP:
            self.datestamp = _text(element, "datestamp")
        else:
            self.seen = True
            self.deleted = element.get("status") == "deleted"


def parse_page(body: bytes) -> OaiPage:
    """Parse one ``ListRecords`` answer; raise ``FeedError`` or an ``OaiError`` if unusable.

    Every record's header and author names are read and checked here; the
    rest of a record only by ``OaiEntry.read``.
    """
    refuse_declarations(body)
    try:
        root = etree.fromstring(body, hardened_parser())
    except etree.LxmlError as exc:
        raise FeedError(f"the OAI-PMH page is not well-formed XML (cut short?): {exc}") from exc
    _check_root(root)
    response_date: str | None = None
    listed: etree._Element | None = None
    for child in root:
        tag = child.tag
        if tag == _RESPONSE_DATE:
            response_date = _text(child, "responseDate")
        elif tag == _ERROR:
            _raise_error(child, response_date)
        elif tag == _LIST_RECORDS:
            listed = child
    if listed is None:
        raise FeedError("the OAI-PMH answer has no <ListRecords>")
    if response_date is None:
        raise FeedError("the OAI-PMH answer has no <responseDate>")
    entries = [
        _entry(record, position)
        for position, record in enumerate(listed.iterchildren(_RECORD), start=1)
    ]
    token = listed.find(_TOKEN)
    next_page = _text(token, "resumptionToken") if token is not None else None
    return OaiPage(response_date, tuple(entries), next_page)


def _entry(record: etree._Element, position: int) -> OaiEntry:
    header = _Header()
    for element in record.iter(*_RECORD_PARTS):
        header.take(element.tag, element)
    if not header.seen:
        raise FeedError(f"record {position} has no <header>")
    identifier, datestamp = header.identifier, header.datestamp
    if identifier is None or not identifier.startswith(_IDENTIFIER_PREFIX) or not datestamp:
        raise FeedError(f"record {position} has no arXiv <identifier> or no <datestamp>")
    arxiv_id = _arxiv_id(identifier[len(_IDENTIFIER_PREFIX) :], position)
    authors = () if header.deleted else _names(header.authors)
    return OaiEntry(arxiv_id, datestamp, header.deleted, authors, position, record)


def _names(authors: str | None) -> tuple[str, ...]:
    """arXivRaw's author string as names in UTF-8: its TeX converted before it is split,
    as arXiv's own ``arXiv`` format does, so "Pl\\"otz" is Plötz, whom a followed
    author's name finds."""
    return split_authors(canonical_text(clean_text(authors)) or "")


def _check_root(root: etree._Element) -> None:
    docinfo = root.getroottree().docinfo
    if docinfo.internalDTD is not None or docinfo.externalDTD is not None:
        raise FeedError("the body declares a DOCTYPE, which arXiv never sends")


def _raise_error(element: etree._Element, response_date: str | None) -> None:
    code = element.get("code") or "unknown"
    message = clean_text(element.text) or "no message"
    if code == NoRecordsMatch.code:
        raise NoRecordsMatch(message, response_date)
    error = _ERRORS.get(code)
    if error is not None:
        raise error(message)
    raise FeedError(f"OAI-PMH answered error {code[:40]!r}: {message[:200]}")


def _text(element: etree._Element, name: str) -> str | None:
    if len(element):
        raise FeedError(f"<{name}> holds child elements")
    return clean_text(element.text)


def _record(record: etree._Element, arxiv_id: str, datestamp: str, position: int) -> ArxivRawRecord:
    """One ``<record>`` whole: its sets, and its arXivRaw metadata unless it is deleted."""
    header = record.find(_HEADER)
    if header is None:
        raise FeedError(f"record {position} has no <header>")
    sets = tuple(_text(child, "setSpec") or "" for child in header.iterchildren(_SET_SPEC))
    if header.get("status") == "deleted":
        return ArxivRawRecord(arxiv_id, datestamp, sets, deleted=True)
    metadata = record.find(_METADATA)
    raw = metadata.find(_ARXIV_RAW) if metadata is not None else None
    if raw is None:
        raise FeedError(f"record {position} ({arxiv_id}) has no <arXivRaw> metadata")
    return _metadata(raw, arxiv_id, datestamp, sets, position)


def _metadata(
    raw: etree._Element, arxiv_id: str, datestamp: str, sets: tuple[str, ...], position: int
) -> ArxivRawRecord:
    where = f"record {position} ({arxiv_id})"
    fields: dict[str, str | None] = {}
    versions: list[RawVersion] = []
    for child in raw:
        tag = child.tag
        if tag == _VERSION:
            versions.append(_version(child, where))
            continue
        name = _RAW_TEXT.get(tag)
        if name is None:
            continue  # submitter, license, msc-class, report-no, proxy...
        if name in fields or len(child):
            problem = "more than one" if name in fields else "child elements inside"
            raise FeedError(f"{where} is malformed: it has {problem} <{name}>")
        fields[name] = clean_text(child.text)
    if fields.get("id") != arxiv_id:
        raise FeedError(f"{where} has <id> {str(fields.get('id'))[:60]!r}, not its identifier")
    if not versions:
        raise FeedError(f"{where} lists no <version>")
    if [v.number for v in versions] != list(range(1, len(versions) + 1)):
        raise FeedError(f"{where} lists versions out of order or with gaps")
    title = fields.get("title")
    authors = _names(fields.get("authors"))
    if title is None or not authors:
        raise FeedError(f"{where} has no title or no author")
    categories = tuple(dict.fromkeys((fields.get("categories") or "").split()))
    return ArxivRawRecord(
        arxiv_id=arxiv_id,
        datestamp=datestamp,
        sets=sets,
        title=title,
        abstract=fields.get("abstract"),
        authors=authors,
        categories=categories,
        comments=fields.get("comments"),
        journal_ref=fields.get("journal-ref"),
        doi=fields.get("doi"),
        versions=tuple(versions),
    )


def _version(element: etree._Element, where: str) -> RawVersion:
    label = element.get("version") or ""
    digits = label[1:]
    if label[:1] != "v" or not digits.isdigit() or not 1 <= int(digits[:6]) <= _MAX_VERSIONS:
        raise FeedError(f"{where} has a <version> labelled {label[:20]!r}")
    parts: dict[str, str | None] = {}
    for child in element:
        name = _VERSION_TEXT.get(child.tag)
        if name is not None:
            if name in parts or len(child):
                raise FeedError(f"{where} {label} is malformed: a repeated or nested <{name}>")
            parts[name] = clean_text(child.text)
    date = _date(parts.get("date") or "")
    if date is None:
        raise FeedError(f"{where} {label} has no readable <date>")
    size = (parts.get("size") or "").lower()
    size_kb = int(size[:-2]) if size.endswith("kb") and size[:-2].isdigit() else None
    return RawVersion(int(digits), date, size_kb, parts.get("source_type"))


def _date(text: str) -> datetime | None:
    """arXivRaw's ``Fri, 8 Feb 2013 21:00:01 GMT`` as an aware datetime; None if unreadable.

    Read by hand for the shape arXiv writes (``email.utils`` takes four times
    as long, for every version of every record); any other shape goes to it.
    """
    parts = text.split()  # weekday, day, month, year, time, zone
    if len(parts) == 6 and parts[5] == "GMT" and parts[4].count(":") == 2:
        day, month, year = parts[1], _MONTHS.get(parts[2]), parts[3]
        hour, minute, second = parts[4].split(":")
        if month and (day + year + hour + minute + second).isdigit():
            try:
                return datetime(
                    int(year), month, int(day), int(hour), int(minute), int(second), tzinfo=UTC
                )
            except ValueError:
                return None
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _arxiv_id(text: str, position: int) -> str:
    try:
        arxiv_id, version = split_arxiv_id(text)
    except ArxivIdError as exc:
        raise FeedError(f"record {position} names {text[:80]!r}: {exc.reason}") from None
    if version is not None:
        raise FeedError(f"record {position} names a version ({text[:80]!r}), not a paper")
    return arxiv_id
