"""A fake arXiv API: a real HTTP server on loopback speaking arXiv's exact Atom format.

The fake keeps papers as version histories of :class:`~syncd.domain.record.Record`,
answers ``GET /api/query`` (and ``POST``) with ``search_query`` / ``id_list`` /
paging / sorting semantics close enough to export.arxiv.org for syncd's tests,
renders the current backend's format byte for byte (or the old backend's, with
per-element namespaces and hard-wrapped text), logs every request, and injects
faults one request at a time: transport faults (statuses, timeouts, resets,
truncated or dripped bodies), lies in the counters, and hostile entries (a
version lower than the one before, markup in a text field, a repeated element,
an id outside arXiv's scheme)::

    from tests import fakearxiv as fa

    with fa.FakeArxiv() as arxiv:
        arxiv.publish(fa.make_record("2606.03328", authors=("Ada Lovelace",)))
        arxiv.inject(fa.status(503, retry_after=1), fa.reset())
        ...  # point the client at arxiv.url
        assert [r.status for r in arxiv.requests] == [503, 0, 200]

Requests are decided one at a time under a lock; waiting (timeouts, slow
drips) happens outside it, so a sleeping fault never blocks the next request.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import html
import re
import socket
import struct
import textwrap
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, Literal, NamedTuple
from urllib.parse import parse_qsl, quote, urlsplit

from lxml import etree

from syncd.domain.record import Record, normalize_name, split_arxiv_id
from syncd.domain.withdrawal import detect_withdrawal
from tests.fakeoai import OAI_CONTENT_TYPE, OAI_PATH, OaiWorld
from tests.feedxml import FeedFormat, author_feed_xml
from tests.loopback import LoopbackHandler, LoopbackServer

__all__ = [
    "ARXIV_NS",
    "ATOM_CONTENT_TYPE",
    "ATOM_NS",
    "BILLION_LAUGHS",
    "DEFAULT_AUTHOR",
    "EXTERNAL_ENTITY_FILE",
    "EXTERNAL_ENTITY_HTTP",
    "HTML_PROXY_PAGE",
    "OPENSEARCH_NS",
    "QUADRATIC_BLOWUP",
    "WITHDRAWN_BY_AUTHORS",
    "Backend",
    "FakeArxiv",
    "Fault",
    "LoggedRequest",
    "arxiv_tag",
    "atom_tag",
    "body",
    "empty_page",
    "empty_result",
    "entry_id",
    "error_feed",
    "make_record",
    "markup",
    "opensearch_tag",
    "refused_version",
    "render_error_feed",
    "render_feed",
    "repeated",
    "reset",
    "slow_drip",
    "stale_version",
    "status",
    "timeout",
    "total_lie",
    "truncate",
    "unknown_author_page",
    "versions_ignored",
]

ATOM_NS = "http://www.w3.org/2005/Atom"
OPENSEARCH_NS = "http://a9.com/-/spec/opensearch/1.1/"
ARXIV_NS = "http://arxiv.org/schemas/atom"
ATOM_CONTENT_TYPE = "application/atom+xml; charset=utf-8"
API_PATH = "/api/query"
# An author's own feed of claimed papers: /a/<arXiv author id or ORCID iD>.atom
# (one <author> per person) or .atom2 (all names joined in one), as arxiv-browse
# writes them (tests/feedxml.py).
AUTHOR_FEED_PREFIX = "/a/"
AUTHOR_FEED_FORMATS: tuple[FeedFormat, ...] = ("atom", "atom2")
DEFAULT_AUTHOR = "Ada Lovelace"
MAX_RESULTS_LIMIT = 30000

# "new" is the backend in service since 2025-11 (the fixtures); "old" the one before.
Backend = Literal["new", "old"]

_WRAP_WIDTH = 76
_OLD_TZ = timezone(timedelta(hours=-4))
_SORT_BY = ("relevance", "lastUpdatedDate", "submittedDate")
_SORT_ORDER = ("ascending", "descending")


# --------------------------------------------------------------------------- rendering


def atom_tag(name: str) -> str:
    """``name`` in the Atom namespace, as ElementTree spells it."""
    return f"{{{ATOM_NS}}}{name}"


def arxiv_tag(name: str) -> str:
    """``name`` in the arXiv namespace, as ElementTree spells it."""
    return f"{{{ARXIV_NS}}}{name}"


def opensearch_tag(name: str) -> str:
    """``name`` in the OpenSearch namespace, as ElementTree spells it."""
    return f"{{{OPENSEARCH_NS}}}{name}"


def _add(
    parent: etree._Element,
    tag: str,
    text: str | None = None,
    attrs: Sequence[tuple[str, str]] = (),
    *,
    nsmap: Mapping[str, str] | None = None,
) -> etree._Element:
    """Append a child with text and attributes in exactly the given order."""
    child = etree.SubElement(parent, tag, nsmap=nsmap)
    for name, value in attrs:
        child.set(name, value)
    if text is not None:
        child.text = text
    return child


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _old_stamp(moment: datetime) -> str:
    """The old backend's timestamps: US Eastern offset, written out."""
    return moment.astimezone(_OLD_TZ).strftime("%Y-%m-%dT%H:%M:%S-04:00")


def _normalize_time(value: str) -> str:
    """Any ISO 8601 time as arXiv writes it: UTC, seconds, ``Z``."""
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return _stamp(parsed)


def _feed_key(query: str) -> str:
    """A stable 27-character feed id for a canonical query, shaped like arXiv's."""
    digest = hashlib.sha1(query.encode()).digest()
    return base64.b64encode(digest).decode().rstrip("=")


def _wrap_lines(text: str) -> list[str]:
    return textwrap.wrap(text.strip(), _WRAP_WIDTH, break_long_words=False, break_on_hyphens=False)


def wrap_title(text: str | None) -> str | None:
    """A title hard-wrapped the way the old backend did: continuation lines indented."""
    return None if text is None else "\n  ".join(_wrap_lines(text))


def wrap_abstract(text: str | None) -> str | None:
    """An abstract hard-wrapped the way the old backend did: two leading spaces, final newline."""
    return None if text is None else "  " + "\n".join(_wrap_lines(text)) + "\n"


@dataclass(frozen=True, slots=True)
class _Style:
    backend: Backend
    wrap: bool

    def title(self, text: str | None) -> str | None:
        return wrap_title(text) if self.wrap else text

    def abstract(self, text: str | None) -> str | None:
        return wrap_abstract(text) if self.wrap else text

    def comment(self, text: str | None) -> str | None:
        return wrap_title(text) if self.wrap and self.backend == "old" else text


def _canonical(search_query: str, id_list: str, start: int, max_results: int) -> str:
    return f"search_query={search_query}&id_list={id_list}&start={start}&max_results={max_results}"


def _serialize(root: etree._Element, backend: Backend) -> bytes:
    if backend == "new":
        return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
    text = etree.tostring(root, encoding="UTF-8", pretty_print=True)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + text


def _new_header(
    *, search_query: str, id_list: str, start: int, max_results: int, total: int, now: datetime
) -> etree._Element:
    canonical = _canonical(search_query, id_list, start, max_results)
    link_query = quote(search_query, safe=":/,\"'()+*") if search_query else ""
    link = (
        f"https://arxiv.org/api/query?search_query={link_query}"
        f"&start={start}&max_results={max_results}&id_list={id_list}"
    )
    root = etree.Element(
        atom_tag("feed"),
        nsmap={"opensearch": OPENSEARCH_NS, "arxiv": ARXIV_NS, None: ATOM_NS},  # type: ignore[dict-item]
    )
    _add(root, atom_tag("id"), f"https://arxiv.org/api/{_feed_key(canonical)}")
    _add(root, atom_tag("title"), f"arXiv Query: {canonical}")
    _add(root, atom_tag("updated"), _stamp(now))
    _add(root, atom_tag("link"), attrs=[("href", link), ("type", "application/atom+xml")])
    _add(root, opensearch_tag("itemsPerPage"), str(max_results))
    _add(root, opensearch_tag("totalResults"), str(total))
    _add(root, opensearch_tag("startIndex"), str(start))
    return root


