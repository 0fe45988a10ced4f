"""The web pages: the papers, a paper and its compare view, the events, how to subscribe.

Server-rendered with Jinja2 (autoescaped) and one stylesheet: they read
without JavaScript and fit a phone.  They run no script at all, and say so
in their Content-Security-Policy.  Changes are shown by ``syncd.render.html``
through the shared ``Fragments``, as in the feeds.  Every page carries the
sync status strip (``syncd.web.index.sync_status``).

The index's search is a GET form: what was searched for goes back only into
the form's own field (escaped), never into a heading or the title, so a
crafted link cannot make syncd appear to say something.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Query, Request
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.responses import HTMLResponse, Response
from starlette.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

from syncd.domain.model import Event
from syncd.domain.moments import human_time
from syncd.domain.vocabulary import PaperStatus
from syncd.render.describe import (
    author_path,
    change_words,
    counted,
    event_headline,
    event_path,
    paper_path,
)
from syncd.service.app import App
from syncd.service.authors import named_author
from syncd.storage import EventQuery, PaperListQuery, PaperScope
from syncd.web.api import (
    API_PREFIX,
    PrintableText,
    RefPath,
    SearchText,
    find_paper,
    followed_author,
)
from syncd.web.feeds import links_base
from syncd.web.fragments import Fragments
from syncd.web.groups_read_api import find_group, group_feed_path
from syncd.web.index import STRIP_AUTHORS, NextSync, paper_cursor, papers_page, sync_status
from syncd.web.paging import PAGE_SIZE, AfterQuery, next_link
from syncd.web.paper_page import compare_context, paper_context
from syncd.web.published import listed_publications

__all__ = [
    "CSP",
    "PAGE_PREFIXES",
    "SWAGGER_UI",
    "authors_list_path",
    "error_page",
    "page_renderer",
    "pages_router",
    "static_files",
    "swagger_files",
]

# No script of any kind; styles from our own stylesheet only.
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
PAGE_PREFIXES = ("/papers", "/events", "/subscribe", "/authors", "/groups")
# Swagger UI 5 from the installed package (swagger-ui-bundle-v2), served here:
# the docs work without internet.  Its styles set inline style attributes.
SWAGGER_UI = "/static/swagger-ui"
_DOCS_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'"
)
# The groups the index's filter offers (a library's departments); more are on /groups.
MAX_GROUP_CHOICES = 200
_STATIC = Path(__file__).resolve().parent / "static"
_templates = Environment(
    loader=PackageLoader("syncd.web", "templates"),
    autoescape=select_autoescape(default=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
_templates.globals |= {
    "api": API_PREFIX,
    "paper_path": paper_path,
    "author_path": author_path,
    "change_words": change_words,
}
_templates.filters["counted"] = counted
# A bare count as people read large ones: 100,000.
_templates.filters["grouped"] = "{:,}".format
_templates.filters["human"] = human_time


@dataclass(frozen=True, slots=True)
class _Shown:
    """An event or revision as a page shows it: a headline, when, and the change."""

    headline: str
    when: datetime
    label: str
    html: Any
    link: str | None = None


def authors_list_path(standing: str | None = None, group: str | None = None) -> str:
    """The path of ``/authors`` listing those of ``standing`` (synced, failing, never),
    of the group ``group`` names, or everyone."""
    asked = {"status": standing, "group": group}
    query = urlencode({key: value for key, value in asked.items() if value is not None})
    return f"/authors?{query}" if query else "/authors"


_templates.globals["authors_list"] = authors_list_path


def static_files() -> StaticFiles:
    """The stylesheet, served from the package."""
    return StaticFiles(directory=_STATIC)


def swagger_files() -> StaticFiles:
    """Swagger UI's script and styles, served from their package at ``SWAGGER_UI``."""
    return StaticFiles(directory=Path(str(swagger_ui_path)))


