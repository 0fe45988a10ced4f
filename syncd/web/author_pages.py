"""The authors' pages: ``/authors`` (everyone followed, a page at a time) and ``/authors/{name}``.

``/authors`` lists the authors by name, ``PAGE_SIZE`` a page; ``?status=``
(synced, failing, never) and ``?group=`` narrow it to the followed authors the
status strip counts, and it carries the strip's details (the harvest, arXiv's
throttling, the next sync).

Each author's identifiers link to arXiv and ORCID, a status line says how its
cycles went and when the next is due, and its papers are listed: tracked
(claimed ones marked, with where each was published), and candidates with
the reason each is held.  The
author's Atom feed is ``/feeds/events.atom?author=NAME``, announced for
autodiscovery.  Like every page: no script, every string escaped and isolated.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from syncd.domain.authors import (
    ARXIV_AUTHOR_PAGE,
    ORCID_PAGE,
    AuthorSummary,
    describe_reason,
    status_line,
)
from syncd.domain.vocabulary import PaperStatus
from syncd.render.describe import author_path
from syncd.service.app import App
from syncd.service.authors import next_syncs
from syncd.storage import PaperListQuery, PaperScope
from syncd.web.authors_api import NamePath, StandingQuery, authors_page, find_author
from syncd.web.index import NextSync, paper_cursor, papers_page
from syncd.web.pages import page_renderer
from syncd.web.paging import PAGE_SIZE, AfterName, AfterQuery, next_link
from syncd.web.published import listed_publications

__all__ = ["author_pages_router"]

NameQuery = Annotated[str | None, Query(max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$")]


def _feed_path(name: str) -> str:
    return "/feeds/events.atom?" + urlencode({"author": name})


def _statuses(app: App, *summaries: AuthorSummary) -> dict[str, str]:
    """Each author's status line, by name."""
    nexts = next_syncs(app.storage, app.settings, summaries, datetime.now(UTC))
    return {s.name: status_line(s, nexts[s.name]) for s in summaries}


def author_pages_router(app: App, next_sync: NextSync | None = None) -> APIRouter:
    """``/authors`` and ``/authors/{name}`` over ``app``'s storage, with the status strip."""
    router = APIRouter(include_in_schema=False)
    render_page = page_renderer(app, next_sync)
    links = {
        "author_path": author_path,
        "feed_path": _feed_path,
        "arxiv_page": ARXIV_AUTHOR_PAGE,
        "orcid_page": ORCID_PAGE,
    }

    @router.get("/authors/{name:path}")
    def author(request: Request, name: NamePath, after: AfterQuery = None) -> Response:
        summary = find_author(app, name)
        name = summary.name
        scope = PaperScope(author=name, statuses=(PaperStatus.TRACKED,))
        query = PaperListQuery(scope, after=paper_cursor(after), limit=PAGE_SIZE)
        tracked, cursor = papers_page(app, query)
        candidates = app.storage.papers.candidates(name, PAGE_SIZE)
        counts = app.storage.paper_lists.counts(PaperScope(author=name))
        others = sum(counts.values()) - counts[PaperStatus.TRACKED] - summary.candidates
        return render_page(
            "author.html",
            author=summary,
            status=_statuses(app, summary)[name],
            tracked=tracked,
            next_url=next_link(request, cursor) if cursor else None,
            claimed=app.storage.authors.claimed_ids(name),
            published=listed_publications(app, tracked),
            candidates=candidates,
            reason=describe_reason,
            others=others,
            **links,
        )

    @router.get("/authors")
    def authors(
        request: Request,
        name: NameQuery = None,
        after: AfterName = None,
        status: StandingQuery = None,
        group: NameQuery = None,
    ) -> Response:
        if name is not None:
            # An author whose name a path cannot hold (author_path); ``after`` is then
            # the cursor of their papers.
            return author(request, name, after)
        found = authors_page(app, after, PAGE_SIZE, status, group)
        shown = found[:PAGE_SIZE]
        more = next_link(request, shown[-1].name) if len(found) > PAGE_SIZE else None
        return render_page(
            "authors.html",
            authors=shown,
            statuses=_statuses(app, *shown),
            standing=status,
            group=group,
            first_page=after is None,
            next_page=more,
            **links,
        )

    return router