def _old_header(
    *, search_query: str, id_list: str, start: int, max_results: int, total: int, now: datetime
) -> etree._Element:
    canonical = _canonical(search_query, id_list, start, max_results)
    root = etree.Element(atom_tag("feed"), nsmap={None: ATOM_NS})  # type: ignore[dict-item]
    link = "http://arxiv.org/api/query?" + quote(canonical, safe="")
    self_link = [("href", link), ("rel", "self"), ("type", "application/atom+xml")]
    _add(root, atom_tag("link"), attrs=self_link)
    _add(root, atom_tag("title"), f"ArXiv Query: {canonical}", [("type", "html")])
    _add(root, atom_tag("id"), f"http://arxiv.org/api/{_feed_key(canonical)}")
    _add(root, atom_tag("updated"), _old_stamp(now))
    ns = {"opensearch": OPENSEARCH_NS}
    _add(root, opensearch_tag("totalResults"), str(total), nsmap=ns)
    _add(root, opensearch_tag("startIndex"), str(start), nsmap=ns)
    _add(root, opensearch_tag("itemsPerPage"), str(max_results), nsmap=ns)
    return root


def _add_authors(
    entry: etree._Element,
    record: Record,
    affiliations: Mapping[str, Sequence[str]],
    arxiv_nsmap: Mapping[str, str] | None,
) -> None:
    for name in record.authors:
        author = _add(entry, atom_tag("author"))
        _add(author, atom_tag("name"), name)
        for affiliation in affiliations.get(name, ()):
            _add(author, arxiv_tag("affiliation"), affiliation, nsmap=arxiv_nsmap)


def _categories(record: Record) -> tuple[str, ...]:
    if record.categories:
        return record.categories
    return (record.primary_category,) if record.primary_category else ()


def _new_entry(
    feed: etree._Element,
    record: Record,
    affiliations: Mapping[str, Sequence[str]],
    style: _Style,
) -> None:
    versioned = f"{record.arxiv_id}v{record.version}"
    entry = _add(feed, atom_tag("entry"))
    _add(entry, atom_tag("id"), f"http://arxiv.org/abs/{versioned}")
    _add(entry, atom_tag("title"), style.title(record.title))
    _add(entry, atom_tag("updated"), record.updated)
    abs_link = [("href", f"https://arxiv.org/abs/{versioned}"), ("rel", "alternate")]
    _add(entry, atom_tag("link"), attrs=[*abs_link, ("type", "text/html")])
    pdf_link = [("href", f"https://arxiv.org/pdf/{versioned}"), ("rel", "related")]
    _add(entry, atom_tag("link"), attrs=[*pdf_link, ("type", "application/pdf"), ("title", "pdf")])
    _add(entry, atom_tag("summary"), style.abstract(record.abstract))
    for term in _categories(record):
        _add(entry, atom_tag("category"), attrs=[("term", term), ("scheme", ARXIV_NS)])
    _add(entry, atom_tag("published"), record.published)
    if record.comment is not None:
        _add(entry, arxiv_tag("comment"), style.comment(record.comment))
    if record.primary_category is not None:
        _add(entry, arxiv_tag("primary_category"), attrs=[("term", record.primary_category)])
    if record.journal_ref is not None:
        _add(entry, arxiv_tag("journal_ref"), record.journal_ref)
    _add_authors(entry, record, affiliations, None)
    if record.doi is not None:
        _add(entry, arxiv_tag("doi"), record.doi)
        doi_link = [("rel", "related"), ("href", f"https://doi.org/{record.doi}")]
        _add(entry, atom_tag("link"), attrs=[*doi_link, ("title", "doi")])


def _old_entry(
    feed: etree._Element,
    record: Record,
    affiliations: Mapping[str, Sequence[str]],
    style: _Style,
) -> None:
    versioned = f"{record.arxiv_id}v{record.version}"
    ns = {"arxiv": ARXIV_NS}
    entry = _add(feed, atom_tag("entry"))
    _add(entry, atom_tag("id"), f"http://arxiv.org/abs/{versioned}")
    _add(entry, atom_tag("updated"), record.updated)
    _add(entry, atom_tag("published"), record.published)
    _add(entry, atom_tag("title"), style.title(record.title))
    _add(entry, atom_tag("summary"), style.abstract(record.abstract))
    _add_authors(entry, record, affiliations, ns)
    if record.doi is not None:
        _add(entry, arxiv_tag("doi"), record.doi, nsmap=ns)
        doi_link = [("title", "doi"), ("href", f"http://dx.doi.org/{record.doi}")]
        _add(entry, atom_tag("link"), attrs=[*doi_link, ("rel", "related")])
    if record.comment is not None:
        _add(entry, arxiv_tag("comment"), style.comment(record.comment), nsmap=ns)
    if record.journal_ref is not None:
        _add(entry, arxiv_tag("journal_ref"), record.journal_ref, nsmap=ns)
    abs_link = [("href", f"http://arxiv.org/abs/{versioned}"), ("rel", "alternate")]
    _add(entry, atom_tag("link"), attrs=[*abs_link, ("type", "text/html")])
    pdf_link = [("title", "pdf"), ("href", f"http://arxiv.org/pdf/{versioned}")]
    _add(
        entry, atom_tag("link"), attrs=[*pdf_link, ("rel", "related"), ("type", "application/pdf")]
    )
    if record.primary_category is not None:
        primary = [("term", record.primary_category), ("scheme", ARXIV_NS)]
        _add(entry, arxiv_tag("primary_category"), attrs=primary, nsmap=ns)
    for term in _categories(record):
        _add(entry, atom_tag("category"), attrs=[("term", term), ("scheme", ARXIV_NS)])


