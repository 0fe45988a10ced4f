"""Atom feeds (RFC 4287) of the event log, for feed readers.

``/feeds/events.atom`` holds the latest ``FEED_SIZE`` events (``?author=``
narrows them), ``/feeds/papers/{ref}.atom`` one paper's,
``/feeds/groups/{name}.atom`` those of a group's members.  An entry per
event: its ``id`` a tag URI (RFC 4151) minted from the event's id, so the
same on every fetch and across restarts; ``updated`` the event's time; a
readable title; a link to the paper's page here (``alternate``) and to its
arXiv abstract page (``related``); the change as escaped HTML.

Feed readers poll, so every feed carries an ``ETag`` and ``Last-Modified``
computed from the seqs of the events it holds (read along the primary key:
the same cost at any size of the log), and a conditional GET that matches is
answered 304 before any event is loaded.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from urllib.parse import quote

from fastapi import APIRouter, Request
from lxml import etree
from starlette.responses import Response

from syncd import __version__
from syncd.domain.model import Event
from syncd.domain.moments import utc_stamp
from syncd.domain.record import Record
from syncd.domain.vocabulary import AUTHOR_EVENTS
from syncd.render.describe import event_headline, event_path, paper_path
from syncd.service.app import App
from syncd.storage import EventQuery, EventStamp
from syncd.web.api import PrintableText, RefPath, find_paper, followed_author
from syncd.web.fragments import Fragments
from syncd.web.groups_read_api import GroupNamePath, find_group, group_feed_path, group_path

__all__ = ["FEED_SIZE", "atom_feed", "entry_id", "feeds_router", "links_base"]

FEED_SIZE = 50
ATOM_NS = "http://www.w3.org/2005/Atom"
_ATOM = f"{{{ATOM_NS}}}"
# RFC 4151: an authority and a date, then what the id names.  Event ids are
# unique (96 random bits each), so the tag is too, and it never depends on
# where syncd is served from.
_TAG = "tag:syncd,2026:"
_CONTENT_TYPE = "application/atom+xml; charset=utf-8"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Characters XML 1.0 cannot carry; a seed document could hold one.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# Part of every ETag: a syncd that renders entries differently is a new feed.
_RENDERING = f"syncd {__version__}; 2"
# Feed documents kept, newest used last: one per feed and address polled lately.
_KEPT_BODIES = 32


@dataclass(frozen=True, slots=True)
class FeedHead:
    """What a feed says about itself."""

    id: str
    title: str
    self_url: str
    page_url: str


def entry_id(event: Event) -> str:
    """The stable Atom id of ``event``'s entry."""
    return f"{_TAG}event:{event.id}"


def atom_feed(
    head: FeedHead, events: Sequence[Event], updated: datetime, base: str, fragments: Fragments
) -> bytes:
    """The feed document of ``events`` (newest first); links are absolute from ``base``."""
    # The default namespace's prefix is None, which lxml-stubs does not allow for.
    feed = etree.Element(f"{_ATOM}feed", nsmap={None: ATOM_NS})  # type: ignore[dict-item]
    _text(feed, "id", head.id)
    _text(feed, "title", head.title)
    _text(feed, "updated", utc_stamp(updated))
    author = etree.SubElement(feed, f"{_ATOM}author")
    _text(author, "name", "syncd")
    _link(feed, "self", base + head.self_url, "application/atom+xml")
    _link(feed, "alternate", base + head.page_url, "text/html")
    _text(feed, "generator", "syncd").set("version", __version__)
    for event in events:
        _entry(feed, event, base, fragments)
    return bytes(etree.tostring(feed, xml_declaration=True, encoding="utf-8"))


