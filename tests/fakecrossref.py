"""A fake Crossref REST API on loopback, answering with Crossref's own recorded answers.

Every answer is built from a recorded one (``tests/fixtures/crossref/``, see
its README): the envelope and every item key are Crossref's as recorded;
only what the test declares goes in (DOIs, the arXiv id a relation names,
titles, authors, venue, dates, notices).  A test declares::

    with FakeCrossref() as crossref:
        crossref.publish("10.1038/s42256-024-00832-8", title="Augmenting ...",
                         authors=("Andres M. Bran", "Philippe Schwaller"), year=2024,
                         venue="Nature Machine Intelligence",
                         preprint="2304.05376", link="doi")  # or "arxiv", or None
        crossref.add_notice("10.1038/s42256-024-00832-8", "10.1038/s42256-024-00999-1",
                            type="retraction", source="retraction-watch")

and the fake answers what Crossref answers:

- ``GET /works?filter=relation.object:A,relation.object:B`` (values ORed):
  the works whose ``has-preprint`` names A or B (the arXiv DOI for
  ``link="doi"``, the bare id for ``link="arxiv"``);
- ``GET /works?query.bibliographic=...&rows=N&filter=from-pub-date:Y,until-pub-date:Y``:
  the works sharing a word with the query, most words first, within the years;
- ``GET /works?filter=updates:D1,updates:D2``: the notices whose ``update-to`` names one;
- ``GET /works/{doi}``: the work, its ``updated-by`` listing its notices;
  ``Resource not found.`` (text/plain, 404) for any other DOI, arXiv's among them.

``rows``, ``offset`` and ``select`` are honoured as Crossref does.  Requests
are logged by kind (``link``, ``search``, ``notices``, ``work``).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote

from tests.recordedservice import Answer, RecordedService, recorded, recorded_text

__all__ = ["FakeCrossref", "Publication", "arxiv_doi", "published_item"]

# The recorded items every answer is made from (see tests/fixtures/crossref/README.md).
_LIST = recorded("crossref/works-filter-bibliographic.json")
_WORK = recorded("crossref/work-updated-by.json")
_PUBLISHED = recorded("crossref/works-query-title.json")["message"]["items"][0]
_RELATION = next(
    item["relation"]["has-preprint"][0]
    for item in _LIST["message"]["items"]
    if item.get("relation", {}).get("has-preprint")
)
_NOTICE = next(
    item
    for item in recorded("crossref/works-filter-update-to.json")["message"]["items"]
    if item.get("update-to")
)
_UPDATE = _WORK["message"]["updated-by"][0]
_NOT_FOUND = recorded_text("crossref/work-not-found.txt").encode()

_WORD = re.compile(r"\w+")


def arxiv_doi(arxiv_id: str) -> str:
    """The DataCite DOI arXiv gives a paper, as Crossref's relations write it."""
    return f"10.48550/arXiv.{arxiv_id}"


@dataclass(frozen=True, slots=True)
class Publication:
    """A published work the fake knows, and the arXiv preprint a relation links it to."""

    doi: str
    title: str
    authors: tuple[str, ...]
    year: int
    venue: str
    type: str = "journal-article"
    preprint: str | None = None
    link: Literal["doi", "arxiv"] | None = None


@dataclass(frozen=True, slots=True)
class _Notice:
    doi: str
    target: str
    type: str
    date: tuple[int, int, int]
    source: str


def _date(parts: tuple[int, ...]) -> dict[str, Any]:
    return {"date-parts": [list(parts)]}


def _update(doi: str, notice: _Notice) -> dict[str, Any]:
    """An ``updated-by`` / ``update-to`` entry (recorded) naming ``doi``."""
    entry = copy.deepcopy(_UPDATE)
    year, month, day = notice.date
    entry.update(
        DOI=doi,
        type=notice.type,
        label=notice.type.replace("_", " ").capitalize(),
        source=notice.source,
        updated={
            "date-parts": [[year, month, day]],
            "date-time": f"{year:04d}-{month:02d}-{day:02d}T00:00:00Z",
            "timestamp": _UPDATE["updated"]["timestamp"],
        },
    )
    return entry


def _author(name: str, first: bool) -> dict[str, Any]:
    given, _, family = name.rpartition(" ")
    author = copy.deepcopy(_PUBLISHED["author"][0])
    author.update(given=given, family=family, sequence="first" if first else "additional")
    if not given:
        del author["given"]
    return author


def published_item(publication: Publication, notices: list[_Notice]) -> dict[str, Any]:
    """The recorded journal article, made the declared publication."""
    item = copy.deepcopy(_PUBLISHED)
    item.update(
        DOI=publication.doi,
        URL=f"https://doi.org/{publication.doi}",
        title=[publication.title],
        author=[_author(name, i == 0) for i, name in enumerate(publication.authors)],
        type=publication.type,
        **{"container-title": [publication.venue]},
    )
    for field in ("published", "published-online", "issued"):
        item[field] = _date((publication.year, 5, 8))
    if publication.preprint is not None and publication.link is not None:
        relation = copy.deepcopy(_RELATION)
        relation["id-type"] = publication.link
        relation["id"] = (
            arxiv_doi(publication.preprint) if publication.link == "doi" else publication.preprint
        )
        item["relation"] = {"has-preprint": [relation]}
    mine = [_update(n.doi, n) for n in notices if n.target == publication.doi]
    if mine:
        item["updated-by"] = mine
    return item


