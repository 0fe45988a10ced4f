"""How a paper's published version reads: where, how it was matched, and its notices, in words.

The four publication events (``paper.published``, ``paper.publication_changed``,
``paper.corrected``, ``paper.retracted``) carry a link and a notice as
``syncd.domain.publications.link_json`` and ``notice_json`` write them; the
paper's page and the lists show the same shapes.  Everything here is plain
text for ``syncd.render.describe`` to put in a message and each target to
escape: a venue, a DOI or a type came from Crossref or OpenAlex, so bidi
controls are dropped from them (they would reorder syncd's words after
them), and a venue is cut to a length a headline can carry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from syncd.domain.publications import LinkState, MatchLevel, notice_is_retraction
from syncd.domain.textcontrols import without_bidi_controls
from syncd.domain.vocabulary import EventType
from syncd.render.field_diffs import FieldDiff, Line, Segment

__all__ = [
    "DOI_URL",
    "doi_url",
    "found_words",
    "notice_words",
    "publication_diffs",
    "publication_headline",
    "publication_place",
    "publication_summary",
    "recorder_words",
    "score_words",
    "type_words",
]

DOI_URL = "https://doi.org/{}"
# A venue in running text: a proceedings' title can run to hundreds of characters.
_VENUE_CHARS = 150
# How a certain match was found, by ``Evidence.how``.
_FOUND = {
    "arxiv-doi": "found by arXiv's own record",
    "arxiv-journal-ref": "found by arXiv's own record (its journal reference)",
    "crossref-relation-doi": "found by Crossref's preprint link",
    "crossref-relation-arxiv-id": "found by Crossref's preprint link",
    "openalex-merged": "found by OpenAlex, which holds the preprint and this version as one work",
}
# A route ``_FOUND`` does not know, by source.
_SOURCES = {"arxiv": "arXiv's own record", "crossref": "Crossref", "openalex": "OpenAlex"}
# Who recorded a notice, as Crossref's update source names it.
_RECORDERS = {"publisher": "the publisher", "retraction-watch": "Retraction Watch"}
# A person's decision without a match behind it.
_BY_A_PERSON = "person"


def doi_url(doi: str) -> str:
    """Where a DOI resolves: ``https://doi.org/10.1038/...``, every character a URL would
    read otherwise (``?``, ``#``, ``%``, spaces, brackets) escaped."""
    return DOI_URL.format(quote(doi, safe="/"))


def publication_place(link: Mapping[str, Any]) -> str:
    """``in Nature Machine Intelligence (DOI 10.1038/...)``; ``as DOI 10.x/y`` without a
    venue; ``in <journal reference>`` without a DOI."""
    venue = _clean(link.get("venue"))
    if len(venue) > _VENUE_CHARS:
        venue = venue[: _VENUE_CHARS - 1].rstrip() + "…"
    doi = _clean(link.get("doi"))
    if venue and doi:
        return f"in {venue} (DOI {doi})"
    if doi:
        return f"as DOI {doi}"
    return f"in {venue}" if venue else "in a version no source named"


def found_words(link: Mapping[str, Any]) -> str:
    """How the link was made, in words: ``found by Crossref's preprint link``, ``a
    bibliographic match scored 0.93 (title 0.97, all authors in common, year +1)``,
    ``confirmed by a person``."""
    how = str(link.get("how") or "")
    if how == _BY_A_PERSON:
        return "confirmed by a person"
    if link.get("match") == MatchLevel.BIBLIOGRAPHIC:
        found = f"a bibliographic match {score_words(link)}"
    else:
        found = _FOUND.get(how) or f"found by {_SOURCES.get(str(link.get('source')), 'a source')}"
    if link.get("state") == LinkState.CONFIRMED:
        return f"{found}, confirmed by a person"
    return found


def score_words(link: Mapping[str, Any]) -> str:
    """``scored 0.93 (title 0.97, 75 % of authors in common, year +1)``: a score and the
    parts a person can check."""
    evidence = link.get("evidence") or {}
    parts = []
    title, share, gap = (evidence.get(k) for k in ("title_similarity", "author_share", "year_gap"))
    if title is not None:
        parts.append(f"title {float(title):.2f}")
    if share is not None:
        share_words = "all" if float(share) >= 1 else f"{round(float(share) * 100)} % of"
        parts.append(f"{share_words} authors in common")
    if gap is not None:
        parts.append("same year" if int(gap) == 0 else f"year {int(gap):+d}")
    shown = f" ({', '.join(parts)})" if parts else ""
    return f"scored {float(link.get('score') or 0):.2f}{shown}"


def type_words(value: str | None) -> str:
    """A source's type as a person says it: ``journal article`` for ``journal-article``."""
    return _clean(value).replace("-", " ").replace("_", " ")


def notice_words(notice: Mapping[str, Any]) -> str:
    """``notice DOI 10.1038/..., dated 2024-08-01``: a notice's DOI and date."""
    date = _clean(notice.get("date"))
    dated = f", dated {date}" if date else ""
    return f"notice DOI {_clean(notice.get('doi'))}{dated}"


def recorder_words(source: str | None) -> str:
    """Who recorded a notice: ``the publisher``, ``Retraction Watch``, or as the source says."""
    cleaned = _clean(source)
    return _RECORDERS.get(cleaned, cleaned)


def publication_headline(event_type: str, changes: Mapping[str, Any]) -> str:
    """What a headline says a publication event did: ``published in Nature Machine
    Intelligence``, ``now published in ...``, ``correction to the published version``,
    ``published version retracted``."""
    publication = changes.get("publication") or {}
    # A headline names the venue alone when it has one: the DOI is in the summary.
    venue = publication.get("venue")
    where = publication_place({"venue": venue} if _clean(venue) else publication)
    if event_type == EventType.PUBLISHED:
        return f"published {where}"
    if event_type == EventType.PUBLICATION_CHANGED:
        return f"now published {where}"
    if event_type == EventType.RETRACTED:
        return "published version retracted"
    kind = type_words((changes.get("notice") or {}).get("type")) or "notice"
    return f"{kind} to the published version"


def publication_summary(event_type: str, changes: Mapping[str, Any]) -> str:
    """What happened, in one sentence: ``Published in Nature Machine Intelligence (DOI
    10.1038/...), found by Crossref's preprint link``; a notice's type, DOI and date."""
    publication = changes.get("publication") or {}
    where = publication_place(publication)
    if event_type == EventType.PUBLISHED:
        return f"Published {where}, {found_words(publication)}"
    if event_type == EventType.PUBLICATION_CHANGED:
        previous = publication_place(changes.get("previous") or {})
        return f"Now published {where}, {found_words(publication)}; previously {previous}"
    notice = changes.get("notice") or {}
    kind = type_words(notice.get("type")) or "notice"
    to = "of" if notice_is_retraction(str(notice.get("type") or "")) else "to"
    return f"{kind.capitalize()} {to} the version published {where}: {notice_words(notice)}"


def publication_diffs(event_type: str, changes: Mapping[str, Any]) -> tuple[FieldDiff, ...]:
    """What a message shows under its summary: the published version as it stands (venue,
    type, date, its own title), the one it replaced, or the notice."""
    publication = changes.get("publication") or {}
    if event_type == EventType.PUBLICATION_CHANGED:
        line = (
            Segment("removed", publication_place(changes.get("previous") or {})),
            Segment("own", " → "),
            Segment("added", publication_place(publication)),
        )
        return (FieldDiff("publication", "Published version", (line,)),)
    if event_type in (EventType.CORRECTED, EventType.RETRACTED):
        notice = changes.get("notice") or {}
        label = type_words(notice.get("type")).capitalize() or "Notice"
        lines = [
            _labelled("DOI ", notice.get("doi")),
            _labelled("dated ", notice.get("date")),
            _labelled("recorded by ", recorder_words(notice.get("source"))),
        ]
        return (FieldDiff("notice", label, tuple(line for line in lines if line)),)
    venue, kind = _clean(publication.get("venue")), type_words(publication.get("type"))
    lines = [
        _labelled("", " · ".join(filter(None, [venue, kind]))),
        _labelled("published ", publication.get("date")),
        _labelled("title: ", publication.get("title")),
    ]
    return (FieldDiff("publication", "Published version", tuple(line for line in lines if line)),)


def _labelled(label: str, value: Any) -> Line:
    """``label`` (syncd's words) and ``value`` (a source's); no line without a value."""
    text = _clean(value)
    if not text:
        return ()
    return (Segment("own", label), Segment("text", text)) if label else (Segment("text", text),)


def _clean(value: Any) -> str:
    """A source's string as running text: no bidi controls, no line breaks, trimmed."""
    return " ".join(without_bidi_controls(str(value or "")).split())
