"""A polite client of Crossref's REST API: preprint links, bibliographic search, notices.

Every request goes through ``syncd.sources.polite``: paced per host
(``crossref_interval``; Crossref's polite pool allows 10 requests a second to
a client naming a ``mailto``, 5 to others), shared by replicas through the
database's pacer when given one, retried on 429 and 5xx honouring
``Retry-After``, size-capped (``max_response_bytes``).  With ``[arxiv]
contact`` set the contact goes as ``mailto:`` in the User-Agent and as
Crossref's ``mailto`` parameter.  ``select`` keeps answers to the fields read.

Batches: a link lookup asks for ``LINK_BATCH`` arXiv ids in one request, each
in both forms Crossref's relations name it (``relation.object:10.48550/arXiv.<id>``
and ``relation.object:<id>``: ``2 * LINK_BATCH`` values of one filter, which
Crossref ORs); a notice lookup ``NOTICE_BATCH`` DOIs (``updates:<doi>``).
Both stay far below the URL lengths Crossref accepts (about 2,000
characters for a batch of arXiv ids), and an answer of more than ``ROWS``
works is read page by page (at most ``MAX_PAGES``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Unpack

import structlog

from syncd.config import ArxivSettings, PublicationsSettings
from syncd.domain.bibliographic import YEAR_WINDOW
from syncd.domain.publications import LinkedWork, Notice, Work, normalize_doi
from syncd.sources.crossref._parser import (
    WorkList,
    linked_works,
    notice_targets,
    parse_work_list,
    readable_works,
)
from syncd.sources.polite import (
    Plumbing,
    ServiceClient,
    publication_policy,
)

__all__ = [
    "LINK_BATCH",
    "MAX_PAGES",
    "NOTICE_BATCH",
    "ROWS",
    "SEARCH_ROWS",
    "CrossrefClient",
]

_log = structlog.get_logger(__name__)

LINK_BATCH = 20
NOTICE_BATCH = 40
ROWS = 100
MAX_PAGES = 5
SEARCH_ROWS = 5

_SETTING = "publications.crossref_url"
_WORK_FIELDS = "DOI,title,author,published,issued,container-title,type,URL,relation,updated-by"
_NOTICE_FIELDS = "DOI,update-to"


def _batches(values: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


class CrossrefClient(ServiceClient):
    """Crossref, asked politely; use it as a context manager.

    ``requests`` counts requests by kind: ``link``, ``search``, ``notices``.
    """

    def __init__(
        self,
        publications: PublicationsSettings,
        arxiv: ArxivSettings,
        **plumbing: Unpack[Plumbing],
    ) -> None:
        policy = publication_policy("Crossref", publications.crossref_interval, publications, arxiv)
        super().__init__(publications.crossref_url, policy, **plumbing)
        self._mailto = arxiv.contact

    def _params(self, params: dict[str, str | int]) -> dict[str, str | int]:
        return {**params, "mailto": self._mailto} if self._mailto else params

    def _list(self, kind: str, params: dict[str, str | int]) -> Iterator[WorkList]:
        """The pages of a ``/works`` list, ``ROWS`` at a time, until all are read."""
        offset = 0
        for _ in range(MAX_PAGES):
            page_params = self._params({**params, "rows": ROWS, "offset": offset})
            page = self._get(kind, "/works", page_params, parse_work_list, _SETTING)
            yield page
            offset += len(page.items)
            if not page.items or offset >= page.total:
                return
        _log.warning("crossref_list_cut", kind=kind, read=offset, pages=MAX_PAGES)

    def linked_works(self, arxiv_ids: Sequence[str]) -> list[LinkedWork]:
        """The works whose ``has-preprint`` names one of ``arxiv_ids`` (bare, no version),
        by the arXiv DOI or by the id: one request per ``LINK_BATCH`` ids."""
        found: list[LinkedWork] = []
        for batch in _batches(list(dict.fromkeys(arxiv_ids)), LINK_BATCH):
            values = [f"relation.object:10.48550/arXiv.{arxiv_id}" for arxiv_id in batch]
            values += [f"relation.object:{arxiv_id}" for arxiv_id in batch]
            params: dict[str, str | int] = {"filter": ",".join(values), "select": _WORK_FIELDS}
            for page in self._list("link", params):
                found.extend(linked_works(page.items, batch))
        return found

    def search(self, title: str, authors: Sequence[str], year: int | None) -> list[Work]:
        """At most ``SEARCH_ROWS`` works Crossref ranks first for the title and the first
        author's family name, published from the year before ``year`` to a few after."""
        words = [title.strip()]
        if authors and authors[0].split():
            words.append(authors[0].split()[-1])
        params: dict[str, str | int] = {
            "query.bibliographic": " ".join(words)[:1000],
            "rows": SEARCH_ROWS,
            "select": _WORK_FIELDS,
        }
        if year is not None:
            params["filter"] = (
                # The years the score counts: no work outside them can match.
                f"from-pub-date:{year + YEAR_WINDOW[0]},until-pub-date:{year + YEAR_WINDOW[1]}"
            )
        page = self._get("search", "/works", self._params(params), parse_work_list, _SETTING)
        return readable_works(page.items)

    def notices(self, dois: Sequence[str]) -> list[Notice]:
        """The notices (corrections, retractions, ...) Crossref holds on any of ``dois``:
        the works whose ``update-to`` names them, one request per ``NOTICE_BATCH`` DOIs."""
        targets = [doi for doi in (normalize_doi(d) for d in dois) if doi is not None]
        found: list[Notice] = []
        for batch in _batches(list(dict.fromkeys(targets)), NOTICE_BATCH):
            params: dict[str, str | int] = {
                "filter": ",".join(f"updates:{doi}" for doi in batch),
                "select": _NOTICE_FIELDS,
            }
            for page in self._list("notices", params):
                found.extend(notice_targets(page.items, set(batch)))
        return found