def _entry(feed: etree._Element, event: Event, base: str, fragments: Fragments) -> None:
    record = event.record
    entry = etree.SubElement(feed, f"{_ATOM}entry")
    _text(entry, "id", entry_id(event))
    title = record.title if record is not None else event.paper_key
    version = record.version if record is not None else None
    headline = event_headline(
        event.type, title, event.arxiv_id, version, event.kinds, changes=event.changes
    )
    withdrawn = record is not None and record.withdrawn
    # A reader lists titles only: a withdrawn paper says so there first.
    _text(entry, "title", f"[Withdrawn] {headline}" if withdrawn else headline)
    _text(entry, "updated", utc_stamp(event.created_at))
    for name in event.names:  # RFC 4287 4.2.1: each followed author the event names
        _text(etree.SubElement(entry, f"{_ATOM}author"), "name", name)
    _link(entry, "alternate", base + event_path(event), "text/html")
    # An author's event is filed under a paper it is not about.
    if event.arxiv_id is not None and event.type not in AUTHOR_EVENTS:
        suffix = f"v{version}" if version is not None else ""
        _link(entry, "related", f"https://arxiv.org/abs/{event.arxiv_id}{suffix}", "text/html")
    etree.SubElement(entry, f"{_ATOM}category").set("term", event.type)
    if withdrawn and record is not None:
        _text(entry, "summary", _withdrawn_summary(record))
        etree.SubElement(entry, f"{_ATOM}category").set("term", "withdrawn")
    # Escaped HTML as text: lxml escapes it once more, a reader unescapes it once.
    _text(entry, "content", str(fragments.event(event))).set("type", "html")


def _withdrawn_summary(record: Record) -> str:
    """One line for a withdrawn paper's entry: by whom, when the notice says."""
    by = {"author": " by its authors", "admin": " by arXiv's administrators"}
    who = by.get(record.withdrawn_by or "", "")
    return f"This paper has been withdrawn{who} from arXiv."


class _Bodies:
    """The feed documents served lately, by ETag and head.

    Readers poll, and most polls find the feed as it was; many send no
    validator, so they are answered from here without loading or rendering
    its events.  The ETag names the feed's events by seq, and an event, its
    record and its rendering never change once published.
    """

    def __init__(self) -> None:
        self._items: OrderedDict[tuple[str, FeedHead], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, FeedHead]) -> bytes | None:
        with self._lock:
            body = self._items.get(key)
            if body is not None:
                self._items.move_to_end(key)
            return body

    def keep(self, key: tuple[str, FeedHead], body: bytes) -> None:
        with self._lock:
            self._items[key] = body
            while len(self._items) > _KEPT_BODIES:
                self._items.popitem(last=False)


def feeds_router(app: App, fragments: Fragments) -> APIRouter:
    """The two feed routes over ``app``'s event log."""
    router = APIRouter(include_in_schema=False)
    bodies = _Bodies()

    @router.get("/feeds/events.atom")
    def events_feed(request: Request, author: PrintableText | None = None) -> Response:
        author = followed_author(app, author) if author else None
        whose = f" of {author}" if author is not None else ""
        head = FeedHead(
            id=f"{_TAG}feed:events" + (f"?author={quote(author)}" if author else ""),
            title=f"syncd: changes to the arXiv papers{whose}",
            self_url=request.url.path + (f"?author={quote(author)}" if author else ""),
            page_url="/events",
        )
        return _serve(app, (fragments, bodies), request, head, EventQuery(author=author))

    @router.get("/feeds/papers/{ref:path}.atom")
    def paper_feed(request: Request, ref: RefPath) -> Response:
        paper = find_paper(app, ref)
        head = FeedHead(
            id=f"{_TAG}feed:paper:{quote(paper.key, safe='/')}",
            title=f"syncd: changes to {paper.record.title or paper.key}",
            self_url=f"/feeds{paper_path(paper.key)}.atom",
            page_url=paper_path(paper.key),
        )
        return _serve(app, (fragments, bodies), request, head, EventQuery(paper_id=paper.id))

    @router.get("/feeds/groups/{name}.atom")
    def group_feed(request: Request, name: GroupNamePath) -> Response:
        group = find_group(app, name)
        head = FeedHead(
            id=f"{_TAG}feed:group:{quote(group.name, safe='')}",
            title=f"syncd: changes to the arXiv papers of {group.name}",
            self_url=group_feed_path(group.name),
            page_url=group_path(group.name),
        )
        query = EventQuery(authors=frozenset(group.members))
        return _serve(app, (fragments, bodies), request, head, query)

    return router


