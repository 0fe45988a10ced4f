"""How a change reads, described once: one-line headlines, what changed in words, links.

One description for every place a person reads a change: the Atom feeds,
the web pages and chat messages.  Its input is what storage keeps (a
revision's or an event's ``changes``, a record).  Each changed field is
described as lines of segments by ``syncd.render.field_diffs``, the small
form every target renders with its own escaping: ``syncd.render.html`` for
pages and feeds, ``syncd.render.text`` (plain), ``syncd.render.mrkdwn``
(Slack) and ``syncd.render.markdown`` for messages.  ``describe`` gathers
what a message about one event says: its title line, what changed in words,
the diffs and the links.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode

from syncd.domain.identifiers import unknown_id_advice
from syncd.domain.model import Event
from syncd.domain.record import Record
from syncd.domain.textcontrols import without_bidi_controls
from syncd.domain.vocabulary import AUTHOR_EVENTS, PUBLICATION_EVENTS, EventType
from syncd.render.field_diffs import FieldDiff, Segment, field_diffs, kind_label
from syncd.render.publications import (
    doi_url,
    publication_diffs,
    publication_headline,
    publication_summary,
)

__all__ = [
    "ARXIV_ABSTRACT_URL",
    "ARXIV_AUTHOR_URL",
    "CANDIDATES_ANCHOR",
    "ORCID_URL",
    "Described",
    "Link",
    "author_path",
    "author_summary",
    "change_words",
    "counted",
    "describe",
    "event_headline",
    "event_path",
    "following_line",
    "kind_words",
    "paper_path",
    "review_line",
    "review_summary",
    "sample_event",
    "short_title",
]

ARXIV_ABSTRACT_URL = "https://arxiv.org/abs/{}"
ARXIV_AUTHOR_URL = "https://arxiv.org/a/{}"
ORCID_URL = "https://orcid.org/{}"
# The id of the candidates' section of an author's page: where a review starts.
CANDIDATES_ANCHOR = "candidates"
# Path segments a URL resolver removes (RFC 3986 5.2.4).
_DOT_SEGMENTS = (".", "..")
# How many held candidates an author.added message names before "…".
_HELD_SHOWN = 10
# A headline keeps a title's part before its colon, or this many characters.
_HEADLINE_CHARS = 60
_SUMMARY_WORDS: dict[str, str] = {
    EventType.ADDED: "New paper",
    EventType.LINKED: "Seed paper linked to arXiv",
    EventType.REVISED: "Revised",
    EventType.REMOVED: "No longer in the author's arXiv results",
    EventType.AUTHOR_ADDED: "Now following",
}
_TYPE_WORDS: dict[str, str] = {
    EventType.ADDED: "new paper",
    EventType.LINKED: "linked to arXiv",
    EventType.REMOVED: "no longer in the author's arXiv results",
    EventType.PUBLISHED: "published",
    EventType.PUBLICATION_CHANGED: "published version changed",
    EventType.CORRECTED: "published version corrected",
    EventType.RETRACTED: "published version retracted",
}
# The sample change `syncd webhooks test` sends.
_SAMPLE_ID = "2401.00001"
_SAMPLE_TITLE = "A sample paper: syncd's test message with a revised title"
_SAMPLE_AUTHOR = "Ada Lovelace"


@dataclass(frozen=True, slots=True)
class Link:
    """A link a message ends with: what it says and where it goes."""

    label: str
    url: str


@dataclass(frozen=True, slots=True)
class Described:
    """What any message about one event says, before a target renders it.

    ``title`` is the paper's whole title (its key when it has none),
    ``summary`` what happened in words, ``diffs`` the changed fields (for a
    new or linked paper without changes: its authors and abstract as they
    stand; for a publication event the published version or the notice),
    ``links`` the arXiv abstract page, a publication event's DOIs and the
    paper's page here.
    Every string is plain text, unescaped.
    """

    event_type: str
    author: str
    title: str
    arxiv_id: str | None
    version: int | None
    kinds: tuple[str, ...]
    withdrawn: bool
    headline: str
    summary: str
    diffs: tuple[FieldDiff, ...]
    links: tuple[Link, ...]
    created_at: datetime


def kind_words(kinds: Sequence[str]) -> str:
    """Kinds in running text: ``version, title, journal reference, DOI``."""
    return ", ".join(_lowered(kind_label(k)) for k in kinds)


def change_words(event_type: str | None, kinds: Sequence[str]) -> str:
    """What a change did in words: ``new paper``, ``Version, Title``, ``linked to arXiv; Title``."""
    what = _TYPE_WORDS.get(event_type or "", "")
    changed = ", ".join(kind_label(kind) for kind in kinds)
    return "; ".join(filter(None, [what, changed]))


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """``1 event``, ``2 events``, ``100,000 authors``: a count whose noun agrees with it."""
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"


def describe(event: Event, *, public_url: str | None) -> Described:
    """What a message about ``event`` says, links under ``public_url`` when it is set."""
    if event.type in AUTHOR_EVENTS:
        return _describe_author(event, public_url)
    record = event.record
    title = (record.title or "").strip() if record is not None else ""
    title = title or event.paper_key
    version = record.version if record is not None else None
    withdrawn = record is not None and record.withdrawn
    if event.type in PUBLICATION_EVENTS:
        summary = publication_summary(event.type, event.changes)
        diffs = list(publication_diffs(event.type, event.changes))
    else:
        summary = _summary(event.type, version, event.kinds, withdrawn)
        diffs = field_diffs(event.changes)
    if not diffs and record is not None and event.type != EventType.REMOVED:
        diffs = _as_it_stands(record)
    links = []
    if event.arxiv_id is not None:
        links.append(Link(f"arXiv:{event.arxiv_id}", ARXIV_ABSTRACT_URL.format(event.arxiv_id)))
    links += _publication_links(event)
    if public_url is not None:
        links.append(Link("history", f"{public_url}{paper_path(event.paper_key)}"))
    return Described(
        event_type=event.type,
        author=", ".join(event.names),
        title=title,
        arxiv_id=event.arxiv_id,
        version=version,
        kinds=event.kinds,
        withdrawn=withdrawn,
        headline=event_headline(
            event.type, title, event.arxiv_id, version, event.kinds, changes=event.changes
        ),
        summary=summary,
        diffs=tuple(diffs),
        links=tuple(links),
        created_at=event.created_at,
    )


def following_line(changes: Mapping[str, Any]) -> str:
    """``Now following Ke Zhang: 43 papers (5 held for review)``: an ``author.added``'s line."""
    author = changes.get("author") or {}
    papers = counted(int(author.get("papers") or 0), "paper")
    held = int(author.get("candidates") or 0)
    review = f" ({held} held for review)" if held else ""
    return f"Now following {author.get('name', '')}: {papers}{review}"


