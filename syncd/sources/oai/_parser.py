"""Turn one OAI-PMH ``ListRecords`` page in ``arXivRaw`` into an ``OaiPage``.

The page is parsed whole by the API's hardened parser (a page is bounded by
arXiv's page size and the client's response cap), and of each record only
the elements that say whose paper it may be (its header and its author
names) reach Python, found by lxml's tag matching; the rest of a record is
read by ``OaiEntry.read`` when the record turns out to matter, which on a
day's harvest is one record in hundreds.  (``iterparse`` would stream, but
its parser holds the tree in a reference cycle, freed only by a full
collection: a harvest of fifty pages held fifty trees.)
Nothing is handed on before the whole page has parsed: a page cut short, or
whose envelope (``responseDate``, ``ListRecords``, the token) is not
well-formed or not what OAI-PMH writes, raises ``FeedError`` and yields no
record, so a harvest applies nothing of it.

One record arXiv wrote badly must not stop the records beside it.  A record
whose header cannot be trusted (an identifier outside arXiv's scheme, child
elements where text belongs) is an entry with a ``problem``: the harvest
skips it when nobody here follows it, and stops on it when someone does.
When the page does not parse whole, its records are parsed one by one
(``_isolated``): the envelope with every record cut out must still parse, so
a page cut short is still refused whole, and a record that does not parse on
its own (bytes that are not UTF-8, nesting past the parser's depth limit)
keeps what was read of it before the fault, its header and author names
first in arXivRaw's order.  Every piece goes through the same hardened
parser, after the same refusal of declarations for the whole body.

The body is untrusted, as the API's: a DOCTYPE or entity declaration is
refused before parsing (arXiv sends neither), and the parser expands no
entity and loads nothing.  What a page says is bounded before it goes
anywhere: ``responseDate`` must be a UTC time as OAI-PMH writes it, a token
at most ``MAX_TOKEN_CHARS`` long, an error's message is cut to a line.  An
``<error>`` answer raises the protocol's typed error (``syncd.errors.OaiError``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from xml.sax.saxutils import quoteattr

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
from syncd.sources.arxiv import (
    clean_text,
    hardened_parser,
    hardened_pull_parser,
    refuse_declarations,
)

__all__ = ["MAX_TOKEN_CHARS", "OaiEntry", "OaiPage", "parse_page"]

# arXiv's tokens are its query URL-encoded, a few hundred characters at most
# (``oaipmh/processors/resume.py`` of its service; the 2015 service's were
# shorter still).  A token goes back in a URL: one far longer is not arXiv's.
MAX_TOKEN_CHARS = 1000

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
# OAI-PMH's responseDate: "UTCdatetime", seconds granularity (the protocol's section 3.2).
_RESPONSE_DATE_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z", re.ASCII)
# What of an <error> message is kept: enough to say what arXiv meant, never a page of it.
_MAX_MESSAGE_CHARS = 200
# A record's start tag, and its end; the split of a page that does not parse whole.
_RECORD_START_RE = re.compile(rb"<record[\s>]")
_RECORD_END = b"</record>"
# Where a tag's bytes could hide outside markup (text escapes "<"): CDATA, comments and
# processing instructions, none of which arXiv writes; the split refuses a page with any.
_XML_DECLARATION_RE = re.compile(rb"(?:\xef\xbb\xbf)?\s*<\?xml[^>]*\?>")
_HIDING_RE = re.compile(rb"<!\[CDATA\[|<!--|<\?")
# Stands for a record cut out of the envelope: where it was, and that it was one.
_PLACEHOLDER = b"<record/>"
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


# Not frozen: a frozen dataclass's __init__ costs a call per field, for every record of a
# harvest (a tenth of its CPU at arXiv's 2.5 million); nothing changes an entry once made.
@dataclass(slots=True)
class OaiEntry:
    """One ``<record>`` of a page, read as far as telling whose paper it may be.

    A day's harvest lists every paper arXiv changed, and almost all of them
    are nobody's here: for those the id and the author names are all that is
    ever read.  ``read`` reads and checks the rest of a record that matters.
    ``problem`` says why the record cannot be read (its ``arxiv_id`` is
    empty when its identifier is what is wrong); ``read`` then raises it.
    """

    arxiv_id: str
    datestamp: str
    deleted: bool
    authors: tuple[str, ...]
    position: int
    element: etree._Element | None = field(repr=False, compare=False)
    problem: str | None = None

    @property
    def where(self) -> str:
        """The record as messages name it: its place on the page and its id."""
        return f"record {self.position}" + (f" ({self.arxiv_id})" if self.arxiv_id else "")

    def read(self) -> ArxivRawRecord:
        """The whole record; ``FeedError`` if it is malformed."""
        if self.problem is not None or self.element is None:
            raise FeedError(f"{self.where} {self.problem or 'could not be read'}")
        return _record(self.element, self.arxiv_id, self.datestamp, self.position)


@dataclass(frozen=True, slots=True)
class OaiPage:
    """One complete page: when arXiv answered, its records, and the token for the next page.

    ``token`` is ``None`` on the last page (arXiv sends an empty
    ``<resumptionToken/>`` or none at all).  The entries hold the page's
    parsed tree until the page is dropped: memory is a page's, never a
    harvest's.  ``cursor`` and ``list_size`` are the token's counts (records
    listed before this page, and in the whole list) when it has both.
    """

    response_date: datetime
    entries: tuple[OaiEntry, ...]
    token: str | None
    cursor: int | None = None
    list_size: int | None = None

    @property
    def records(self) -> tuple[ArxivRawRecord, ...]:
        """Every entry read whole (``OaiEntry.read``)."""
        return tuple(entry.read() for entry in self.entries)


def _read_entry(
    parts: Iterable[etree._Element],
    position: int,
    record: etree._Element | None,
    damage: str | None,
) -> OaiEntry:
    """The entry a record's ``parts`` (``_RECORD_PARTS``, in document order) make: one with a
    ``problem`` when they cannot be trusted.  Of a part given twice, the last counts.

    Every record of every page comes here: one loop over local names, no object per part.
    """
    identifier: str | None = None
    datestamp: str | None = None
    authors: str | None = None
    seen = deleted = False
    problem = damage
    for element in parts:
        tag = element.tag
        if tag == _HEADER:
            seen = True
            deleted = element.get("status") == "deleted"
        elif len(element):
            problem = problem or f"holds child elements inside <{tag.rpartition('}')[2]}>"
        elif tag == _AUTHORS:
            authors = element.text
        elif tag == _IDENTIFIER:
            identifier = clean_text(element.text)
        else:
            datestamp = clean_text(element.text)
    arxiv_id = ""
    if not seen:
        problem = problem or "has no <header>"
    elif identifier is None or not identifier.startswith(_IDENTIFIER_PREFIX) or not datestamp:
        problem = problem or "has no arXiv <identifier> or no <datestamp>"
    else:
        arxiv_id, refused = _arxiv_id(identifier[len(_IDENTIFIER_PREFIX) :])
        problem = problem or refused
    names = () if deleted else _names(authors)
    return OaiEntry(arxiv_id, datestamp or "", deleted, names, position, record, problem)


def parse_page(body: bytes) -> OaiPage:
    """Parse one ``ListRecords`` answer; raise ``FeedError`` or an ``OaiError`` if unusable.

    Every record's header and author names are read and checked here; the
    rest of a record only by ``OaiEntry.read``.
    """
    refuse_declarations(body)
    entries: list[OaiEntry] | None = None
    try:
        root = etree.fromstring(body, hardened_parser())
    except etree.LxmlError as exc:
        root, entries = _isolated(body, exc)
    _check_root(root)
    response_date: datetime | None = None
    listed: etree._Element | None = None
    for child in root:
        tag = child.tag
        if tag == _RESPONSE_DATE:
            response_date = _response_date(child)
        elif tag == _ERROR:
            _raise_error(child, response_date)
        elif tag == _LIST_RECORDS:
            listed = child
    if listed is None:
        raise FeedError("the OAI-PMH answer has no <ListRecords>")
    if response_date is None:
        raise FeedError("the OAI-PMH answer has no <responseDate>")
    if entries is None:
        entries = [
            _read_entry(record.iter(*_RECORD_PARTS), position, record, None)
            for position, record in enumerate(listed.iterchildren(_RECORD), start=1)
        ]
    token = listed.find(_TOKEN)
    return OaiPage(response_date, tuple(entries), _token(token), *_counts(token))


def _isolated(body: bytes, cause: etree.LxmlError) -> tuple[etree._Element, list[OaiEntry]]:
    """A page that does not parse whole, parsed record by record (see the module's doc):
    its envelope with a placeholder for each record, and its entries."""
    refused = FeedError(f"the OAI-PMH page is not well-formed XML (cut short?): {cause}")
    declaration = _XML_DECLARATION_RE.match(body)
    if _HIDING_RE.search(body, declaration.end() if declaration else 0) is not None:
        raise refused from cause
    spans = _record_spans(body)
    if not spans:
        raise refused from cause
    pieces, last = [], 0
    for start, end in spans:
        pieces += [body[last:start], _PLACEHOLDER]
        last = end
    pieces.append(body[last:])
    try:
        root = etree.fromstring(b"".join(pieces), hardened_parser())
    except etree.LxmlError:
        raise refused from cause
    listed = root.find(_LIST_RECORDS)
    held = list(listed.iterchildren(_RECORD)) if listed is not None else []
    # Every cut is a record of the list, and the list has no other: else the split lied.
    if listed is None or len(held) != len(spans) or len(list(root.iter(_RECORD))) != len(spans):
        raise refused from cause
    wrapper = _wrapper(listed.nsmap)
    entries = [
        _isolated_entry(body[start:end], wrapper, position)
        for position, (start, end) in enumerate(spans, start=1)
    ]
    return root, entries


def _record_spans(body: bytes) -> list[tuple[int, int]] | None:
    """Where each ``<record>`` of ``body`` starts and ends; None if one is unclosed or nested."""
    spans: list[tuple[int, int]] = []
    position = 0
    while (start := _RECORD_START_RE.search(body, position)) is not None:
        end = body.find(_RECORD_END, start.end())
        if end < 0 or _RECORD_START_RE.search(body, start.end(), end) is not None:
            return None
        position = end + len(_RECORD_END)
        spans.append((start.start(), position))
    return spans


def _wrapper(namespaces: dict[str | None, str]) -> tuple[bytes, bytes]:
    """The tags around a record parsed alone: the namespaces it had in its list."""
    declared = "".join(
        f" xmlns{':' + prefix if prefix else ''}={quoteattr(uri)}"
        for prefix, uri in namespaces.items()
    )
    return f"<records{declared}>".encode(), b"</records>"


def _isolated_entry(chunk: bytes, wrapper: tuple[bytes, bytes], position: int) -> OaiEntry:
    """One record parsed alone; what a fault leaves of it still says whose it may be."""
    text = chunk.decode("utf-8", "replace").encode()
    damage = None if text == chunk else "holds bytes that are not UTF-8"
    parser = hardened_pull_parser(_RECORD_PARTS)
    record: etree._Element | None = None
    try:
        for piece in (wrapper[0], text, wrapper[1]):
            parser.feed(piece)
        held = parser.close()
        record = held[0] if len(held) == 1 and held[0].tag == _RECORD else None
    except etree.LxmlError as exc:
        damage = damage or f"is not well-formed XML: {_bounded(str(exc), _MAX_MESSAGE_CHARS)}"
    parts = (e for _, e in parser.read_events() if isinstance(e, etree._Element))
    return _read_entry(
        parts, position, record, damage or (None if record is not None else "is empty")
    )


def _names(authors: str | None) -> tuple[str, ...]:
    """arXivRaw's author string as names in UTF-8: its TeX converted before it is split,
    as arXiv's own ``arXiv`` format does, so "Pl\\"otz" is Plötz, whom a followed
    author's name finds."""
    return split_authors(canonical_text(clean_text(authors)) or "")


def _check_root(root: etree._Element) -> None:
    docinfo = root.getroottree().docinfo
    if docinfo.internalDTD is not None or docinfo.externalDTD is not None:
        raise FeedError("the body declares a DOCTYPE, which arXiv never sends")


def _response_date(element: etree._Element) -> datetime:
    """``<responseDate>`` as an aware UTC time; ``FeedError`` unless in OAI-PMH's shape."""
    text = _text(element, "responseDate") or ""
    match = _RESPONSE_DATE_RE.fullmatch(text)
    moment = None
    if match is not None:
        with contextlib.suppress(ValueError):  # a 30 February, a 25th hour
            year, month, day, hour, minute, second = map(int, match.groups())
            moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    if moment is None:
        shown = _bounded(text, 40)
        raise FeedError(f"the OAI-PMH <responseDate> {shown!r} is not YYYY-MM-DDThh:mm:ssZ")
    return moment


def _token(element: etree._Element | None) -> str | None:
    """The page's ``resumptionToken``; None on the last page."""
    token = _text(element, "resumptionToken") if element is not None else None
    if token is not None and len(token) > MAX_TOKEN_CHARS:
        raise FeedError(
            f"the OAI-PMH resumptionToken is {len(token)} characters long, not arXiv's"
            f" (at most {MAX_TOKEN_CHARS}): not storing or sending it"
        )
    return token


def _counts(element: etree._Element | None) -> tuple[int | None, int | None]:
    """The token's ``cursor`` and ``completeListSize`` when both are counts that agree: arXiv's
    2015 service wrote them, its 2025 rewrite writes neither (OAI-PMH makes them optional)."""
    if element is None:
        return None, None
    cursor, size = (_ascii_int(element.get(name) or "") for name in ("cursor", "completeListSize"))
    return (
        (cursor, size)
        if cursor is not None and size is not None and cursor <= size
        else (None, None)
    )


def _raise_error(element: etree._Element, response_date: datetime | None) -> None:
    code = _bounded(element.get("code") or "unknown", 40)
    # Cut before cleaning too: a message of megabytes is not read whole for one line.
    text = clean_text((element.text or "")[: 4 * _MAX_MESSAGE_CHARS])
    message = _bounded(text or "no message", _MAX_MESSAGE_CHARS)
    if code == NoRecordsMatch.code:
        if response_date is None:
            raise FeedError("the OAI-PMH answer has no <responseDate> before its <error>")
        raise NoRecordsMatch(message, response_date)
    error = _ERRORS.get(code)
    if error is not None:
        raise error(message)
    raise FeedError(f"OAI-PMH answered error {code!r}: {message}")


def _bounded(text: str, limit: int) -> str:
    """``text``, cut to ``limit`` characters with an ellipsis when longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
    number = _ascii_int(label[1:]) if label[:1] == "v" else None
    if number is None or not 1 <= number <= _MAX_VERSIONS:
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
    size_kb = _ascii_int(size[:-2]) if size.endswith("kb") else None
    return RawVersion(number, date, size_kb, parts.get("source_type"))


def _ascii_int(text: str) -> int | None:
    """``text`` as a number when it is ASCII digits only (``str.isdigit`` takes ``²``)."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else None


def _date(text: str) -> datetime | None:
    """arXivRaw's ``Fri, 8 Feb 2013 21:00:01 GMT`` as a UTC datetime; None if unreadable.

    Read by hand for the shape arXiv writes (``email.utils`` takes four times
    as long, for every version of every record); any other ASCII shape goes
    to it, and must have a time that exists in UTC.
    """
    if not text.isascii():
        return None
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
        if moment.tzinfo is None:
            return moment.replace(tzinfo=UTC)
        # "Fri, 31 Dec 9999 23:59:59 -2359" is past the last time Python has in UTC.
        return moment.astimezone(UTC)
    except (TypeError, ValueError, OverflowError):
        return None


def _arxiv_id(text: str) -> tuple[str, str | None]:
    """The paper a record's identifier names, and why it names none (then the id is "")."""
    try:
        arxiv_id, version = split_arxiv_id(text)
    except ArxivIdError as exc:
        return "", f"names {text[:80]!r}: {exc.reason}"
    if version is not None:
        return "", f"names a version ({text[:80]!r}), not a paper"
    return arxiv_id, None
