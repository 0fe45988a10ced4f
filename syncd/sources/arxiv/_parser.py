"""Read the entries of an arXiv Atom feed into ``Record``s; ``_reader`` feeds them in.

Two steps, as miniflux does it: ``read_entry`` copies an entry's Atom/arXiv
fields as they are, ``build_record`` validates and normalises them into the
canonical ``Record``.  Each entry's children are walked once and dispatched on
their tag (no XPath per field), and text that is already normalised, as the
current backend sends it, skips ``normalize_text``'s split and join.

Both of the API's formats parse to the same records: the current backend
(namespaces on the root, unwrapped text) and the old one (namespaces declared
per element, titles and abstracts hard-wrapped); ``normalize_text`` removes the
wrapping.  An author's own feed (``parse_author_feed``) is arxiv-browse's Atom,
not the API's: unpaged, TeX as submitted, ``+00:00`` times, and in ``.atom2``
every author of an entry joined in one ``<name>``.  Every record goes through
``syncd.domain.canonical``, so a version reads alike from each.

The body is untrusted.  arXiv never sends a DOCTYPE, so any document with one,
or with entity declarations, is refused before and after parsing, and the
parser itself neither expands entities nor loads anything from the network or
the file system.  ``syncd.sources.arxiv._reader`` reads a feed as it arrives
with this module's hardened parser, checks and entry readers.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from lxml import etree

from syncd.domain.canonical import canonical, split_joined_names
from syncd.domain.record import (
    ArxivIdError,
    Record,
    normalize_text,
    split_arxiv_id,
    versioned_id,
)
from syncd.domain.withdrawal import detect_withdrawal
from syncd.errors import FeedError

__all__ = [
    "COUNTERS",
    "DTD_REFUSED",
    "ENTRY",
    "ERROR_ID_MARK",
    "FEED",
    "AuthorFeedFormat",
    "build_record",
    "clean_text",
    "hardened_parser",
    "hardened_pull_parser",
    "read_counter",
    "read_entry",
    "refuse_declarations",
    "shape_hint",
]

# An author's feed, ``<author_feed_url><id>.atom`` or ``.atom2``: the same
# entries, but ``.atom2`` joins an entry's authors in one <name> (arXiv's help
# on author identifiers: "atom2: authors combined").
AuthorFeedFormat = Literal["atom", "atom2"]

_ATOM = "{http://www.w3.org/2005/Atom}"
_ARXIV = "{http://arxiv.org/schemas/atom}"
_OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"

FEED = _ATOM + "feed"
ENTRY = _ATOM + "entry"
_ID = _ATOM + "id"
_TITLE = _ATOM + "title"
_SUMMARY = _ATOM + "summary"
_AUTHOR = _ATOM + "author"
_NAME = _ATOM + "name"
_CATEGORY = _ATOM + "category"
_LINK = _ATOM + "link"
_PUBLISHED = _ATOM + "published"
_UPDATED = _ATOM + "updated"
_COMMENT = _ARXIV + "comment"
_JOURNAL_REF = _ARXIV + "journal_ref"
_DOI = _ARXIV + "doi"
_PRIMARY_CATEGORY = _ARXIV + "primary_category"
_TOTAL_RESULTS = _OPENSEARCH + "totalResults"
_START_INDEX = _OPENSEARCH + "startIndex"
_ITEMS_PER_PAGE = _OPENSEARCH + "itemsPerPage"
# The OpenSearch counters a page of the API carries, in the order a missing one is named.
COUNTERS: dict[str, str] = {
    _TOTAL_RESULTS: "totalResults",
    _START_INDEX: "startIndex",
    _ITEMS_PER_PAGE: "itemsPerPage",
}

# Children of <entry> read as plain text, and the _RawEntry field each one fills.
_TEXT_FIELDS: dict[str, str] = {
    _ID: "id",
    _TITLE: "title",
    _SUMMARY: "summary",
    _PUBLISHED: "published",
    _UPDATED: "updated",
    _COMMENT: "comment",
    _JOURNAL_REF: "journal_ref",
    _DOI: "doi",
}

# How a refused element is named in messages: the prefixes a feed binds.
_PREFIXES = ((_ATOM, ""), (_ARXIV, "arxiv:"))

# arXiv's error feed: one entry whose id points into the API's error pages.
ERROR_ID_MARK = "arxiv.org/api/errors"
_DOI_URL_MARK = "doi.org/"
DTD_REFUSED = "the body declares a DOCTYPE or entities, which arXiv never sends"
_MAX_COUNTER_DIGITS = 18


@dataclass(slots=True)
class _RawEntry:
    """An entry's fields exactly as the feed holds them, before any validation.

    A text field is ``None`` when its element is absent or empty.
    """

    id: str | None = None
    title: str | None = None
    summary: str | None = None
    published: str | None = None
    updated: str | None = None
    comment: str | None = None
    journal_ref: str | None = None
    doi: str | None = None
    primary_category: str | None = None
    doi_link: str | None = None
    authors: list[str | None] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)


class _DenyResolver(etree.Resolver):
    """Answers every request for an external DTD or entity with nothing.

    ``no_network`` only stops network fetches; libxml2 would still read a
    ``file://`` external subset.  This resolver stops that too.
    """

    def resolve(self, system_url: str, public_id: str, context: object = None) -> object:
        return self.resolve_string("", context, base_url=None)


# Nothing is loaded, expanded or resolved; libxml2's own limits (depth, sizes) hold.
_HARDENED: dict[str, Any] = {
    "encoding": "utf-8",
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "dtd_validation": False,
    "attribute_defaults": False,
    "huge_tree": False,
    "recover": False,
    "collect_ids": False,
    # Comments and processing instructions would split an element's text;
    # without them ``.text`` is the whole text of the leaf elements read.
    "remove_comments": True,
    "remove_pis": True,
    "remove_blank_text": True,
}


def hardened_parser() -> etree.XMLParser:
    """A fresh hardened parser for arXiv's XML (lxml parsers must not be shared by threads)."""
    parser = etree.XMLParser(**_HARDENED)
    parser.resolvers.add(_DenyResolver())
    return parser