def review_line(changes: Mapping[str, Any]) -> str:
    """``Review needed for Ke Zhang: 3 new papers held (12 waiting)``: an
    ``author.review_needed``'s line."""
    author = changes.get("author") or {}
    held = int(author.get("candidates") or 0)
    waiting = int(author.get("waiting") or held)
    more = f" ({waiting} waiting)" if waiting > held else ""
    return f"Review needed for {author.get('name', '')}: {counted(held, 'new paper')} held{more}"


def review_summary(changes: Mapping[str, Any]) -> str:
    """Which papers an ``author.review_needed`` held, and the command that reviews them."""
    author = changes.get("author") or {}
    held = list(author.get("candidate_ids") or [])
    shown = ", ".join(held[:_HELD_SHOWN]) + (", …" if len(held) > _HELD_SHOWN else "")
    command = f"syncd authors review {shlex.quote(str(author.get('name', '')))}"
    return f"held for review: {shown}; to decide them: {command}"


def author_path(name: str) -> str:
    """The path of an author's page here.

    A name that is a whole dot segment (``..``, a name from before names were
    checked) would be resolved away by a browser, escaped or not (RFC 3986
    5.2.4; the WHATWG URL standard reads ``%2E`` as a dot): ``/authors/..``
    is ``/``.  Its page is asked for by query instead.
    """
    quoted = quote(name, safe="")
    if quoted in _DOT_SEGMENTS:
        return f"/authors?{urlencode({'name': name})}"
    return f"/authors/{quoted}"


