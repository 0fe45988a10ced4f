"""A fake OpenAlex on loopback: single works by arXiv DOI, from OpenAlex's own recorded works.

Answers are built from the recorded title search of tests/fixtures/openalex/
(see its README): the arXiv work (``W4365597205``, kept apart from its
publication) and the published one (``W4396723768``, Nature Machine
Intelligence), with the test's ids, title, authors and venue put in.  A
test declares::

    with FakeOpenAlex(key="k") as openalex:
        openalex.preprint("2304.05376", title="ChemCrow ...", authors=(...,), year=2023)
        openalex.merged("2401.00001", doi="10.1038/x", venue="Nature Physics",
                        title="...", authors=(...,), year=2024)

and ``GET /works/doi:10.48550/arXiv.<id>?api_key=K`` answers the work: for a
merged one, the published work whose repository location is arXiv's (a
location copied from the recorded arXiv work), so the published location
and the preprint's are one work; for one kept apart, the arXiv work alone.
An unknown id answers OpenAlex's recorded 404 page; a request without the
key, or with another, answers 401 with an error object (OpenAlex's error
shape: ``error`` and ``message``; not recorded, see the README).  Requests
are logged by kind (``work``; ``list`` for anything else).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from tests.recordedservice import Answer, RecordedService, recorded, recorded_text

__all__ = ["FakeOpenAlex", "OpenAlexWork"]

_RESULTS = recorded("openalex/works-title-search.json")["results"]
_PUBLISHED = next(work for work in _RESULTS if work["type"] == "article")
_PREPRINT = next(work for work in _RESULTS if work["type"] == "preprint")
_ARXIV_LOCATION = _PREPRINT["locations"][0]
_NOT_FOUND = recorded_text("openalex/not-found.html").encode()
_PREFIX = "/works/doi:10.48550/arxiv."


@dataclass(frozen=True, slots=True)
class OpenAlexWork:
    """A work OpenAlex knows by an arXiv id: merged with its publication (``doi``) or not."""

    arxiv_id: str
    title: str
    authors: tuple[str, ...]
    year: int
    doi: str | None = None  # the publication's, when OpenAlex merged the two
    venue: str | None = None


def _authorships(template: dict[str, Any], names: tuple[str, ...]) -> list[dict[str, Any]]:
    model = template["authorships"][0]
    authorships = []
    for position, name in enumerate(names):
        authorship = copy.deepcopy(model)
        authorship["author"]["display_name"] = name
        authorship["raw_author_name"] = name
        authorship["author_position"] = "first" if position == 0 else "middle"
        authorships.append(authorship)
    return authorships


def _arxiv_location(arxiv_id: str) -> dict[str, Any]:
    location = copy.deepcopy(_ARXIV_LOCATION)
    location["landing_page_url"] = f"https://arxiv.org/abs/{arxiv_id}"
    location["pdf_url"] = f"https://arxiv.org/pdf/{arxiv_id}"
    return location


def work_json(work: OpenAlexWork) -> dict[str, Any]:
    """The recorded work, made the declared one."""
    merged = work.doi is not None
    body = copy.deepcopy(_PUBLISHED if merged else _PREPRINT)
    arxiv_doi = f"https://doi.org/10.48550/arxiv.{work.arxiv_id}"
    doi = f"https://doi.org/{work.doi}" if merged else arxiv_doi
    body.update(
        doi=doi,
        title=work.title,
        display_name=work.title,
        publication_year=work.year,
        publication_date=f"{work.year}-05-08",
        authorships=_authorships(body, work.authors),
    )
    body["ids"] = {"openalex": body["id"], "doi": doi}
    if merged:
        published = body["locations"][0]
        published["landing_page_url"] = doi
        published["source"]["display_name"] = work.venue or published["source"]["display_name"]
        # Where the recorded work lists PubMed Central, the merged one lists arXiv.
        body["locations"] = [published, _arxiv_location(work.arxiv_id)]
        body["primary_location"] = copy.deepcopy(published)
        body["locations_count"] = 2
    else:
        body["locations"][0] = _arxiv_location(work.arxiv_id)
        body["primary_location"] = _arxiv_location(work.arxiv_id)
    return body


class FakeOpenAlex(RecordedService):
    """OpenAlex's single works on loopback; only requests with ``key`` are answered."""

    def __init__(self, key: str = "test-openalex-key") -> None:
        super().__init__()
        self.key = key
        self.works: dict[str, OpenAlexWork] = {}

    def preprint(self, arxiv_id: str, *, title: str, authors: tuple[str, ...], year: int) -> None:
        """Declare an arXiv work OpenAlex keeps apart from any publication."""
        with self.lock:
            self.works[arxiv_id.lower()] = OpenAlexWork(arxiv_id, title, authors, year)

    def merged(
        self,
        arxiv_id: str,
        *,
        doi: str,
        venue: str,
        title: str,
        authors: tuple[str, ...],
        year: int,
    ) -> None:
        """Declare an arXiv paper OpenAlex merged with its publication ``doi`` in ``venue``."""
        with self.lock:
            work = OpenAlexWork(arxiv_id, title, authors, year, doi, venue)
            self.works[arxiv_id.lower()] = work

    def kind_of(self, path: str, query: dict[str, list[str]]) -> str:
        return "work" if path.startswith("/works/") else "list"

    def answer(self, path: str, query: dict[str, list[str]]) -> Answer:
        if query.get("api_key") != [self.key]:
            error = {
                "error": "Unauthorized",
                "message": "An API key is required: pass api_key with your request.",
            }
            return Answer.json(error, status=401)
        lowered = unquote(path).lower()
        work = self.works.get(lowered[len(_PREFIX) :]) if lowered.startswith(_PREFIX) else None
        if work is None:
            return Answer(404, "text/html; charset=utf-8", _NOT_FOUND)
        return Answer.json(work_json(work))