def hardened_pull_parser(tags: Sequence[str]) -> etree.XMLPullParser:
    """The hardened parser fed piece by piece, reporting the end of each element of ``tags``.

    What was read before a fault (a byte that is not UTF-8, nesting past the
    depth limit) stays readable in its events.
    """
    parser = etree.XMLPullParser(events=("end",), tag=tags, **_HARDENED)
    parser.resolvers.add(_DenyResolver())
    return parser


def refuse_declarations(body: bytes) -> None:
    """Refuse an empty body, and one declaring a DOCTYPE or entities, before any parser sees it.

    Every arXiv service's XML (the API's feeds, OAI-PMH's pages) goes through here.
    """
    if not body or body.isspace():
        raise FeedError("the response body is empty")
    # arXiv never sends a DOCTYPE: refusing one up front stops entity bombs and
    # external entities before libxml2 sees them.  The parser is forced to
    # UTF-8, so these ASCII byte patterns cannot hide behind another encoding.
    if _declares(body):
        raise FeedError(DTD_REFUSED + shape_hint(body))


# "!" is rare in arXiv's XML, "<" is in every tag: found by memchr, the few "!" are checked
# where they are (searching "<!DOCTYPE" among the "<" cost 1 to 4 us a harvested record,
# up to a sixth of its CPU; this costs 0.02).
# A body with more than this many is searched whole, as before.
_MOST_BANGS = 1000
_DECLARATIONS = (b"DOCTYPE", b"ENTITY")


def _declares(body: bytes) -> bool:
    """Whether ``body`` holds ``<!DOCTYPE`` or ``<!ENTITY`` anywhere."""
    position = body.find(b"!")
    for _ in range(_MOST_BANGS):
        if position < 0:
            return False
        if body[position - 1 : position] == b"<" and body.startswith(_DECLARATIONS, position + 1):
            return True
        position = body.find(b"!", position + 1)
    return b"<!DOCTYPE" in body or b"<!ENTITY" in body


def shape_hint(body: bytes) -> str:
    """What a body that is not arXiv's XML looks like, for the error message; "" if unclear."""
    head = body[:4096].lstrip(b" \t\r\n\xef\xbb\xbf").lower()
    if b"<html" in head:
        return " (it looks like an HTML page)"
    if head[:1] in (b"{", b"["):
        return " (it looks like JSON)"
    return ""