def event_path(event: Event) -> str:
    """Where an event is read about here: its paper's page, or for an author's event their
    page (its candidates, for ``author.review_needed``)."""
    if event.type == EventType.REVIEW_NEEDED:
        return f"{author_path(event.author)}#{CANDIDATES_ANCHOR}"
    if event.type in AUTHOR_EVENTS:
        return author_path(event.author)
    return paper_path(event.paper_key)


def author_summary(changes: Mapping[str, Any]) -> str:
    """What an ``author.added`` found besides its line: claims, candidates held, review."""
    author = changes.get("author") or {}
    found = []
    if author.get("unknown_id"):
        found.append(unknown_id_advice(str(author["unknown_id"])))
    elif author.get("orcid") or author.get("arxiv_author_id"):
        found.append(f"{counted(int(author.get('claimed') or 0), 'paper')} claimed on arXiv")
    held = list(author.get("candidate_ids") or [])
    if held:
        shown = ", ".join(held[:_HELD_SHOWN]) + (", …" if len(held) > _HELD_SHOWN else "")
        found.append(f"held for review: {shown}")
    if author.get("needs_review"):
        found.append("no group of papers is clearly theirs: needs review")
    return "; ".join(found) or following_line(changes)


def paper_path(key: str) -> str:
    """The path of a paper's page here (keys of old-style arXiv ids hold a slash)."""
    return f"/papers/{quote(key, safe='/')}"


def short_title(title: str | None) -> str:
    """A title as a headline names it: ``NestPipe: …``, or cut at ``_HEADLINE_CHARS``;
    without bidi controls, which would reorder the headline's words after it."""
    text = without_bidi_controls(title or "") or "(no title)"
    head, colon, _ = text.partition(":")
    if colon and head.strip():
        return f"{head.strip()}: …"
    return text if len(text) <= _HEADLINE_CHARS else text[: _HEADLINE_CHARS - 1].rstrip() + "…"


def event_headline(
    event_type: str,
    title: str | None,
    arxiv_id: str | None,
    version: int | None,
    kinds: Sequence[str],
    *,
    changes: Mapping[str, Any] | None = None,
) -> str:
    """One line a person can read: ``NestPipe: … (2604.06956) v2: title, authors, abstract``.

    Plain text; whoever puts it into markup escapes it.  An ``author.added``
    reads as ``following_line`` of its ``changes``, an ``author.review_needed``
    as ``review_line``; a publication event says where (``NestPipe: … (2604.06956):
    published in Nature Machine Intelligence``), not the preprint's version.
    """
    if event_type == EventType.AUTHOR_ADDED:
        return following_line(changes or {})
    if event_type == EventType.REVIEW_NEEDED:
        return review_line(changes or {})
    where = f" ({arxiv_id})" if arxiv_id else ""
    if event_type in PUBLICATION_EVENTS:
        return f"{short_title(title)}{where}: {publication_headline(event_type, changes or {})}"
    what = ", ".join(filter(None, [_TYPE_WORDS.get(event_type, ""), kind_words(kinds)]))
    shown_version = f" v{version}" if version is not None else ""
    return f"{short_title(title)}{where}{shown_version}: {what or 'changed'}"


