"""An arXiv Atom feed read as it arrives, in bounded memory: ``FeedReader``.

The body is fed piece by piece (a ``syncd.sources.polite.BodyReader``) to the
hardened pull parser.  Each of the feed's top-level elements (an entry, an
OpenSearch counter) is read as soon as it ends and then dropped from the
tree, so what the reader holds at any time is one entry and the records it
kept.  It keeps at most ``keep`` records: the entries past them are counted
(``FeedPage.dropped``) but not read, so an author feed of 50,000 entries costs
the memory of ``keep`` records, not of the body or its tree.

Every protection of the whole-body parse holds piece by piece: a DOCTYPE or
entity declaration is refused as soon as a piece holds it (or two pieces
share it), the document's own declarations are checked again once its root
is known, the parser expands no entity and loads nothing, and libxml2's
limits (depth, text sizes) apply.  The size cap is the connection's.
``parse_feed`` and ``parse_author_feed`` read a body already in memory the
same way, so there is one parse of an arXiv feed.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from lxml import etree

from syncd.domain.record import Record, normalize_text
from syncd.errors import ApiError, FeedError
from syncd.sources.arxiv._parser import (
    COUNTERS,
    DTD_REFUSED,
    ENTRY,
    ERROR_ID_MARK,
    FEED,
    AuthorFeedFormat,
    build_record,
    hardened_pull_parser,
    read_counter,
    read_entry,
    shape_hint,
)

__all__ = ["FeedPage", "FeedReader", "parse_author_feed", "parse_feed"]

# What the reader is told of: the elements that may be the feed's children.
_TOP_LEVEL = (ENTRY, *COUNTERS)
_DECLARATIONS = (b"<!DOCTYPE", b"<!ENTITY")
# The bytes of a piece kept to find a declaration that starts in it and ends in the next.
_OVERLAP = max(len(mark) for mark in _DECLARATIONS) - 1
# What error messages look at to say what a body that is not a feed looks like.
_HEAD_BYTES = 4096
# How a body already in memory is fed: pieces of the size a network read gives.
_PIECE_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class FeedPage:
    """One page of an arXiv API answer: the OpenSearch counters and the entries as records.

    ``dropped``: the entries past the reader's ``keep``, counted but not read.
    """

    total_results: int
    start_index: int
    items_per_page: int
    records: tuple[Record, ...]
    dropped: int = 0

    @property
    def entries(self) -> int:
        """How many entries the page holds: its records and those dropped."""
        return len(self.records) + self.dropped


class FeedReader:
    """One feed's body, fed in pieces (``feed``), read into a ``FeedPage`` (``close``).

    ``paged``: the API's pages, which must carry the OpenSearch counters; an
    author's own feed is not, and counts as whole.  ``joined``: an entry's
    one <name> holds all its authors (``.atom2``).  ``keep``: the most
    records kept (every one when ``None``).  Errors are ``parse_feed``'s.
    """

    def __init__(self, *, paged: bool, joined: bool = False, keep: int | None = None) -> None:
        self._paged = paged
        self._joined = joined
        self._keep = keep
        self._parser = hardened_pull_parser(_TOP_LEVEL)
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._not_utf8 = ""  # where the body first stops being UTF-8, for the error
        self._head = b""
        self._tail = b""
        self._size = 0
        self._blank = True
        self._root_checked = False
        self._counters: dict[str, int] = {}
        self._records: list[Record] = []
        self._dropped = 0

    def feed(self, piece: bytes) -> None:
        """Read the next piece of the body, refusing any declaration before the parser sees it."""
        # arXiv never sends a DOCTYPE: refusing one up front stops entity bombs
        # and external entities before libxml2 sees them.  The parser is forced
        # to UTF-8, so these ASCII patterns cannot hide behind another encoding.
        window = self._tail + piece
        if any(mark in window for mark in _DECLARATIONS):
            raise FeedError(DTD_REFUSED + shape_hint(self._head or window))
        self._tail = piece[-_OVERLAP:]
        self._parse_piece(piece)

    def close(self) -> FeedPage:
        """The page the body made, once all of it was fed."""
        if self._blank:
            raise FeedError("the response body is empty")
        self._note_utf8(b"", final=True)
        try:
            root = self._parser.close()
        except etree.LxmlError as exc:
            raise self._not_xml(exc) from exc
        self._check_root(root)
        return self._page()

    def _parse_piece(self, piece: bytes) -> None:
        """Hand a piece to the parser and read the top-level elements it completed."""
        if not piece:
            return
        if self._blank and not piece.isspace():
            self._blank = False
        if len(self._head) < _HEAD_BYTES:
            self._head += piece[: _HEAD_BYTES - len(self._head)]
        self._note_utf8(piece)
        self._size += len(piece)
        try:
            self._parser.feed(piece)
        except etree.LxmlError as exc:
            raise self._not_xml(exc) from exc
        for _event, element in self._parser.read_events():
            assert isinstance(element, etree._Element)  # "end" events carry elements
            parent = element.getparent()
            if parent is None or parent.getparent() is not None:
                continue  # the root, or inside an entry: read with its entry
            if not self._root_checked:
                self._check_root(parent)
            self._take(element)
            # Done with it and with the feed's own children before it.
            element.clear()
            while element.getprevious() is not None:
                del parent[0]

    def _take(self, element: etree._Element) -> None:
        """Read one of the feed's children: an entry (kept or counted) or a counter."""
        if element.tag != ENTRY:
            name = COUNTERS[element.tag]
            self._counters[name] = read_counter(element, name, self._counters.get(name))
            return
        position = len(self._records) + self._dropped + 1
        if self._keep is not None and len(self._records) >= self._keep:
            self._dropped += 1
            return
        raw = read_entry(element, position)
        if raw.id is not None and ERROR_ID_MARK in raw.id:
            raise ApiError(normalize_text(raw.summary) or "arXiv sent its error feed")
        self._records.append(build_record(raw, position, joined=self._joined))

    def _check_root(self, root: etree._Element) -> None:
        """Refuse a document that declared a DTD after all, or whose root is not an Atom feed."""
        self._root_checked = True
        docinfo = root.getroottree().docinfo
        doctype = getattr(docinfo, "doctype", "")  # missing from lxml-stubs
        if doctype or docinfo.internalDTD is not None or docinfo.externalDTD is not None:
            raise FeedError(DTD_REFUSED + shape_hint(self._head))
        if root.tag != FEED:
            raise FeedError(
                f"the root element is {root.tag[:80]!r}, not an Atom <feed>"
                " (an HTML error page from a proxy?)"
            )

    def _note_utf8(self, piece: bytes, *, final: bool = False) -> None:
        """Remember where the body first stops being UTF-8 (offset and byte), for ``_not_xml``."""
        if self._not_utf8:
            return
        pending = self._utf8.getstate()[0]
        try:
            self._utf8.decode(piece, final)
        except UnicodeDecodeError as exc:
            data = pending + piece
            offset = self._size - len(pending) + exc.start
            self._not_utf8 = f" (not UTF-8: byte 0x{data[exc.start]:02x} at offset {offset})"

    def _not_xml(self, exc: etree.LxmlError) -> FeedError:
        """The error for a body that does not parse, with what it looks like when that is clear."""
        hint = shape_hint(self._head) or self._not_utf8
        if not hint and self._head.lstrip().startswith(b"<"):
            hint = " (cut short?)"
        return FeedError(f"the body is not well-formed XML{hint}: {exc}")

    def _page(self) -> FeedPage:
        """The page from the counters and the entries read."""
        counters = self._counters
        if not self._paged:
            entries = len(self._records) + self._dropped
            counters = {"totalResults": entries, "startIndex": 0, "itemsPerPage": entries}
            counters |= self._counters
        for name in COUNTERS.values():
            if name not in counters:
                if name == "totalResults":
                    raise FeedError(
                        "the feed has no <opensearch:totalResults>; cannot tell if it is complete"
                    )
                raise FeedError(f"the feed has no <opensearch:{name}>")
        return FeedPage(
            total_results=counters["totalResults"],
            start_index=counters["startIndex"],
            items_per_page=counters["itemsPerPage"],
            records=tuple(self._records),
            dropped=self._dropped,
        )


def parse_feed(body: bytes) -> FeedPage:
    """Parse one API response body; raise ``FeedError`` or ``ApiError`` when it is not usable.

    ``ApiError`` carries arXiv's own message when the body is arXiv's error
    feed; ``FeedError`` names what makes any other body untrustworthy.
    """
    return read_body(body, FeedReader(paged=True))


def parse_author_feed(body: bytes, feed_format: AuthorFeedFormat) -> FeedPage:
    """Parse an author's own feed in the format it was asked for; errors as ``parse_feed``.

    The feed is one unpaged list: without OpenSearch counters it counts as
    whole.  In ``.atom2`` an entry's one <name> is split back into the names
    arXiv joined.
    """
    return read_body(body, FeedReader(paged=False, joined=feed_format == "atom2"))


def read_body(body: bytes, reader: FeedReader) -> FeedPage:
    """``body``, already in memory, through ``reader`` in the pieces a network read gives."""
    for at in range(0, len(body), _PIECE_BYTES):
        reader.feed(body[at : at + _PIECE_BYTES])
    return reader.close()