def read_counter(element: etree._Element, name: str, previous: int | None) -> int:
    """An OpenSearch counter's value; ``previous``: the same counter's value read before."""
    # A second counter would silently replace the first, and markup would cut
    # the text short (``1<b/>0`` reads as 1): either way the count is a guess.
    if previous is not None:
        raise FeedError(f"the feed has more than one <opensearch:{name}>")
    if len(element):
        raise FeedError(f"<opensearch:{name}> holds child elements")
    text = (element.text or "").strip()
    if not text.isdigit() or not text.isascii():
        raise FeedError(f"<opensearch:{name}> is {text[:40]!r}, not a non-negative integer")
    # int() refuses more than 4,300 digits with a ValueError; no result set needs 19.
    if len(text) > _MAX_COUNTER_DIGITS:
        raise FeedError(f"<opensearch:{name}> has {len(text)} digits; no result set is that large")
    return int(text)


def read_entry(entry: etree._Element, position: int) -> _RawEntry:
    """Copy an entry's fields as they are, walking its children once.

    The repeated children (authors, links, categories) are tested first, so
    most children cost one or two tag comparisons.  A single-valued element
    given twice, or a text element holding child elements, makes the entry
    malformed: lxml's ``.text`` stops at the first child (``Paper <b>bold</b>``
    reads as "Paper") and a second element would replace the first, so either
    would store a truncated or arbitrary value as if arXiv had sent it.
    """
    raw = _RawEntry()
    seen: set[str] = set()
    for child in entry:
        tag = child.tag
        if tag == _AUTHOR:
            # Almost every author is one <name> holding only text; indexing
            # avoids an iterator per author.  Anything else is looked at whole.
            name = child[0] if len(child) == 1 else None
            if name is None or name.tag != _NAME or len(name):
                name = _author_name(child, raw, position)
            raw.authors.append(None if name is None else name.text)
        elif tag == _LINK:
            if child.get("title") == "doi":
                raw.doi_link = child.get("href")
        elif tag == _CATEGORY:
            raw.categories.append(child.get("term") or "")
        else:
            text_field = _TEXT_FIELDS.get(tag)
            if text_field is None and tag != _PRIMARY_CATEGORY:
                continue
            if tag in seen or len(child):
                problem = "more than one" if tag in seen else "child elements inside"
                raise _malformed(raw, position, f"{problem} <{_shown(tag)}>")
            seen.add(tag)
            if text_field is None:
                raw.primary_category = child.get("term")
            else:
                setattr(raw, text_field, child.text)
    return raw


def _author_name(author: etree._Element, raw: _RawEntry, position: int) -> etree._Element | None:
    """An <author>'s one <name>, found among its other children (<arxiv:affiliation>).

    ``None`` when it has none (the record builder refuses that); two names, or
    a name holding child elements, make the entry malformed.
    """
    names = [part for part in author if part.tag == _NAME]
    if len(names) > 1:
        raise _malformed(raw, position, "an <author> with more than one <name>")
    if names and len(names[0]):
        raise _malformed(raw, position, "child elements inside an author's <name>")
    return names[0] if names else None


def _malformed(raw: _RawEntry, position: int, problem: str) -> FeedError:
    """The error for an entry holding ``problem``, naming it by position and, if read yet, id."""
    shown = (raw.id or "").strip().rsplit("/abs/", 1)[-1][:60]
    where = f"entry {position} ({shown})" if shown and shown.isprintable() else f"entry {position}"
    return FeedError(f"{where} is malformed: it has {problem}")


def _shown(tag: str) -> str:
    """An element's name as a feed spells it: ``title``, ``arxiv:comment``."""
    for namespace, prefix in _PREFIXES:
        if tag.startswith(namespace):
            return prefix + tag[len(namespace) :]
    return tag[:80]