def _serve(
    app: App,
    kept: tuple[Fragments, _Bodies],
    request: Request,
    head: FeedHead,
    query: EventQuery,
) -> Response:
    """The feed, or a 304 when the client's copy is current."""
    fragments, bodies = kept
    base = links_base(request, app.settings.http.public_url)
    stamp = app.storage.events.stamp(replace(query, limit=FEED_SIZE))
    headers = _validators(stamp, head, base)
    if _not_modified(request, headers["ETag"], stamp.last_at):
        return Response(status_code=304, headers=headers)
    body = bodies.get((headers["ETag"], head))
    if body is None:
        events = app.storage.events.page(replace(query, newest_first=True, limit=FEED_SIZE))
        body = atom_feed(head, events, stamp.last_at or _EPOCH, base, fragments)
        bodies.keep((headers["ETag"], head), body)
    # Readers ask again whenever they like; the validators make that cheap.
    headers["Cache-Control"] = "no-cache"
    return Response(body, media_type=_CONTENT_TYPE, headers=headers)


def links_base(request: Request, public_url: str | None) -> str:
    """Where the feed's links to syncd point: ``public_url``, else the address asked.

    Never the Host header: any client could send one that makes a feed (and a
    cache that keeps it) point readers at a site of its choosing.  The local
    address a request arrived on is the server's own, so a reader who reached
    it directly can reach it again; behind a proxy, ``public_url`` says where.
    """
    if public_url is not None:
        return public_url
    server = request.scope.get("server")
    if server is None:  # a Unix socket: no address to name, links stay relative
        return ""
    host, port = server
    host = f"[{host}]" if ":" in host else host
    return f"{request.url.scheme}://{host}:{port}"


def _validators(stamp: EventStamp, head: FeedHead, base: str) -> dict[str, str]:
    state = f"{_RENDERING}|{base}|{head.self_url}|{stamp.seqs}"
    headers = {"ETag": f'"{hashlib.sha256(state.encode()).hexdigest()[:32]}"'}
    if stamp.last_at is not None:
        headers["Last-Modified"] = format_datetime(stamp.last_at.astimezone(UTC), usegmt=True)
    return headers


def _not_modified(request: Request, etag: str, last_at: datetime | None) -> bool:
    """RFC 9110 13.1: If-None-Match decides when present; else If-Modified-Since."""
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is not None:
        tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
        return "*" in tags or etag in tags
    since = _http_date(request.headers.get("if-modified-since"))
    if since is None or last_at is None:
        return False
    return last_at.replace(microsecond=0) <= since


def _http_date(value: str | None) -> datetime | None:
    """An If-Modified-Since date, or None for one to ignore (RFC 9110 13.1.3).

    Ignored: no date, one that does not parse or names no zone, one outside
    what a datetime holds (a huge year), and one later than now, which no
    copy a client holds can be from.
    """
    if value is None:
        return None
    try:
        parsed = parsedate_to_datetime(value)
        when = parsed.astimezone(UTC) if parsed.tzinfo is not None else None
    except (TypeError, ValueError, OverflowError):
        return None
    return when if when is not None and when <= datetime.now(UTC) else None


def _text(parent: etree._Element, name: str, text: str) -> etree._Element:
    element = etree.SubElement(parent, f"{_ATOM}{name}")
    element.text = _NOT_XML.sub("\ufffd", text)
    return element


def _link(parent: etree._Element, rel: str, href: str, media_type: str) -> None:
    link = etree.SubElement(parent, f"{_ATOM}link")
    link.set("rel", rel)
    link.set("href", href)
    link.set("type", media_type)
