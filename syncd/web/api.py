"""The JSON read API under ``/api/v1``: the objects ``syncd ... --json`` prints, over HTTP.

Each route returns ``syncd.domain.views``' dicts, encoded once with ``json.dumps``;
the pydantic models of ``syncd.web.schemas`` document them in the OpenAPI
schema without a second, per-object validation pass (a page of 1,000 events
would spend most of its time there).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Sequence
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.responses import Response

from syncd.domain.history import history_steps
from syncd.domain.model import Paper
from syncd.domain.views import event_json, paper_json, revision_json
from syncd.domain.vocabulary import EventType, PaperStatus
from syncd.service.app import App
from syncd.service.authors import named_author
from syncd.storage import EventQuery, PaperListQuery, PaperScope
from syncd.web.index import MAX_QUERY, paper_cursor, papers_page
from syncd.web.paging import AfterQuery, next_link_header, paged_responses
from syncd.web.schemas import ErrorOut, EventOut, PaperOut, RevisionOut

__all__ = [
    "API_PREFIX",
    "DEFAULT_LIMIT",
    "ERROR_RESPONSES",
    "MAX_LIMIT",
    "PrintableText",
    "RefPath",
    "SearchText",
    "admin_bearer",
    "api_router",
    "check_admin",
    "find_paper",
    "followed_author",
    "json_response",
    "listed_papers",
]

API_PREFIX = "/api/v1"
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
# Text a parameter may hold: no control characters (PostgreSQL refuses NUL in
# a string, and nothing syncd stores has any), at most 200 characters.
_PRINTABLE = r"^[^\x00-\x1f\x7f]*$"
_MAX_SEQ = 2**31 - 1  # events.seq is a 32-bit INTEGER; past it a comparison would fail

PrintableText = Annotated[str, Query(max_length=200, pattern=_PRINTABLE)]
# What a search takes: printable text, bounded (longer is a 400 that echoes nothing).
SearchText = Annotated[
    str,
    Query(
        max_length=MAX_QUERY,
        pattern=_PRINTABLE,
        description="words each paper's title, arXiv id, key or authors must hold, or an arXiv id",
    ),
]
RefPath = Annotated[
    str,
    Path(
        max_length=200,
        pattern=_PRINTABLE,
        description="a paper's key or arXiv id (any version), as for `syncd history`",
    ),
]
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "a parameter is not valid; the message names it"},
    503: {"model": ErrorOut, "description": "the database does not answer"},
}
_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "no paper has this key or arXiv id"}
}
_EVENTS_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "model": list[EventOut],
        "description": "oldest first, as `syncd events --json`",
        "headers": {
            "Link": {
                "description": '`<...?after=SEQ...>; rel="next"` when more follow',
                "schema": {"type": "string"},
            }
        },
    },
    **_NOT_FOUND,
}
admin_bearer = HTTPBearer(auto_error=False, description="`[http] admin_token`")


def find_paper(app: App, ref: str) -> Paper:
    """The paper ``ref`` names (key or arXiv id); a 404 naming ``ref`` when there is none."""
    paper = app.storage.papers.find(ref)
    if paper is None:
        raise HTTPException(404, f"no paper with key or arXiv id {ref!r}")
    return paper


def followed_author(app: App, name: str) -> str:
    """The author's name as syncd keeps it when ``name`` is one syncd follows or has followed,
    in any spelling; else a 404.

    Pages and feeds put the name in their titles, so only a name syncd knows
    may get there: a link crafted with any other would otherwise show it as
    if syncd vouched for it.  The 404 does not repeat it either.
    """
    if any(author.name == name for author in app.settings.configured_authors):
        return name
    name = app.storage.authors.stored_name(name)
    if app.storage.authors.known(name):
        return name
    raise HTTPException(404, "no author by that name is followed")


def api_router(app: App) -> APIRouter:
    """The ``/api/v1`` routes over ``app``'s storage."""
    router = APIRouter(prefix=API_PREFIX, tags=["read API"], responses=ERROR_RESPONSES)

    @router.get(
        "/papers",
        response_class=Response,
        responses=paged_responses(PaperOut),
    )
    def papers(
        request: Request,
        *,
        author: PrintableText | None = None,
        status: PaperStatus | None = None,
        q: SearchText = "",
        after: AfterQuery = None,
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    ) -> Response:
        """The papers, latest change first, at most ``limit`` after the cursor ``after``;
        ``author`` and ``status`` narrow them, ``q`` searches them as the index does."""
        scope = PaperScope(author=named_author(app.storage, author) if author else None)
        query = PaperListQuery(scope, status, q, paper_cursor(after), limit)
        shown, cursor = papers_page(app, query)
        return listed_papers(app, shown, next_link_header(request, cursor) if cursor else None)

    @router.get(
        "/papers/{ref:path}/history",
        response_class=Response,
        responses={200: {"model": list[RevisionOut]}, **_NOT_FOUND},
    )
    def history(ref: RefPath) -> Response:
        """A paper's revisions in version order (seed revisions first), each one's kinds and
        changes against the one before it, as `syncd history --json`."""
        paper = find_paper(app, ref)
        steps = history_steps(app.storage.papers.history(paper.id))
        return json_response([revision_json(step.revision) for step in steps])

    @router.get(
        "/papers/{ref:path}",
        response_class=Response,
        responses={200: {"model": PaperOut}, **_NOT_FOUND},
    )
    def paper(ref: RefPath) -> Response:
        """One paper, by key or arXiv id."""
        found = find_paper(app, ref)
        return json_response(paper_json(found, app.storage.paper_sets.details([found])[found.id]))

    @router.get(
        "/events",
        response_class=Response,
        responses=_EVENTS_RESPONSES,
    )
    def events(
        request: Request,
        after: Annotated[int | None, Query(ge=0, le=_MAX_SEQ, description="a seq")] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
        event_type: Annotated[EventType | None, Query(alias="type")] = None,
        paper: PrintableText | None = None,
    ) -> Response:
        """Published events after seq ``after``, at most ``limit``, of one type or paper."""
        paper_id = find_paper(app, paper).id if paper is not None else None
        query = EventQuery(paper_id=paper_id, type=event_type, after=after, limit=limit + 1)
        page = app.storage.events.page(query)
        response = json_response([event_json(e) for e in page[:limit]])
        if len(page) > limit:
            params = dict(request.query_params) | {"after": str(page[limit - 1].seq)}
            next_url = f"{request.url.path}?{urlencode(params)}"
            response.headers["Link"] = f'<{next_url}>; rel="next"'
        return response

    return router