def sample_event(now: datetime) -> Event:
    """A made-up change a person recognises as a sample: a paper's v2 with a new title."""
    record = Record(arxiv_id=_SAMPLE_ID, version=2, title=_SAMPLE_TITLE, authors=(_SAMPLE_AUTHOR,))
    changes = {
        "version": {"old": 1, "new": 2},
        "title": {"old": "A sample paper: syncd's test message", "new": _SAMPLE_TITLE},
    }
    return Event(
        seq=0,
        id="evt_sample",
        type=EventType.REVISED,
        created_at=now,
        author=_SAMPLE_AUTHOR,
        paper_key=_SAMPLE_ID,
        arxiv_id=_SAMPLE_ID,
        kinds=("version", "title"),
        changes=changes,
        record=record,
    )


def _lowered(label: str) -> str:
    """A label in running text: ``journal reference``, but ``DOI`` stays."""
    return label if label.isupper() else label.lower()


def _describe_author(event: Event, public_url: str | None) -> Described:
    """An author's event: its line, what it found, links to the author's pages.

    ``author.added``: what the baseline found, the author's arXiv and ORCID
    pages; ``author.review_needed``: the papers held, and where to review them.
    """
    changes = event.changes
    author = changes.get("author") or {}
    links = []
    if event.type == EventType.REVIEW_NEEDED:
        line, summary, label = review_line(changes), review_summary(changes), "review"
    else:
        line, summary, label = following_line(changes), author_summary(changes), "author"
        orcid, arxiv_author_id = author.get("orcid"), author.get("arxiv_author_id")
        if arxiv_author_id or orcid:
            feed = str(arxiv_author_id or orcid)
            links.append(Link(f"arXiv: {feed}", ARXIV_AUTHOR_URL.format(quote(feed, safe=""))))
        if orcid:
            links.append(Link(f"ORCID: {orcid}", ORCID_URL.format(orcid)))
    if public_url is not None:
        links.append(Link(label, f"{public_url}{event_path(event)}"))
    return Described(
        event_type=event.type,
        author=event.author,
        title=line,
        arxiv_id=None,
        version=None,
        kinds=(),
        withdrawn=False,
        headline=line,
        summary=summary,
        diffs=(),
        links=tuple(links),
        created_at=event.created_at,
    )


def _publication_links(event: Event) -> list[Link]:
    """A publication event's links: the published version's DOI, and the notice's."""
    if event.type not in PUBLICATION_EVENTS:
        return []
    links = []
    doi = (event.changes.get("publication") or {}).get("doi")
    if doi:
        links.append(Link(f"DOI {without_bidi_controls(str(doi))}", doi_url(str(doi))))
    notice_doi = (event.changes.get("notice") or {}).get("doi")
    if notice_doi:
        label = f"notice DOI {without_bidi_controls(str(notice_doi))}"
        links.append(Link(label, doi_url(str(notice_doi))))
    return links


def _as_it_stands(record: Record) -> list[FieldDiff]:
    """A new paper's authors and abstract, unchanged text, as its message shows them."""
    shown = [("authors", _authors_text(record)), ("abstract", record.abstract or "")]
    return [
        FieldDiff(name, kind_label(name), ((Segment("text", text),),))
        for name, text in shown
        if text
    ]


def _authors_text(record: Record) -> str:
    """``Ada, Bob et al.``: the names, and whether the list is known to be complete."""
    authors = ", ".join(record.authors) + ("" if record.authors_complete else " et al.")
    return authors.strip()


def _summary(event_type: str, version: int | None, kinds: Sequence[str], withdrawn: bool) -> str:
    """What happened, in words: ``Revised, v2; changed: title, abstract``."""
    what = "Withdrawn" if withdrawn and "withdrawn" in kinds else _SUMMARY_WORDS[event_type]
    at = f", v{version}" if version is not None else ""
    changed = f"; changed: {kind_words(kinds)}" if kinds else ""
    return f"{what}{at}{changed}"