def build_record(raw: _RawEntry, position: int, *, joined: bool) -> Record:
    """Validate an entry's raw fields and normalise them into a canonical ``Record``.

    ``joined``: the entry's one <name> holds all its authors (``.atom2``).
    """
    raw_id = (raw.id or "").strip()
    if not raw_id:
        raise FeedError(f"entry {position} has no <id>")
    try:
        arxiv_id, version = split_arxiv_id(raw_id)
    except ArxivIdError as exc:
        raise FeedError(
            f"entry {position} has id {raw_id[:120]!r}, not an arXiv id: {exc.reason}"
        ) from None
    if version is None:
        raise FeedError(f"entry {position} ({arxiv_id}) has no version in its id {raw_id[:120]!r}")

    title = clean_text(raw.title)
    if title is None:
        raise FeedError(f"entry {position} ({versioned_id(arxiv_id, version)}) has no title")
    authors = _clean_names(raw.authors)
    if not authors or len(authors) != len(raw.authors):
        problem = "an <author> without a name" if raw.authors else "no author"
        raise FeedError(f"entry {position} ({versioned_id(arxiv_id, version)}) has {problem}")
    if joined:
        authors = [name for text in authors for name in split_joined_names(text)]

    primary = _term(raw.primary_category)
    categories = [primary] if primary is not None else []
    for term in raw.categories:
        category = _term(term)
        if category is not None and category not in categories:
            categories.append(category)

    abstract = clean_text(raw.summary)
    comment = clean_text(raw.comment)
    doi = clean_text(raw.doi)
    if doi is None and raw.doi_link and _DOI_URL_MARK in raw.doi_link:
        doi = normalize_text(raw.doi_link.split(_DOI_URL_MARK, 1)[1])
    # The Atom API carries no authoritative verdict: arXiv's notice in the text decides.
    withdrawal = detect_withdrawal(abstract, comment)
    record = Record(
        arxiv_id=arxiv_id,
        version=version,
        title=title,
        abstract=abstract,
        authors=tuple(authors),
        authors_complete=True,
        primary_category=primary,
        categories=tuple(categories),
        comment=comment,
        journal_ref=clean_text(raw.journal_ref),
        doi=doi,
        published=_term(raw.published),
        updated=_term(raw.updated),
        withdrawn=withdrawal.withdrawn,
        withdrawn_by=withdrawal.by,
    )
    return canonical(record)


def _clean_names(names: list[str | None]) -> list[str]:
    """Every name through ``clean_text``, checking a clean ASCII list in one pass.

    An entry lists up to hundreds of authors; testing their joined text at
    once costs a few substring searches instead of a call per name.  NUL,
    which no XML text holds, separates them: a name that is empty or has a
    space at either end puts a NUL beside a NUL or a space, or at an end.
    """
    if None not in names:
        present = cast("list[str]", names)
        joined = "\0".join(present)
        if (
            joined.isascii()
            and clean_text(joined) is joined
            and "\0\0" not in joined
            and " \0" not in joined
            and "\0 " not in joined
            and joined[0] != "\0"
            and joined[-1] != "\0"
        ):
            return present
    return [name for name in map(clean_text, names) if name is not None]


def clean_text(value: str | None) -> str | None:
    """``normalize_text``, with fast paths for text that needs little or nothing.

    Most of a page's bytes are ASCII abstracts the current backend sends
    unwrapped.  XML 1.0 text holds no ASCII control character but tab, line
    feed and carriage return (lxml refuses the others, even as character
    references), so in the parser's ASCII text those three and the space are
    all the whitespace there is, found by substring searches far cheaper than
    ``isprintable``, and NFC has nothing to do.  Other text is returned as it
    is when it is printable (every whitespace character but the space is
    unprintable), NFC, and has no double, leading or trailing space.
    """
    if not value:
        return None
    if value.isascii():
        if (
            "\n" in value
            or "\t" in value
            or "\r" in value
            or "  " in value
            or value[0] == " "
            or value[-1] == " "
        ):
            return " ".join(value.split()) or None
        return value
    if (
        value.isprintable()
        and value[0] != " "
        and value[-1] != " "
        and "  " not in value
        and unicodedata.is_normalized("NFC", value)
    ):
        return value
    return normalize_text(value)


def _term(value: str | None) -> str | None:
    """An attribute or date as sent, without surrounding whitespace; ``None`` when empty."""
    return value.strip() or None if value else None
