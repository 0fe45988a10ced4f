"""The web pages: the papers, one paper's timeline, the recent events.

Server-rendered with Jinja2 (autoescaped) and one stylesheet: they read
without JavaScript and fit a phone.  They run no script at all, and say so
in their Content-Security-Policy.  Changes are shown by ``syncd.render.html``
through the shared ``Fragments``, as in the feeds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.responses import HTMLResponse, Response
from starlette.staticfiles import StaticFiles

from syncd.domain.model import Event, Revision
from syncd.domain.vocabulary import PaperStatus, source_label
from syncd.render.describe import event_headline, event_path, paper_path
from syncd.service.app import App
from syncd.storage import EventQuery
from syncd.web.api import API_PREFIX, PrintableText, RefPath, find_paper, followed_author
from syncd.web.fragments import Fragments

__all__ = ["CSP", "PAGE_PREFIXES", "error_page", "pages_router", "static_files"]

# No script of any kind; styles from our own stylesheet only.
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
PAGE_PREFIXES = ("/papers", "/events")
# Swagger UI, pinned, loaded by the reader's browser (syncd ships no JavaScript).
SWAGGER_UI = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5.17.14"
_DOCS_CSP = (
    f"default-src 'none'; script-src 'self' {SWAGGER_UI}/; "
    f"style-src {SWAGGER_UI}/ 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
EVENTS_PER_PAGE = 50
_STATIC = Path(__file__).resolve().parent / "static"
_templates = Environment(
    loader=PackageLoader("syncd.web", "templates"),
    autoescape=select_autoescape(default=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
_templates.globals |= {"api": API_PREFIX, "paper_path": paper_path}


@dataclass(frozen=True, slots=True)
class _Shown:
    """An event or revision as a page shows it: a headline, when, and the change."""

    headline: str
    when: datetime
    label: str
    html: Any
    link: str | None = None


def static_files() -> StaticFiles:
    """The stylesheet, served from the package."""
    return StaticFiles(directory=_STATIC)


def error_page(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    """An error as a page a person can read."""
    return _page("error.html", status_code=status, headers=headers, code=status, message=message)


def pages_router(app: App, fragments: Fragments) -> APIRouter:
    """The three pages over ``app``'s storage."""
    router = APIRouter(include_in_schema=False)

    @router.get("/")
    def papers(
        author: PrintableText | None = None, status: PrintableText | None = None
    ) -> Response:
        # The filter form sends "" for "all".
        author, status = author or None, _status(status or None)
        every = app.storage.papers.all(author)
        shown = [p for p in every if status in (None, p.status)]
        counts = {s.value: sum(p.status == s for p in every) for s in PaperStatus}
        authors = sorted({a.name for a in app.settings.authors} | {p.author for p in every})
        last = app.storage.papers.last_observed([p.id for p in shown])
        return _page(
            "papers.html",
            papers=shown,
            last=last,
            counts=counts,
            authors=authors,
            statuses=[s.value for s in PaperStatus],
            author=author,
            status=status,
        )

    @router.get("/papers/{ref:path}")
    def paper(ref: RefPath) -> Response:
        found = find_paper(app, ref)
        timeline = [_revision(found.id, r, fragments) for r in app.storage.papers.history(found.id)]
        return _page("paper.html", paper=found, timeline=timeline)

    @router.get("/events")
    def events(
        before: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
        author: PrintableText | None = None,
    ) -> Response:
        author = followed_author(app, author) if author else None
        query = EventQuery(author=author, before=before, newest_first=True)
        page = app.storage.events.page(replace(query, limit=EVENTS_PER_PAGE + 1))
        shown = [_event(e, fragments) for e in page[:EVENTS_PER_PAGE]]
        older = page[EVENTS_PER_PAGE - 1].seq if len(page) > EVENTS_PER_PAGE else None
        return _page("events.html", events=shown, older=older, author=author)

    @router.get(f"{API_PREFIX}/docs")
    def docs() -> Response:
        return _page("docs.html", csp=_DOCS_CSP, swagger=SWAGGER_UI)

    return router


def _status(value: str | None) -> PaperStatus | None:
    try:
        return PaperStatus(value) if value is not None else None
    except ValueError:
        known = ", ".join(PaperStatus)
        raise HTTPException(400, f"bad parameter 'status': one of {known}") from None


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


def _revision(paper_id: int, revision: Revision, fragments: Fragments) -> _Shown:
    return _Shown(
        headline=source_label(revision.source, revision.version),
        when=revision.observed_at,
        label=", ".join(revision.kinds) or ("first seen" if revision.seq == 1 else "no change"),
        html=fragments.revision(paper_id, revision),
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
