"""Turn an OpenAlex work (JSON) into the published version it merged with an arXiv preprint.

OpenAlex sometimes keeps a preprint and its publication as one work: the
work asked for by the arXiv DOI then lists, among its locations, the
journal's or proceedings' (``source.type`` ``journal``, ``conference``,
``book series``, ``ebook platform``) with the publication's DOI.  Often it
keeps them apart: the arXiv work lists arXiv's and DataCite's locations only,
and nothing is linked (the publication is then one more bibliographic
candidate, found by Crossref's search).

Suspicious: a body that is not JSON or not a work raises
``PublicationSourceError``; a location of the wrong shape is skipped with a
log line.  Titles lose their markup as Crossref's do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import structlog

from syncd.domain.publications import LinkedWork, PublicationSource, Work, normalize_doi
from syncd.errors import PublicationSourceError
from syncd.sources.crossref import clean_title

__all__ = ["HOW_MERGED", "PUBLISHED_SOURCE_TYPES", "merged_publication", "parse_work"]

_log = structlog.get_logger(__name__)

HOW_MERGED = "openalex-merged"
# The kinds of OpenAlex sources that publish; repositories (arXiv, PubMed
# Central) and metadata services (DataCite) only hold copies.
PUBLISHED_SOURCE_TYPES = frozenset({"journal", "conference", "book series", "ebook platform"})

_ARXIV_DOI_PREFIX = "10.48550/"
_MAX_TEXT = 2000
_MAX_AUTHORS = 5000
_ISO_DATE = re.compile(r"[12][0-9]{3}(-[01][0-9](-[0-3][0-9])?)?")


def parse_work(body: bytes) -> dict[str, Any]:
    """The work object of a ``/works/{id}`` answer."""
    try:
        value = json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise PublicationSourceError(f"OpenAlex's answer is not JSON: {exc}"[:300]) from exc
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        raise PublicationSourceError("OpenAlex's answer is not a work")
    return value


def _text(value: object, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > _MAX_TEXT:
        raise PublicationSourceError(f"OpenAlex's work has a {field} that is no short text")
    return value


def _authors(work: Mapping[str, Any]) -> tuple[str, ...]:
    authorships = work.get("authorships") or []
    if not isinstance(authorships, list) or len(authorships) > _MAX_AUTHORS:
        raise PublicationSourceError("OpenAlex's work has no list of authorships")
    names = []
    for authorship in authorships:
        author = authorship.get("author") if isinstance(authorship, dict) else None
        name = _text(author.get("display_name"), "author") if isinstance(author, dict) else None
        if name and clean_title(name):
            names.append(clean_title(name))
    return tuple(names)


def _published_location(work: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """The first location of a publishing source with a DOI that is not arXiv's."""
    locations = work.get("locations") or []
    if not isinstance(locations, list):
        raise PublicationSourceError("OpenAlex's work has no list of locations")
    own_doi = normalize_doi(_text(work.get("doi"), "doi") or "")
    for location in locations:
        source = location.get("source") if isinstance(location, dict) else None
        if not isinstance(source, dict) or source.get("type") not in PUBLISHED_SOURCE_TYPES:
            if not isinstance(location, dict):
                _log.warning("openalex_location_skipped", reason="not an object")
            continue
        landing = location.get("landing_page_url")
        doi = normalize_doi(landing) if isinstance(landing, str) and len(landing) < 500 else None
        if doi is None and own_doi is not None and location == work.get("primary_location"):
            doi = own_doi
        if doi is not None and not doi.startswith(_ARXIV_DOI_PREFIX):
            return doi, location
    return None


def merged_publication(arxiv_id: str, work: Mapping[str, Any]) -> LinkedWork | None:
    """The published version OpenAlex merged into the work of ``arxiv_id``; ``None`` when it
    keeps the preprint apart (no publishing location with a DOI of its own)."""
    found = _published_location(work)
    if found is None:
        return None
    doi, location = found
    title = clean_title(_text(work.get("title") or work.get("display_name"), "title") or "")
    if not title:
        raise PublicationSourceError("OpenAlex's work has no title")
    year = work.get("publication_year")
    if isinstance(year, bool) or not isinstance(year, int) or not 1000 <= year <= 2999:
        year = None
    date = _text(work.get("publication_date"), "publication_date")
    if date is not None and not _ISO_DATE.fullmatch(date):
        date = None
    source = location["source"]
    landing = location.get("landing_page_url")
    published = Work(
        source=PublicationSource.OPENALEX,
        doi=doi,
        title=title,
        authors=_authors(work),
        year=year,
        date=date,
        venue=clean_title(_text(source.get("display_name"), "venue") or "") or None,
        type=_text(work.get("type"), "type"),
        url=landing if isinstance(landing, str) and len(landing) < 2000 else None,
    )
    return LinkedWork(arxiv_id=arxiv_id, work=published, how=HOW_MERGED)