def error_page(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    """An error as a page a person can read."""
    return _page("error.html", status_code=status, headers=headers, code=status, message=message)


def pages_router(app: App, fragments: Fragments, next_sync: NextSync | None = None) -> APIRouter:
    """The pages over ``app``'s storage; ``next_sync`` tells when the scheduler syncs next."""
    router = APIRouter(include_in_schema=False)
    page = page_renderer(app, next_sync)

    @router.get("/")
    def papers(
        request: Request,
        *,
        author: PrintableText | None = None,
        status: PrintableText | None = None,
        group: PrintableText | None = None,
        q: SearchText = "",
        after: AfterQuery = None,
    ) -> Response:
        scope = _scope(app, author or None, group or None)
        query = PaperListQuery(scope, _status(status or None), q, paper_cursor(after), PAGE_SIZE)
        return page("papers.html", **_index(app, request, query))

    # Before the paper's own route, whose {ref:path} would take "…/compare" as a key.
    @router.get("/papers/{ref:path}/compare")
    def compare(
        ref: RefPath,
        old: Annotated[str | None, Query(alias="from", max_length=40)] = None,
        new: Annotated[str | None, Query(alias="to", max_length=40)] = None,
    ) -> Response:
        return page("compare.html", **compare_context(app, find_paper(app, ref), old, new))

    @router.get("/papers/{ref:path}")
    def paper(ref: RefPath) -> Response:
        found = find_paper(app, ref)
        followed = app.storage.authors.followed_now(found.author)
        return page("paper.html", followed=followed, **paper_context(app, fragments, found))

    @router.get("/events")
    def events(
        before: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
        author: PrintableText | None = None,
        group: PrintableText | None = None,
        paper: PrintableText | None = None,
    ) -> Response:
        return page("events.html", **_events(app, fragments, (author, group, paper), before))

    @router.get("/subscribe")
    def subscribe(request: Request) -> Response:
        base = links_base(request, app.settings.http.public_url)
        groups = [g.name for g in app.storage.groups.page(None, PAGE_SIZE + 1)]
        return page(
            "subscribe.html",
            base=base,
            groups=groups[:PAGE_SIZE],
            more_groups=len(groups) > PAGE_SIZE,
            group_feed_path=group_feed_path,
        )

    @router.get(f"{API_PREFIX}/docs")
    def docs() -> Response:
        return _page("docs.html", csp=_DOCS_CSP, swagger=SWAGGER_UI)

    return router


def _scope(app: App, author: str | None, group: str | None) -> PaperScope:
    """The index's papers: everyone's or an author's, within a group's members when given."""
    named = named_author(app.storage, author) if author is not None else None
    return PaperScope(author=named, group=find_group(app, group).name if group else None)


def _index(app: App, request: Request, query: PaperListQuery) -> dict[str, Any]:
    """What the index shows for ``query``: a page of its papers, the counts of the papers
    its author and group filters hold, and the authors to narrow it to when they are few."""
    scope = query.scope
    counts = app.storage.paper_lists.counts(scope)
    shown, cursor = papers_page(app, query)
    # A few authors are links to their papers; more are the author field's to name.
    few = app.storage.paper_lists.authors(scope, STRIP_AUTHORS + 1)
    if scope.group is None:
        few = sorted({*few, *(a.name for a in app.settings.configured_authors)})
    known = scope.author is None or _followed(app, scope.author)
    if query.search:
        # Matches are counted only when they fit on the one page.
        whole = query.after is None and cursor is None
        matched = len(shown) if whole else None
    else:
        matched = counts[query.status] if query.status else sum(counts.values())
    return {
        "papers": shown,
        "next_url": next_link(request, cursor) if cursor else None,
        "first_page": query.after is None,
        "changes": app.storage.papers.latest_changes([p.id for p in shown]),
        "published": listed_publications(app, shown),
        "total": sum(counts.values()),
        "counts": {status.value: count for status, count in counts.items()},
        "authors": few if len(few) <= STRIP_AUTHORS else [],
        "matched": matched,
        "statuses": [s.value for s in PaperStatus],
        "author": scope.author if known else None,
        "unknown_author": not known,
        "asked_author": scope.author or "",
        "status": query.status,
        "query": query.search,
        "groups": [g.name for g in app.storage.groups.page(None, MAX_GROUP_CHOICES)],
        "group": scope.group,
    }


def _followed(app: App, name: str) -> bool:
    """Whether syncd follows or has followed the author ``name`` (a page may then show it)."""
    try:
        followed_author(app, name)
    except HTTPException:
        return False
    return True


def _status(value: str | None) -> PaperStatus | None:
    try:
        return PaperStatus(value) if value is not None else None
    except ValueError:
        known = ", ".join(PaperStatus)
        raise HTTPException(400, f"bad parameter 'status': one of {known}") from None


def _events(
    app: App,
    fragments: Fragments,
    about: tuple[str | None, str | None, str | None],
    before: int | None,
) -> dict[str, Any]:
    """A page of ``/events``, newest first, before seq ``before``: of an author, a group or a
    paper when ``about`` names one (in that order), with the seq its "older" link starts at."""
    author_asked, group_asked, paper_asked = about
    author = followed_author(app, author_asked) if author_asked else None
    group = find_group(app, group_asked).name if group_asked else None
    paper = find_paper(app, paper_asked) if paper_asked else None
    query = EventQuery(
        author=author,
        group=group,
        paper_id=paper.id if paper is not None else None,
        before=before,
        newest_first=True,
        limit=PAGE_SIZE + 1,
    )
    found = app.storage.events.page(query)
    shown = [_event(e, fragments) for e in found[:PAGE_SIZE]]
    older = found[PAGE_SIZE - 1].seq if len(found) > PAGE_SIZE else None
    return {"events": shown, "older": older, "author": author, "group": group, "paper": paper}


def _event(event: Event, fragments: Fragments) -> _Shown:
    record = event.record
    title = record.title if record is not None else event.paper_key
    version = record.version if record is not None else None
    return _Shown(
        headline=event_headline(
            event.type, title, event.arxiv_id, version, event.kinds, changes=event.changes
        ),
        when=event.created_at,
        label=event.type,
        html=fragments.event(event),
        link=event_path(event),
    )


def _page(
    template: str,
    *,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    csp: str = CSP,
    **context: Any,
) -> Response:
    html = _templates.get_template(template).render(**context)
    response = HTMLResponse(html, status_code=status_code, headers=dict(headers or {}))
    response.headers["Content-Security-Policy"] = csp
    return response


def page_renderer(app: App, next_sync: NextSync | None = None) -> Callable[..., Response]:
    """Render a template as a page carrying the sync status strip (every page but errors):
    of every followed author, or of the members of the group ``strip_group`` names."""

    def page(template: str, *, strip_group: str | None = None, **context: Any) -> Response:
        harvest = app.storage.harvests.state() if app.settings.harvest.enabled else None
        status = sync_status(
            app.storage.runs.tally(strip_group),
            next_sync,
            harvest,
            app.storage.cooldowns.all(),
            strip_group,
        )
        return _page(template, sync=status, **context)

    return page