def _notice_item(notice: _Notice, target: Publication | None) -> dict[str, Any]:
    item = copy.deepcopy(_NOTICE)
    about = target.title if target is not None else notice.target
    label = notice.type.replace("_", " ").capitalize()
    item.update(
        DOI=notice.doi,
        URL=f"https://doi.org/{notice.doi}",
        title=[f"{label}: {about}"],
        **{"update-to": [_update(notice.target, notice)]},
    )
    item.pop("updated-by", None)
    for field in ("published", "published-online", "issued"):
        item[field] = _date(notice.date)
    return item


def _filters(query: dict[str, list[str]]) -> list[tuple[str, str]]:
    """``filter=a:x,b:y`` as ``[("a", "x"), ("b", "y")]`` (a value may hold colons)."""
    pairs = []
    for value in query.get("filter", []):
        for clause in value.split(","):
            name, _, argument = clause.partition(":")
            pairs.append((name, argument))
    return pairs


class FakeCrossref(RecordedService):
    """Crossref's ``/works`` on loopback, from recorded answers; use it as a context manager."""

    def __init__(self) -> None:
        super().__init__()
        self.publications: dict[str, Publication] = {}
        self.notices: list[_Notice] = []

    def publish(
        self,
        doi: str,
        *,
        title: str,
        authors: tuple[str, ...],
        year: int,
        venue: str = "Nature Machine Intelligence",
        type: str = "journal-article",
        preprint: str | None = None,
        link: Literal["doi", "arxiv"] | None = None,
    ) -> Publication:
        """Declare a publication; with ``preprint`` and ``link`` its relation names the arXiv
        paper (by DOI or by id); without a link it is found only by search."""
        publication = Publication(doi, title, authors, year, venue, type, preprint, link)
        with self.lock:
            self.publications[doi.lower()] = publication
        return publication

    def add_notice(
        self,
        target: str,
        doi: str,
        *,
        type: str = "correction",
        date: tuple[int, int, int] = (2025, 1, 15),
        source: str = "publisher",
    ) -> None:
        """Declare a notice (``doi``) on the publication ``target``."""
        with self.lock:
            self.notices.append(_Notice(doi.lower(), target.lower(), type, date, source))

    def kind_of(self, path: str, query: dict[str, list[str]]) -> str:
        if path != "/works":
            return "work"
        names = {name for name, _ in _filters(query)}
        if "query.bibliographic" in query:
            return "search"
        if "relation.object" in names:
            return "link"
        return "notices" if "updates" in names else "list"

    def answer(self, path: str, query: dict[str, list[str]]) -> Answer:
        if path.startswith("/works/"):
            return self._work(unquote(path[len("/works/") :]).lower())
        if path != "/works":
            return Answer(404, "text/plain", _NOT_FOUND)
        kind = self.kind_of(path, query)
        if kind == "link":
            items = self._linked(query)
        elif kind == "search":
            items = self._searched(query)
        elif kind == "notices":
            items = self._notices(query)
        else:
            items = []
        return self._list(items, query)

    def _work(self, doi: str) -> Answer:
        publication = self.publications.get(doi)
        if publication is None:
            return Answer(404, "text/plain", _NOT_FOUND)
        envelope = {key: value for key, value in _WORK.items() if key != "message"}
        return Answer.json({**envelope, "message": published_item(publication, self.notices)})

    def _linked(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        objects = {value.lower() for name, value in _filters(query) if name == "relation.object"}
        found = []
        for publication in self.publications.values():
            if publication.preprint is None or publication.link is None:
                continue
            named = (
                arxiv_doi(publication.preprint)
                if publication.link == "doi"
                else publication.preprint
            )
            if named.lower() in objects:
                found.append(published_item(publication, self.notices))
        return found

    def _searched(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        words = set(_WORD.findall(query["query.bibliographic"][0].lower()))
        years = dict(_filters(query))
        low = int(years.get("from-pub-date", "0")[:4] or 0)
        high = int(years.get("until-pub-date", "9999")[:4] or 9999)
        scored = []
        for publication in self.publications.values():
            text = f"{publication.title} {' '.join(publication.authors)}".lower()
            shared = len(words & set(_WORD.findall(text)))
            if shared and low <= publication.year <= high:
                scored.append((-shared, publication.doi, publication))
        return [published_item(p, self.notices) for _, _, p in sorted(scored)]

    def _notices(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        targets = {value.lower() for name, value in _filters(query) if name == "updates"}
        return [
            _notice_item(notice, self.publications.get(notice.target))
            for notice in self.notices
            if notice.target in targets
        ]

    def _list(self, items: list[dict[str, Any]], query: dict[str, list[str]]) -> Answer:
        rows = int(query.get("rows", ["20"])[0])
        offset = int(query.get("offset", ["0"])[0])
        selected = query.get("select", [""])[0]
        page = items[offset : offset + rows]
        if selected:
            keys = set(selected.split(","))
            page = [{key: value for key, value in item.items() if key in keys} for item in page]
        envelope = {key: value for key, value in _LIST.items() if key != "message"}
        message = copy.deepcopy({k: v for k, v in _LIST["message"].items() if k != "items"})
        message.update(
            {
                "total-results": len(items),
                "items": page,
                "items-per-page": rows,
                "query": {
                    "start-index": offset,
                    "search-terms": query.get("query.bibliographic", [None])[0],
                },
            }
        )
        return Answer.json({**envelope, "message": message})