def check_admin(app: App, credentials: HTTPAuthorizationCredentials | None) -> None:
    """Let an operator's request through; a 404 when no token is set, a 401 for a wrong one."""
    token = app.settings.http.admin_token
    if token is None:
        raise HTTPException(404, "not found")
    given = credentials.credentials if credentials is not None else ""
    # Constant time: how long a refusal takes says nothing about the token.
    if not hmac.compare_digest(given.encode(), token.get_secret_value().encode()):
        raise HTTPException(401, "a valid bearer token is needed", {"WWW-Authenticate": "Bearer"})


def listed_papers(
    app: App, papers: Sequence[Paper], next_link: str | None, around: dict[str, Any] | None = None
) -> Response:
    """A page of papers as JSON, with ``next_link`` (the next page's ``Link``) when given;
    ``around`` the object holding them under ``papers`` (the bare list when None)."""
    details = app.storage.paper_sets.details(papers)
    listed = [paper_json(p, details[p.id]) for p in papers]
    response = json_response(listed if around is None else around | {"papers": listed})
    if next_link is not None:
        response.headers["Link"] = next_link
    return response


def json_response(payload: Any, status_code: int = 200) -> Response:
    """``payload`` as compact JSON."""
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    return Response(body, status_code=status_code, media_type="application/json")