def render_feed(
    records: Sequence[Record],
    *,
    total: int | None = None,
    start: int = 0,
    max_results: int = 10,
    search_query: str = "",
    id_list: str = "",
    backend: Backend = "new",
    wrap: bool | None = None,
    now: datetime | None = None,
    affiliations: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> bytes:
    """The Atom feed arXiv would send for ``records`` as one page of a query.

    ``total`` defaults to ``len(records)``; ``wrap`` defaults to the backend's
    habit (the old one hard-wrapped text); ``affiliations`` maps an arXiv id to
    ``{author name: affiliations}``.  Records need ``arxiv_id``, ``version``,
    ``published`` and ``updated``.
    """
    moment = now if now is not None else datetime.now(UTC)
    count = len(records) if total is None else total
    style = _Style(backend, backend == "old" if wrap is None else wrap)
    header = _new_header if backend == "new" else _old_header
    root = header(
        search_query=search_query,
        id_list=id_list,
        start=start,
        max_results=max_results,
        total=count,
        now=moment,
    )
    add_entry = _new_entry if backend == "new" else _old_entry
    for record in records:
        known = (affiliations or {}).get(record.arxiv_id or "", {})
        add_entry(root, record, known, style)
    return _serialize(root, backend)


def render_error_feed(
    message: str, *, backend: Backend = "new", now: datetime | None = None
) -> bytes:
    """arXiv's error feed (sent with HTTP 400): one entry whose summary is ``message``."""
    moment = now if now is not None else datetime.now(UTC)
    stamp = _stamp(moment) if backend == "new" else _old_stamp(moment)
    anchor = "errors#" + message.replace(" ", "_")
    if backend == "new":
        root = etree.Element(
            atom_tag("feed"),
            nsmap={"opensearch": OPENSEARCH_NS, "arxiv": ARXIV_NS, None: ATOM_NS},  # type: ignore[dict-item]
        )
        _add(root, atom_tag("id"), "https://arxiv.org/")
        _add(root, atom_tag("title"), "arXiv Search Results")
        _add(root, atom_tag("updated"), stamp)
        for name, value in (("itemsPerPage", "1"), ("totalResults", "1"), ("startIndex", "0")):
            _add(root, opensearch_tag(name), value)
        entry = _add(root, atom_tag("entry"))
        _add(entry, atom_tag("id"), f"https://arxiv.org/api/{anchor}")
        _add(entry, atom_tag("title"), "Error")
        _add(entry, atom_tag("updated"), stamp)
        link = [("href", f"https://arxiv.org/api/{anchor}"), ("rel", "alternate")]
        _add(entry, atom_tag("link"), attrs=[*link, ("type", "text/html")])
        _add(entry, atom_tag("summary"), message)
    else:
        root = _old_header(search_query="", id_list="", start=0, max_results=1, total=1, now=moment)
        entry = _add(root, atom_tag("entry"))
        _add(entry, atom_tag("id"), f"http://arxiv.org/api/{anchor}")
        _add(entry, atom_tag("title"), "Error")
        _add(entry, atom_tag("summary"), message)
        _add(entry, atom_tag("updated"), stamp)
        link = [("href", f"http://arxiv.org/api/{anchor}"), ("rel", "alternate")]
        _add(entry, atom_tag("link"), attrs=[*link, ("type", "text/html")])
    author = _add(entry, atom_tag("author"))
    _add(author, atom_tag("name"), "arXiv api core")
    return _serialize(root, backend)


# --------------------------------------------------------------------------- search_query


class _ApiError(Exception):
    """A request arXiv answers with HTTP 400 and an error feed."""


class _Token(NamedTuple):
    kind: Literal["(", ")", "op", "term"]
    value: str
    field: str = "all"
    quoted: bool = False


_TOKEN_RE = re.compile(
    r"""\s*(?:
        (?P<paren>[()])
      | (?P<op>ANDNOT|AND|OR)(?![^\s()])
      | (?:(?P<field>[A-Za-z]+):)?(?:"(?P<quoted>[^"]*)"|(?P<bare>[^\s()"]+))
    )""",
    re.VERBOSE,
)

_Predicate = Callable[[Record], bool]


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN_RE.match(text, position)
        if match is None or match.end() == position:
            raise _ApiError(f"unable to parse search_query {text}")
        position = match.end()
        if match["paren"]:
            tokens.append(_Token(match["paren"], match["paren"]))  # type: ignore[arg-type]
        elif match["op"]:
            tokens.append(_Token("op", match["op"]))
        else:
            quoted = match["quoted"] is not None
            value = match["quoted"] if quoted else match["bare"]
            tokens.append(_Token("term", value, (match["field"] or "all").lower(), quoted))
    return tokens


def _folded(text: str | None) -> str:
    return normalize_name(text or "")


def _initialized(name: str) -> str:
    """A name as arXiv's search index initialises it: "John Q. Smith" is "j q smith"."""
    *forenames, surname = normalize_name(name).split() or [""]
    return " ".join([*(f[0] for f in forenames), surname])


def _term_predicate(token: _Token, initialized: bool = False) -> _Predicate:
    """What one ``field:value`` term matches (authors exactly, text fields by substring).

    With ``initialized``, ``au:`` also matches a name whose initialised form is
    the query's ("Jane Smith" and "J. Smith" for ``au:"John Smith"``).
    """
    value = token.value if token.quoted else token.value.replace("_", " ")
    if token.field == "au":
        key = normalize_name(value)
        if initialized:
            short = _initialized(value)
            return lambda record: any(
                normalize_name(name) == key or _initialized(name) == short
                for name in record.authors
            )
        return lambda record: any(normalize_name(name) == key for name in record.authors)
    if token.field == "cat":
        return lambda record: token.value in _categories(record)
    if token.field == "id":
        return lambda record: record.arxiv_id == token.value
    texts: dict[str, Callable[[Record], tuple[str | None, ...]]] = {
        "ti": lambda record: (record.title,),
        "abs": lambda record: (record.abstract,),
        "co": lambda record: (record.comment,),
        "jr": lambda record: (record.journal_ref,),
        "all": lambda record: (record.title, record.abstract, *record.authors),
    }
    fields = texts.get(token.field)
    needle = _folded(value)
    if fields is None or not needle:
        return lambda record: False
    return lambda record: any(needle in _folded(text) for text in fields(record))


class _SearchParser:
    """``term (AND|OR|ANDNOT term)*`` with parentheses; AND binds tighter than OR."""

    def __init__(self, text: str, initialized: bool = False) -> None:
        self._text = text
        self._initialized = initialized
        self._tokens = _tokenize(text)
        self._position = 0

    def parse(self) -> _Predicate | None:
        if not self._tokens:
            return None
        predicate = self._any()
        if self._position != len(self._tokens):
            self._fail()
        return predicate

    def _fail(self) -> None:
        raise _ApiError(f"unable to parse search_query {self._text}")

    def _peek(self) -> _Token | None:
        return self._tokens[self._position] if self._position < len(self._tokens) else None

    def _next(self) -> _Token:
        token = self._peek()
        if token is None:
            raise _ApiError(f"unable to parse search_query {self._text}")
        self._position += 1
        return token

    def _any(self) -> _Predicate:
        alternatives = [self._all()]
        while (token := self._peek()) is not None and token.kind == "op" and token.value == "OR":
            self._position += 1
            alternatives.append(self._all())
        if len(alternatives) == 1:
            return alternatives[0]
        return lambda record: any(p(record) for p in alternatives)

    def _all(self) -> _Predicate:
        required = [self._unary()]
        excluded: list[_Predicate] = []
        while (token := self._peek()) is not None and token.kind != ")":
            if token.kind == "op" and token.value == "OR":
                break
            if token.kind == "op":
                self._position += 1
                (excluded if token.value == "ANDNOT" else required).append(self._unary())
            else:  # juxtaposition is AND
                required.append(self._unary())
        if len(required) == 1 and not excluded:
            return required[0]
        return lambda record: (
            all(p(record) for p in required) and not any(p(record) for p in excluded)
        )

    def _unary(self) -> _Predicate:
        token = self._next()
        if token.kind == "term":
            return _term_predicate(token, self._initialized)
        if token.kind != "(":
            self._fail()
        inner = self._any()
        if self._next().kind != ")":
            self._fail()
        return inner


# --------------------------------------------------------------------------- query parameters


@dataclass(frozen=True, slots=True)
class _Query:
    search_query: str
    id_list: str
    ids: tuple[tuple[str, int | None], ...]
    predicate: _Predicate | None
    start: int
    max_results: int
    sort_by: str
    sort_order: str | None


def _integer(params: Mapping[str, str], name: str, default: int) -> int:
    raw = params.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise _ApiError(f"{name} must be an integer") from None
    if value < 0:
        raise _ApiError(f"{name} must be >= 0")
    return value


# What arXiv's API accepts in id_list: an identifier's shape, not its date or
# archive.  It answers 0000.0000 with the empty feed of
# fixtures/arxiv-api/empty_total0.xml, where syncd's split_arxiv_id refuses month 00.
_API_ID_RE = re.compile(
    r"(?P<id>[0-9]{4}\.[0-9]{4,5}|[a-z][a-z\-]*(?:\.[A-Z]{2})?/[0-9]{7})(?:v(?P<version>[0-9]+))?"
)


def _parse_ids(id_list: str) -> tuple[tuple[str, int | None], ...]:
    ids: list[tuple[str, int | None]] = []
    for raw in id_list.split(","):
        item = raw.strip()
        if not item:
            continue
        match = _API_ID_RE.fullmatch(item)
        if match is None:
            raise _ApiError(f"incorrect id format for {item}")
        version = match.group("version")
        parsed = (match.group("id"), int(version) if version else None)
        if parsed not in ids:
            ids.append(parsed)
    return tuple(ids)


def _parse_query(params: Mapping[str, str], initialized: bool = False) -> _Query:
    start = _integer(params, "start", 0)
    max_results = _integer(params, "max_results", 10)
    if max_results > MAX_RESULTS_LIMIT:
        raise _ApiError(f"max_results must be <= {MAX_RESULTS_LIMIT}")
    sort_by = params.get("sortBy") or "relevance"
    if sort_by not in _SORT_BY:
        raise _ApiError(f"sortBy must be in: {', '.join(_SORT_BY)}")
    sort_order = params.get("sortOrder") or None
    if sort_order is not None and sort_order not in _SORT_ORDER:
        raise _ApiError(f"sortOrder must be in: {', '.join(_SORT_ORDER)}")
    search_query = params.get("search_query", "")
    id_list = params.get("id_list", "")
    return _Query(
        search_query=search_query,
        id_list=id_list,
        ids=_parse_ids(id_list),
        predicate=_SearchParser(search_query, initialized).parse(),
        start=start,
        max_results=max_results,
        sort_by=sort_by,
        sort_order=sort_order,
    )


def _sorted(records: list[Record], sort_by: str, sort_order: str | None) -> list[Record]:
    if sort_by == "relevance":
        return records
    if sort_by == "submittedDate":
        return sorted(records, key=lambda r: r.published or "", reverse=sort_order != "ascending")
    return sorted(records, key=lambda r: r.updated or "", reverse=sort_order != "ascending")


# --------------------------------------------------------------------------- faults and log


FaultKind = Literal[
    "status",
    "timeout",
    "reset",
    "truncate",
    "unknown_author_page",
    "empty_page",
    "total_lie",
    "error_feed",
    "body",
    "slow_drip",
    "empty_result",
    "versions_ignored",
    "stale_version",
    "markup",
    "repeated",
    "entry_id",
    "withheld",
]
# The faults that change the page's first fitting entry, and find nothing to change
# on a page without one.
_ENTRY_FAULTS: frozenset[FaultKind] = frozenset({"stale_version", "markup", "repeated", "entry_id"})
# The Atom text elements of an entry that markup() and repeated() may change.
_ENTRY_TEXT_ELEMENTS = ("id", "title", "summary", "published", "updated")
ParamsPredicate = Callable[[Mapping[str, str]], bool]


@dataclass(frozen=True, slots=True)
class Fault:
    """One misbehaviour, applied to ``times`` requests whose params satisfy ``when``.

    Build them with the helpers (:func:`status`, :func:`timeout`, :func:`reset`,
    :func:`truncate`, :func:`empty_page`, :func:`total_lie`, :func:`error_feed`,
    :func:`body`, :func:`slow_drip`, :func:`empty_result`, :func:`versions_ignored`,
    :func:`stale_version`, :func:`markup`, :func:`repeated`, :func:`entry_id`,
    :func:`refused_version`); each
    field only means something for the kinds that name it.
    """

    kind: FaultKind
    status: int = 200
    retry_after: int | str | None = None
    date: str | None = None  # status: the Date header, instead of the current time
    payload: bytes = b""
    content_type: str = ATOM_CONTENT_TYPE
    seconds: float = 0.0  # timeout: the wait; slow_drip: the delay between chunks
    drop: bool = False  # timeout: close instead of answering after the wait
    keep: float | int = 0.5  # truncate: a fraction (float) or a byte count (int) of the body
    delta: int = 0  # total_lie
    message: str = ""  # error_feed
    chunk_size: int = 64  # slow_drip
    element: str = "title"  # markup, repeated: the entry's Atom element changed
    lead: int = 1  # markup: the words left before the child element
    text: str | None = None  # repeated: the second text; entry_id, withheld: the id
    times: int = 1
    when: ParamsPredicate | None = None

    def __post_init__(self) -> None:
        if self.times < 1:
            raise ValueError("a fault applies to at least one request")
        if self.kind in ("markup", "repeated") and self.element not in _ENTRY_TEXT_ELEMENTS:
            raise ValueError(f"{self.kind}() changes one of {_ENTRY_TEXT_ELEMENTS}")

    def applies_to(self, params: Mapping[str, str]) -> bool:
        """Whether this fault hits a request with these params."""
        return self.when is None or bool(self.when(params))


def status(
    code: int,
    *,
    retry_after: int | str | None = None,
    date: str | None = None,
    body: bytes = b"",
    content_type: str = "text/plain; charset=utf-8",
    times: int = 1,
    when: ParamsPredicate | None = None,
) -> Fault:
    """Answer with HTTP ``code`` (optionally ``Retry-After``, and ``date`` as the ``Date``
    header) and ``body`` instead of the feed."""
    return Fault(
        "status",
        status=code,
        retry_after=retry_after,
        date=date,
        payload=body,
        content_type=content_type,
        times=times,
        when=when,
    )


def timeout(
    seconds: float, *, drop: bool = False, times: int = 1, when: ParamsPredicate | None = None
) -> Fault:
    """Wait ``seconds`` before answering normally (or closing the connection if ``drop``)."""
    return Fault("timeout", seconds=seconds, drop=drop, times=times, when=when)


def reset(*, times: int = 1, when: ParamsPredicate | None = None) -> Fault:
    """Close the connection with a TCP reset and no response at all."""
    return Fault("reset", times=times, when=when)


def truncate(
    keep: float | int = 0.5, *, times: int = 1, when: ParamsPredicate | None = None
) -> Fault:
    """The normal body cut short (a fraction or a byte count), with a matching Content-Length.

    The body always loses at least its last byte, so the XML is never complete.
    """
    return Fault("truncate", keep=keep, times=times, when=when)


def empty_page(*, times: int = 1, when: ParamsPredicate | None = None) -> Fault:
    """The normal feed with its true totalResults but no entries (an old-backend habit)."""
    return Fault("empty_page", times=times, when=when)


def total_lie(delta: int, *, times: int = 1, when: ParamsPredicate | None = None) -> Fault:
    """The normal page with totalResults off by ``delta``."""
    return Fault("total_lie", delta=delta, times=times, when=when)


def error_feed(
    message: str = "internal error",
    *,
    status: int = 400,
    times: int = 1,
    when: ParamsPredicate | None = None,
) -> Fault:
    """arXiv's error feed carrying ``message``, with HTTP ``status``."""
    return Fault("error_feed", message=message, status=status, times=times, when=when)


def body(
    payload: bytes,
    *,
    status: int = 200,
    content_type: str = ATOM_CONTENT_TYPE,
    times: int = 1,
    when: ParamsPredicate | None = None,
) -> Fault:
    """Arbitrary bytes (entity bombs, HTML, junk) as the response body."""
    return Fault(
        "body", payload=payload, status=status, content_type=content_type, times=times, when=when
    )


def slow_drip(
    chunk_delay: float,
    *,
    chunk_size: int = 64,
    times: int = 1,
    when: ParamsPredicate | None = None,
) -> Fault:
    """The normal response, its body sent ``chunk_size`` bytes at a time, ``chunk_delay`` apart."""
    return Fault("slow_drip", seconds=chunk_delay, chunk_size=chunk_size, times=times, when=when)


def empty_result(*, times: int = 1, when: ParamsPredicate | None = None) -> Fault:
    """A valid feed with totalResults 0 and no entries, whatever the query."""
    return Fault("empty_result", times=times, when=when)


def versions_ignored(*, times: int = 1, when: ParamsPredicate | None = None) -> Fault:
    """Answer versioned ids with the current version, as if their ``vN`` were not there."""
    return Fault("versions_ignored", times=times, when=when)


def stale_version(*, times: int = 1, when: ParamsPredicate | None = None) -> Fault:
    """The page's first entry at version 2 or later sent as its previous version instead.

    arXiv's versions never go down, so a client that stored the later version
    must refuse the answer.  A page with no such entry is sent unchanged.
    """
    return Fault("stale_version", times=times, when=when)


def markup(
    element: str = "title",
    *,
    lead: int = 1,
    times: int = 1,
    when: ParamsPredicate | None = None,
) -> Fault:
    """The first entry's ``element`` with its text after ``lead`` words inside a child ``<b>``.

    ``markup("title")`` sends ``<title>Paper <b>on engines</b></title>``, which a
    parser reading ``.text`` takes for the title "Paper"; ``lead=0`` leaves the
    element holding only the child.
    """
    return Fault("markup", element=element, lead=lead, times=times, when=when)


def repeated(
    element: str = "title",
    text: str | None = None,
    *,
    times: int = 1,
    when: ParamsPredicate | None = None,
) -> Fault:
    """The first entry's ``element`` followed by a second one holding ``text`` (or the same)."""
    return Fault("repeated", element=element, text=text, times=times, when=when)


def entry_id(arxiv_id: str, *, times: int = 1, when: ParamsPredicate | None = None) -> Fault:
    """The first entry's ``<id>`` naming ``arxiv_id``, in which ``{id}`` is the entry's own bare id.

    ``entry_id("{id}v0")`` keeps the paper and gives it version 0;
    ``entry_id("2613.00001v1")`` names a month that does not exist.
    """
    return Fault("entry_id", text=arxiv_id, times=times, when=when)


def refused_version(versioned_id: str, *, withheld: bool = False, times: int = 1) -> Fault:
    """Refuse every ``id_list`` request naming ``versioned_id`` (``2602.09578v1``).

    By default the request gets arXiv's error feed (HTTP 400), whatever else
    it asked for; ``withheld`` answers it without that entry instead, as if
    arXiv no longer had the version.  With ``inject_always`` the refusal is
    permanent until ``clear_faults``.
    """

    def names_it(params: Mapping[str, str]) -> bool:
        return versioned_id in params.get("id_list", "").split(",")

    if withheld:
        return Fault("withheld", text=versioned_id, times=times, when=names_it)
    message = f"{versioned_id} cannot be served"
    return Fault("error_feed", message=message, times=times, when=names_it)


@dataclass(frozen=True, slots=True)
class LoggedRequest:
    """One request as the fake saw it.

    ``time`` is ``time.monotonic()`` at arrival; ``status`` is the HTTP status
    sent, or 0 when the connection was closed without a response; ``fault`` the
    kind of fault applied, if any; ``missed`` whether that fault found nothing
    to change (an entry fault on a page without an entry it fits).
    """

    time: float
    params: dict[str, str]
    status: int
    fault: FaultKind | None = None
    path: str = API_PATH
    missed: bool = False


@dataclass(slots=True)
class _Queued:
    fault: Fault
    remaining: int


@dataclass(frozen=True, slots=True)
class _Plan:
    """Everything decided about a response, to be carried out outside the lock."""

    status: int = 200
    body: bytes = b""
    content_type: str = ATOM_CONTENT_TYPE
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    abort: Literal["", "reset", "drop"] = ""
    chunk_delay: float = 0.0
    chunk_size: int = 0
    fault: FaultKind | None = None
    missed: bool = False  # the fault found nothing to change

    @property
    def logged_status(self) -> int:
        return 0 if self.abort else self.status


def _apply_fault(plan: _Plan, fault: Fault) -> _Plan:
    """Turn a normal 200/400 response into the faulty one ``fault`` describes."""
    if fault.kind == "truncate":
        size = len(plan.body)
        keep = int(size * fault.keep) if isinstance(fault.keep, float) else fault.keep
        return replace(plan, body=plan.body[: max(0, min(keep, size - 1))], fault=fault.kind)
    if fault.kind == "timeout":
        return replace(
            plan, delay=fault.seconds, abort="drop" if fault.drop else "", fault=fault.kind
        )
    if fault.kind == "slow_drip":
        return replace(
            plan,
            chunk_delay=fault.seconds,
            chunk_size=max(1, fault.chunk_size),
            fault=fault.kind,
        )
    return replace(plan, fault=fault.kind)


def _edit_first_entry(feed: bytes, fault: Fault, backend: Backend) -> bytes | None:
    """``feed`` with its first entry changed as a markup/repeated/entry_id ``fault`` says.

    ``None`` when the feed has no entry.  The feed is the fake's own rendering,
    so it is parsed back as it is, and written in its backend's way again.
    """
    root = etree.fromstring(feed)
    entry = root.find(atom_tag("entry"))
    name = "id" if fault.kind == "entry_id" else fault.element
    element = entry.find(atom_tag(name)) if entry is not None else None
    if element is None:
        return None
    text = element.text or ""
    if fault.kind == "entry_id":
        bare, _ = split_arxiv_id(text)
        prefix = text.rsplit("/abs/", 1)[0]
        element.text = f"{prefix}/abs/{(fault.text or '').replace('{id}', bare)}"
    elif fault.kind == "markup":
        words = text.split()
        element.text = " ".join(words[: fault.lead]) + " " if fault.lead else None
        child = etree.SubElement(element, atom_tag("b"))
        child.text = " ".join(words[fault.lead :])
    else:
        twin = copy.deepcopy(element)
        twin.text = fault.text if fault.text is not None else text
        element.addnext(twin)
    return _serialize(root, backend)


def _standalone_plan(fault: Fault, backend: Backend) -> _Plan | None:
    """The response of a fault that replaces the query's answer outright, else None."""
    if fault.kind == "reset":
        return _Plan(abort="reset", fault=fault.kind)
    if fault.kind in ("status", "body"):
        headers: tuple[tuple[str, str], ...] = ()
        if fault.retry_after is not None:
            headers = (("Retry-After", str(fault.retry_after)),)
        if fault.date is not None:
            headers += (("Date", fault.date),)
        return _Plan(
            status=fault.status,
            body=fault.payload,
            content_type=fault.content_type,
            headers=headers,
            fault=fault.kind,
        )
    if fault.kind == "error_feed":
        feed = render_error_feed(fault.message, backend=backend)
        return _Plan(status=fault.status, body=feed, fault=fault.kind)
    return None


# --------------------------------------------------------------------------- HTTP plumbing


class _Handler(LoopbackHandler):
    server_version = "FakeArxiv/1.0"

    def do_GET(self) -> None:
        self.owner._serve(self, urlsplit(self.path).query)

    def do_POST(self) -> None:
        try:
            length = max(0, int(self.headers.get("Content-Length") or 0))
        except ValueError:
            length = 0
        form = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        query = urlsplit(self.path).query
        self.owner._serve(self, "&".join(part for part in (query, form) if part))


# --------------------------------------------------------------------------- the fake


_AMENDABLE = frozenset({"journal_ref", "doi", "comment", "categories", "primary_category"})
DEFAULT_EPOCH = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
# The notice arXiv puts in the abstract of a version its authors withdrew.
WITHDRAWN_BY_AUTHORS = "This paper has been withdrawn by the authors."


def _with_withdrawal(record: Record) -> Record:
    """``record`` with ``withdrawn`` and ``withdrawn_by`` as syncd reads them from its text."""
    verdict = detect_withdrawal(record.abstract, record.comment)
    return replace(record, withdrawn=verdict.withdrawn, withdrawn_by=verdict.by)


class FakeArxiv(LoopbackServer):
    """A threaded arXiv API server on 127.0.0.1; use it as a context manager.

    ``backend`` picks the response format ("new": the fixtures' format; "old":
    per-element namespaces, hard-wrapped text); ``wrap`` forces text wrapping on
    or off; ``clock`` gives the feed's ``<updated>``; ``epoch`` and ``step``
    drive the times filled into records published without them.  ``backend``
    and ``wrap`` may be changed while serving.

    ``initialized_names`` makes ``au:`` as loose as arXiv's: its search also
    matches every name whose initialised form (forenames' initials, then the
    surname) is the query's, so ``au:"John Smith"`` finds "Jane Smith",
    "Joe Smith" and "J. Smith" (arXiv/arxiv-search: the classic API strips a
    term's quotes, and its author query then matches ``full_name_initialized``
    exactly; its phrase and any-order matches are not modelled).  Off by
    default: most tests pin exact names.
    """

    def __init__(
        self,
        *,
        backend: Backend = "new",
        wrap: bool | None = None,
        clock: Callable[[], datetime] | None = None,
        epoch: datetime = DEFAULT_EPOCH,
        step: timedelta = timedelta(days=1),
        initialized_names: bool = False,
    ) -> None:
        super().__init__(_Handler)
        self.initialized_names = initialized_names
        self.backend: Backend = backend
        self.wrap = wrap
        self._clock = clock if clock is not None else (lambda: datetime.now(UTC))
        self._next_time = epoch
        self._step = step
        self._lock = threading.Lock()
        self._papers: dict[str, list[Record]] = {}
        self._affiliations: dict[str, dict[str, tuple[str, ...]]] = {}
        self._removed: dict[str, bool] = {}  # id -> still found by id_list
        self._log: list[LoggedRequest] = []
        self._queue: list[_Queued] = []
        self._always: list[Fault] = []
        self._claims: dict[str, list[str]] = {}  # feed id -> arXiv ids, in claim order
        # The OAI-PMH side: datestamps by the fake's day (``oai.today``), paging, tokens.
        self.oai = OaiWorld(epoch.date(), (wrap_title, wrap_abstract))

    @property
    def author_feed_url(self) -> str:
        """What ``[arxiv] author_feed_url`` points at: ``http://127.0.0.1:PORT/a/``."""
        return self.base_url + AUTHOR_FEED_PREFIX

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        if self._server is None:
            raise RuntimeError("FakeArxiv is not running")
        return f"http://127.0.0.1:{self._server.server_port}"

    @property
    def url(self) -> str:
        """The query endpoint, ``http://127.0.0.1:PORT/api/query``."""
        return self.base_url + API_PATH

    @property
    def oai_url(self) -> str:
        """The OAI-PMH base URL, ``http://127.0.0.1:PORT/oai``."""
        return self.base_url + OAI_PATH

    # ---- papers

    def publish(
        self,
        record: Record,
        *,
        affiliations: Mapping[str, str | Sequence[str]] | None = None,
    ) -> Record:
        """Add the next version of ``record.arxiv_id`` and return it as stored.

        ``record.version`` must be one more than the current version (1 for a
        new paper).  The stored record has ``published`` (v1's time) and
        ``updated`` filled when None, times written as arXiv does,
        ``authors_complete`` true and ``withdrawn``/``withdrawn_by`` derived
        from abstract and comment.  ``affiliations`` maps author names to their affiliations.
        A removed paper published again reappears.
        """
        arxiv_id = _bare_id(record.arxiv_id)
        with self._lock:
            history = self._papers.get(arxiv_id, [])
            expected = len(history) + 1
            if record.version != expected:
                raise ValueError(f"{arxiv_id}: next version is {expected}, got {record.version}")
            stored = self._complete(replace(record, arxiv_id=arxiv_id), history)
            self._papers[arxiv_id] = [*history, stored]
            self._removed.pop(arxiv_id, None)
            self.oai.touch(arxiv_id)
            if affiliations is not None:
                self._affiliations[arxiv_id] = {
                    name: (value,) if isinstance(value, str) else tuple(value)
                    for name, value in affiliations.items()
                }
        return stored

    def amend(self, arxiv_id: str, **fields: Any) -> Record:
        """Change the current version's journal_ref/doi/comment/categories/primary_category.

        arXiv records these without a new version; ``updated`` is unchanged.
        """
        unknown = set(fields) - _AMENDABLE
        if unknown:
            raise TypeError(f"amend() cannot change {sorted(unknown)}; publish a new version")
        if "categories" in fields:
            fields["categories"] = tuple(fields["categories"])
        with self._lock:
            history = self._history(arxiv_id)
            amended = _with_withdrawal(replace(history[-1], **fields))
            history[-1] = amended
            self.oai.touch(arxiv_id)
        return amended

    def revise(self, arxiv_id: str, **fields: Any) -> Record:
        """Publish the next version of a paper: the current one with ``fields`` changed.

        ``updated`` is filled afresh, as a new version is a new submission.
        """
        current = self.current(arxiv_id)
        version = (current.version or 0) + 1
        return self.publish(replace(current, version=version, updated=None, **fields))

    def withdraw(
        self, arxiv_id: str, reason: str | None = None, *, notice: str = WITHDRAWN_BY_AUTHORS
    ) -> Record:
        """Publish a withdrawal: a new version whose abstract is arXiv's ``notice``.

        As in arXiv's 2023 process, the comment holds the ``reason``.
        """
        if not detect_withdrawal(notice, None).withdrawn:
            raise ValueError(f"{notice!r} is not a withdrawal notice arXiv writes")
        return self.revise(arxiv_id, abstract=notice, comment=reason, published=None)

    def remove(self, arxiv_id: str, *, keep_id_lookup: bool = False) -> None:
        """Make a paper vanish from searches (and from id_list unless ``keep_id_lookup``)."""
        with self._lock:
            self._history(arxiv_id)
            self._removed[arxiv_id] = keep_id_lookup

    def restore(self, arxiv_id: str) -> None:
        """Let a removed paper be found again as it was, without a new version."""
        with self._lock:
            self._history(arxiv_id)
            self._removed.pop(arxiv_id, None)

    def claim(self, feed_id: str, *arxiv_ids: str) -> None:
        """Let the author ``feed_id`` (ORCID iD or arXiv author id) claim papers.

        With no ids, the author exists with an empty feed; an author never
        claimed for answers 400 with arXiv's page for it, as arXiv does for an
        id it knows no author by (``unknown_author_page``).
        """
        with self._lock:
            for arxiv_id in arxiv_ids:
                self._history(arxiv_id)
            claimed = self._claims.setdefault(feed_id, [])
            claimed += [i for i in arxiv_ids if i not in claimed]

    def unclaim(self, feed_id: str) -> None:
        """Empty the author's feed (the id stays known)."""
        with self._lock:
            self._claims[feed_id] = []

    @property
    def papers(self) -> dict[str, tuple[Record, ...]]:
        """A snapshot of every paper not removed: id -> its versions, oldest first."""
        with self._lock:
            return {
                arxiv_id: tuple(history)
                for arxiv_id, history in self._papers.items()
                if arxiv_id not in self._removed
            }

    def current(self, arxiv_id: str) -> Record:
        """The latest version of a paper (removed or not)."""
        with self._lock:
            return self._history(arxiv_id)[-1]

    # ---- request log

    @property
    def requests(self) -> list[LoggedRequest]:
        """Every request so far, in arrival order (the live list: ``.clear()`` works)."""
        return self._log

    def reset_log(self) -> None:
        """Forget the requests seen so far."""
        with self._lock:
            self._log.clear()

    # ---- faults

    def inject(self, *faults: Fault) -> None:
        """Queue faults; each request takes the first queued fault whose ``when`` matches."""
        with self._lock:
            self._queue.extend(_Queued(fault, fault.times) for fault in faults)

    def inject_always(self, fault: Fault) -> None:
        """Apply ``fault`` to every matching request that no queued fault took, until cleared."""
        with self._lock:
            self._always.append(fault)

    def clear_faults(self) -> None:
        """Drop queued and persistent faults."""
        with self._lock:
            self._queue.clear()
            self._always.clear()

    @property
    def pending_faults(self) -> tuple[Fault, ...]:
        """The queued faults not yet used up (each listed once)."""
        with self._lock:
            return tuple(item.fault for item in self._queue)

    # ---- answering without HTTP

    def respond(self, params: Mapping[str, str]) -> tuple[int, bytes]:
        """The status and body the server would send for ``params``, ignoring faults."""
        with self._lock:
            plan = self._answer(params, None)
        return plan.status, plan.body

    # ---- internals

    def _history(self, arxiv_id: str) -> list[Record]:
        history = self._papers.get(arxiv_id)
        if not history:
            raise KeyError(f"no paper {arxiv_id} on the fake arXiv")
        return history

    def _tick(self, after: str | None) -> str:
        moment = self._next_time
        if after is not None:
            moment = max(moment, _parse_time(after) + self._step)
        self._next_time = moment + self._step
        return _stamp(moment)

    def _see(self, stamp: str) -> None:
        self._next_time = max(self._next_time, _parse_time(stamp) + self._step)

    def _complete(self, record: Record, history: list[Record]) -> Record:
        if record.withdrawn and not detect_withdrawal(record.abstract, record.comment).withdrawn:
            raise ValueError("arXiv announces a withdrawal in its notice; use withdraw()")
        previous = history[-1].updated if history else None
        published = _normalize_time(record.published) if record.published else None
        updated = _normalize_time(record.updated) if record.updated else None
        if history:
            first = history[0].published
            if published is not None and published != first:
                raise ValueError(f"{record.arxiv_id}: published is v1's time {first}")
            published = first
            if updated is not None and previous is not None and updated <= previous:
                raise ValueError(
                    f"{record.arxiv_id}: updated {updated} is not after v{len(history)}'s "
                    f"{previous}; pass updated=None to have one filled"
                )
        if updated is None:
            updated = published if not history and published else self._tick(previous)
        published = published or updated
        self._see(updated)
        return _with_withdrawal(
            replace(record, published=published, updated=updated, authors_complete=True)
        )

    def _take_fault(self, params: Mapping[str, str]) -> Fault | None:
        for item in self._queue:
            if item.fault.applies_to(params):
                item.remaining -= 1
                if item.remaining == 0:
                    self._queue.remove(item)
                return item.fault
        return next((fault for fault in self._always if fault.applies_to(params)), None)

    def _select(self, query: _Query) -> list[Record]:
        if query.ids:
            found: list[Record] = []
            for arxiv_id, version in query.ids:
                history = self._papers.get(arxiv_id)
                found_by_id = self._removed.get(arxiv_id, True)  # removed: only if kept
                if not history or not found_by_id:
                    continue
                if version is not None and not 1 <= version <= len(history):
                    continue
                if query.predicate is None or query.predicate(history[-1]):
                    found.append(history[-1] if version is None else history[version - 1])
            return found
        if query.predicate is None:
            return []
        predicate = query.predicate
        return [
            history[-1]
            for arxiv_id, history in self._papers.items()
            if arxiv_id not in self._removed and predicate(history[-1])
        ]

    def _answer(self, params: Mapping[str, str], fault: Fault | None) -> _Plan:
        backend = self.backend
        try:
            query = _parse_query(params, self.initialized_names)
        except _ApiError as error:
            missed = fault is not None and fault.kind in _ENTRY_FAULTS
            body = render_error_feed(str(error), backend=backend)
            return _Plan(status=400, body=body, missed=missed)
        kind = fault.kind if fault is not None else None
        if kind == "versions_ignored":
            query = replace(query, ids=tuple((arxiv_id, None) for arxiv_id, _ in query.ids))
        matches = _sorted(self._select(query), query.sort_by, query.sort_order)
        if kind == "withheld" and fault is not None:
            matches = [r for r in matches if f"{r.arxiv_id}v{r.version}" != fault.text]
        total = len(matches)
        page = matches[query.start : query.start + query.max_results]
        missed = False
        if kind in ("empty_page", "empty_result"):
            page = []
            total = 0 if kind == "empty_result" else total
        elif kind == "total_lie" and fault is not None:
            total += fault.delta
        elif kind == "stale_version":
            page, missed = self._stale(page)
        feed = render_feed(
            page,
            total=total,
            start=query.start,
            max_results=query.max_results,
            search_query=query.search_query,
            id_list=query.id_list,
            backend=backend,
            wrap=self.wrap,
            now=self._clock(),
            affiliations=self._affiliations,
        )
        if fault is not None and kind in ("markup", "repeated", "entry_id"):
            edited = _edit_first_entry(feed, fault, backend)
            missed = edited is None
            feed = edited if edited is not None else feed
        return _Plan(body=feed, missed=missed)

    def _stale(self, page: list[Record]) -> tuple[list[Record], bool]:
        """``page`` with its first entry at version 2 or later sent as the version before.

        Also whether no entry fitted (the page is then unchanged).
        """
        for index, record in enumerate(page):
            version = record.version or 0
            if version >= 2:
                earlier = self._papers[record.arxiv_id or ""][version - 2]
                return [*page[:index], earlier, *page[index + 1 :]], False
        return page, True

    def _author_feed(self, feed_id: str, feed_format: FeedFormat, *, empty: bool) -> _Plan:
        """An author's claimed papers, current versions, as arXiv's feed in ``feed_format``.

        ``empty`` lists none of them (the ``empty_result`` fault).
        """
        claimed = self._claims.get(feed_id)
        if claimed is None:
            return _Plan(
                status=400,
                body=unknown_author_page(feed_id),
                content_type="text/html; charset=utf-8",
            )
        records = [] if empty else [self._papers[i][-1] for i in claimed if i not in self._removed]
        feed = author_feed_xml(
            feed_id,
            records,
            feed_format,
            affiliations=self._affiliations,
            now=self._clock(),
        )
        return _Plan(body=feed)

    def _plan(self, path: str, params: Mapping[str, str]) -> _Plan:
        if path == OAI_PATH:
            return self._oai_plan(params)
        feed = _author_feed_path(path)
        if path != API_PATH and feed is None:
            return _Plan(status=404, body=b"Not Found", content_type="text/plain; charset=utf-8")
        if feed is not None:
            # Faults tell an author feed by this pseudo parameter, e.g.
            # ``when=lambda p: p.get("author_feed") == "warner_s_1"``.
            params = {**params, "author_feed": feed[0]}

        def answer(fault: Fault | None) -> _Plan:
            if feed is None:
                return self._answer(params, fault)
            empty = fault is not None and fault.kind == "empty_result"
            return self._author_feed(*feed, empty=empty)

        fault = self._take_fault(params)
        if fault is not None:
            standalone = _standalone_plan(fault, self.backend)
            if standalone is not None:
                return standalone
            return _apply_fault(answer(fault), fault)
        return answer(None)

    def _oai_plan(self, params: Mapping[str, str]) -> _Plan:
        fault = self._take_fault(params)
        if fault is not None:
            standalone = _standalone_plan(fault, self.backend)
            if standalone is not None:
                return standalone
        visible = {i: h for i, h in self._papers.items() if i not in self._removed}
        code, answer = self.oai.answer(params, visible)
        plan = _Plan(status=code, body=answer, content_type=OAI_CONTENT_TYPE)
        return plan if fault is None else _apply_fault(plan, fault)

    def _serve(self, handler: _Handler, query_string: str) -> None:
        arrival = time.monotonic()
        path = urlsplit(handler.path).path
        params = dict(parse_qsl(query_string, keep_blank_values=True))
        try:
            with self._lock:
                plan = self._plan(path, params)
                self._log.append(
                    LoggedRequest(
                        arrival, params, plan.logged_status, plan.fault, path, plan.missed
                    )
                )
        except Exception as error:  # a bug in the fake: answer 500 and fail the test on exit
            self.errors.append(error)
            text = traceback.format_exc().encode()
            plan = _Plan(status=500, body=text, content_type="text/plain; charset=utf-8")
        try:
            self._deliver(handler, plan)
        except OSError:  # the client went away; the server carries on
            handler.close_connection = True

    def _deliver(self, handler: _Handler, plan: _Plan) -> None:
        if plan.delay and self._stopping.wait(plan.delay):
            handler.close_connection = True
            return
        if plan.abort:
            handler.close_connection = True
            if plan.abort == "reset":  # RST instead of FIN once the socket is really closed
                linger = struct.pack("ii", 1, 0)
                handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                handler.connection.close()
            return
        # send_response's work, but the Date is the plan's when it has one.
        handler.log_request(plan.status)
        handler.send_response_only(plan.status)
        handler.send_header("Server", handler.version_string())
        if not any(name == "Date" for name, _ in plan.headers):
            handler.send_header("Date", handler.date_time_string())
        handler.send_header("Content-Type", plan.content_type)
        handler.send_header("Content-Length", str(len(plan.body)))
        for name, value in plan.headers:
            handler.send_header(name, value)
        handler.end_headers()
        if not plan.chunk_size:
            handler.wfile.write(plan.body)
            return
        for offset in range(0, len(plan.body), plan.chunk_size):
            if offset and self._stopping.wait(plan.chunk_delay):
                handler.close_connection = True
                return
            handler.wfile.write(plan.body[offset : offset + plan.chunk_size])


def unknown_author_page(feed_id: str) -> bytes:
    """arXiv's answer to an author feed of an id it knows no author by: a 400 page.

    arxiv-browse raises ``BadRequest(f'Author {id} not found')``
    (browse/controllers/list_page/author.py), which its handler renders with
    its 400.html template: the description is the page's title and heading.
    The rest of arXiv's page (its header, footer and help text) is left out.
    """
    description = html.escape(f"Author {feed_id} not found")
    page = (
        f'<!DOCTYPE html>\n<html lang="en">\n<head><title>{description}</title></head>\n'
        f"<body><main><h1>{description}</h1></main></body>\n</html>\n"
    )
    return page.encode("utf-8")


def _author_feed_path(path: str) -> tuple[str, FeedFormat] | None:
    """The id and format of ``/a/<id>.atom`` or ``/a/<id>.atom2``, else None."""
    if not path.startswith(AUTHOR_FEED_PREFIX):
        return None
    feed_id, _, suffix = path[len(AUTHOR_FEED_PREFIX) :].rpartition(".")
    for feed_format in AUTHOR_FEED_FORMATS:
        if suffix == feed_format and feed_id:
            return feed_id, feed_format
    return None


def _parse_time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _bare_id(arxiv_id: str | None) -> str:
    if arxiv_id is None:
        raise ValueError("a paper on arXiv needs an arxiv_id")
    bare, version = split_arxiv_id(arxiv_id)
    if version is not None or bare != arxiv_id:
        raise ValueError(f"give the bare id, not {arxiv_id!r}; the version is record.version")
    return bare


# --------------------------------------------------------------------------- helpers for tests


def make_record(
    arxiv_id: str,
    version: int = 1,
    *,
    title: str | None = None,
    authors: Sequence[str] = (DEFAULT_AUTHOR, "Charles Babbage"),
    abstract: str | None = None,
    primary_category: str = "cs.LG",
    categories: Sequence[str] | None = None,
    **fields: Any,
) -> Record:
    """A complete arXiv-side record with sensible defaults (cs.LG, two authors, full list)."""
    return Record(
        arxiv_id=arxiv_id,
        version=version,
        title=title if title is not None else f"On the analytical engine, part {arxiv_id}",
        abstract=abstract
        if abstract is not None
        else f"We study the engine described in {arxiv_id} and report what it computes.",
        authors=tuple(authors),
        authors_complete=True,
        primary_category=primary_category,
        categories=tuple(categories) if categories is not None else (primary_category, "stat.ML"),
        **fields,
    )


_PLACEHOLDER = "HOSTILE-TITLE-PLACEHOLDER"


def _hostile_feed(internal_subset: str, title: str) -> bytes:
    """A one-entry feed in the current format with a DTD and ``title`` as raw markup."""
    sample = replace(
        make_record("2606.00001"),
        title=_PLACEHOLDER,
        published="2026-06-01T12:00:00Z",
        updated="2026-06-01T12:00:00Z",
    )
    feed = render_feed(
        [sample], id_list="2606.00001", now=datetime(2026, 6, 1, tzinfo=UTC)
    ).decode()
    declaration, rest = feed.split("\n", 1)
    doctype = f"<!DOCTYPE feed [\n{internal_subset}\n]>"
    return "\n".join((declaration, doctype, rest.replace(_PLACEHOLDER, title))).encode()


def _billion_laughs() -> bytes:
    entities = ['  <!ENTITY lol0 "lol">']
    entities += [f'  <!ENTITY lol{n} "{f"&lol{n - 1};" * 10}">' for n in range(1, 10)]
    return _hostile_feed("\n".join(entities), "&lol9;")


# Ten nested entities of ten references each: 10**9 "lol"s once expanded.
BILLION_LAUGHS: bytes = _billion_laughs()
# One 10 kB entity referenced 10 000 times: ~100 MB once expanded, no nesting needed.
QUADRATIC_BLOWUP: bytes = _hostile_feed(f'  <!ENTITY a "{"a" * 10_000}">', "&a;" * 10_000)
# External entities a safe parser must never fetch.
EXTERNAL_ENTITY_FILE: bytes = _hostile_feed('  <!ENTITY xxe SYSTEM "file:///etc/passwd">', "&xxe;")
EXTERNAL_ENTITY_HTTP: bytes = _hostile_feed('  <!ENTITY xxe SYSTEM "http://127.0.0.1:9/">', "&xxe;")
# What a reverse proxy in front of arXiv sends when the backend is down.
HTML_PROXY_PAGE: bytes = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
    b"</body>\r\n</html>\r\n"
)
