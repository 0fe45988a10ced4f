"""An arXiv Atom feed read as it arrives, in bounded memory: ``FeedReader``.

The body is fed piece by piece (a ``syncd.sources.polite.BodyReader``) to the
hardened pull parser.  Each of the feed's top-level elements (an entry, an
OpenSearch counter) is read as soon as it ends, and the elements read are
dropped from the tree in batches of ``_HELD``, the most entries a page of the
API may hold (removed one at a time, they would cost more than the parse, and
a page never needs it), so the reader holds at most that many entries' tree
and the records it kept.  It keeps at most ``keep`` records: the entries past them
are counted (``FeedPage.dropped``) but not read, so an author feed of 50,000
entries costs the memory of ``keep`` records, not of the body or its tree.

Every protection of the whole-body parse holds piece by piece: a DOCTYPE or
entity declaration is refused as soon as a piece holds it (or two pieces
share it), the document's own declarations are checked again once its root
is known, the parser expands no entity and loads nothing, and libxml2's
limits (depth, text sizes) apply.  The size cap is the connection's.
``parse_feed`` and ``parse_author_feed`` read a body already in memory the
same way, so there is one parse of an arXiv feed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

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
# The bytes of a piece kept to find a declaration (``<!DOCTYPE``, ``<!ENTITY``) that
# starts in it and ends in the next.
_OVERLAP = len(b"<!DOCTYPE") - 1
# What error messages look at to say what a body that is not a feed looks like.
_HEAD_BYTES = 4096
# How a body already in memory is fed: pieces of the size a network read gives.
_PIECE_BYTES = 64 * 1024
# The most elements read that stay in the tree before they are dropped, all at once:
# the most entries a page of the API holds (its max_results), 2,000.
_HELD = 2000


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
        self._head = b""
        self._tail = b""
        # The piece before the one being parsed (libxml2 may find a fault in it late).
        self._previous = b""
        self._size = 0  # the bytes before ``_previous``
        self._held = 0
        self._blank = True
        self._root: etree._Element | None = None  # known once its first child ended
        self._counters: dict[str, int] = {}
        self._records: list[Record] = []
        self._dropped = 0

    def feed(self, piece: bytes) -> None:
        """Read the next piece of the body, refusing any declaration before the parser sees it."""
        # arXiv never sends a DOCTYPE: refusing one up front stops entity bombs
        # and external entities before libxml2 sees them.  The parser is forced
        # to UTF-8, so these ASCII patterns cannot hide behind another encoding.
        window = self._tail + piece
        if b"<!DOCTYPE" in window or b"<!ENTITY" in window:
            raise FeedError(DTD_REFUSED + shape_hint(self._head or window))
        self._tail = piece[-_OVERLAP:]
        self._parse_piece(piece)

    def close(self) -> FeedPage:
        """The page the body made, once all of it was fed."""
        if self._blank:
            raise FeedError("the response body is empty")
        try:
            root = self._parser.close()
        except etree.LxmlError as exc:
            raise self._not_xml(exc, b"") from exc
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
        try:
            self._parser.feed(piece)
        except etree.LxmlError as exc:
            raise self._not_xml(exc, piece) from exc
        self._size += len(self._previous)
        self._previous = piece
        for _event, ended in self._parser.read_events():
            element = cast("etree._Element", ended)  # "end" events carry elements
            parent = element.getparent()
            if parent is None or parent is not self._root:
                if self._root is not None or parent is None or parent.getparent() is not None:
                    continue  # the root, or inside an entry: read with its entry
                self._check_root(parent)
            self._take(element)
            self._held += 1
            if self._held > _HELD:  # done with those before it, the feed's own children too
                while element.getprevious() is not None:
                    del parent[0]
                self._held = 1

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
        self._root = root
        docinfo = root.getroottree().docinfo
        doctype = getattr(docinfo, "doctype", "")  # missing from lxml-stubs
        if doctype or docinfo.internalDTD is not None or docinfo.externalDTD is not None:
            raise FeedError(DTD_REFUSED + shape_hint(self._head))
        if root.tag != FEED:
            raise FeedError(
                f"the root element is {root.tag[:80]!r}, not an Atom <feed>"
                " (an HTML error page from a proxy?)"
            )

    def _not_xml(self, exc: etree.LxmlError, piece: bytes) -> FeedError:
        """The error for a body that does not parse at ``piece`` (``b""``: at its end), with
        what it looks like when that is clear."""
        hint = shape_hint(self._head) or self._not_utf8(piece)
        if not hint and self._head.lstrip().startswith(b"<"):
            hint = " (cut short?)"
        return FeedError(f"the body is not well-formed XML{hint}: {exc}")

    def _not_utf8(self, piece: bytes) -> str:
        """Where the last two pieces stop being UTF-8 (byte and offset in the body), or "".

        The parser meets a fault in the piece it was fed, or late in the one
        before; earlier pieces parsed, so they were UTF-8.
        """
        data = self._previous + piece
        start = self._size
        # A piece may begin inside a character that started in the piece before it.
        skip = 0
        while start and skip < min(3, len(data)) and 0x80 <= data[skip] < 0xC0:
            skip += 1
        try:
            data[skip:].decode("utf-8")
        except UnicodeDecodeError as exc:
            at = skip + exc.start
            return f" (not UTF-8: byte 0x{data[at]:02x} at offset {start + at})"
        return ""

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
