"""``/api/v1/authors``: followed authors, public to read; following and review for operators.

The writes answer only ``Authorization: Bearer <[http] admin_token>`` (404
without a token configured, 401 for a missing or wrong one, compared in
constant time, before the body is read) and change what a running daemon
syncs at its next cycle.
A configured author (an ``[[authors]]`` table) is changed in the file: 409; so is
another spelling of a known author's name.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from fastapi.routing import APIRoute
from starlette.responses import Response

from syncd.config.runtime import runtime_author
from syncd.domain.authors import AuthorSummary, author_json, candidate_json
from syncd.domain.model import SyncStanding
from syncd.domain.vocabulary import Decision, Put
from syncd.errors import ConfigError, ConflictError, NotFoundError, SeedError
from syncd.service.app import App
from syncd.service.authors import add_authors, arxiv_ids, next_syncs, remove_author
from syncd.web.api import (
    API_PREFIX,
    DEFAULT_LIMIT,
    ERROR_RESPONSES,
    MAX_LIMIT,
    PrintableText,
    admin_bearer,
    check_admin,
    json_response,
)
from syncd.web.groups_read_api import find_group
from syncd.web.paging import (
    AfterName,
    next_link_header,
    paged_responses,
)
from syncd.web.schemas import (
    AuthorDetailOut,
    AuthorIn,
    AuthorOut,
    DecisionIn,
    DecisionOut,
    ErrorOut,
)

__all__ = [
    "NamePath",
    "StandingQuery",
    "answering",
    "authors_page",
    "authors_router",
    "find_author",
    "token_first",
]

NamePath = Annotated[
    str, Path(max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$", description="the author's name")
]
StandingQuery = Annotated[
    SyncStanding | None,
    Query(description="followed authors whose last cycle succeeded, failed, or none ended"),
]
_LIST_RESPONSES = (
    paged_responses(AuthorOut)
    | ERROR_RESPONSES
    | {404: {"model": ErrorOut, "description": "no group by that name"}}
)
_UNKNOWN: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "no author by that name"}
}
_ADMIN: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "no or a wrong bearer token"},
    404: {"model": ErrorOut, "description": "no `[http] admin_token`, or no such author or id"},
    409: {
        "model": ErrorOut,
        "description": "the author is configured in the config file, or the name is a known"
        " author's in another spelling (names are compared without regard to case)",
    },
}


def find_author(app: App, name: str) -> AuthorSummary:
    """The author syncd follows or has followed under ``name`` in any spelling; else a 404."""
    found = app.storage.authors.summaries(app.storage.authors.stored_name(name))
    if not found:
        raise HTTPException(404, "no author by that name")
    return found[0]


def authors_page(
    app: App, after: str | None, limit: int, standing: SyncStanding | None, group: str | None
) -> list[AuthorSummary]:
    """One more than ``limit`` authors (the one more says another page follows) after the
    one named ``after``, at ``standing`` and in ``group`` when given (a 404 for no such group)."""
    if group is not None:
        group = find_group(app, group).name
    return app.storage.authors.page(after, limit + 1, standing, group)


def _shown(app: App, *summaries: AuthorSummary) -> list[dict[str, Any]]:
    nexts = next_syncs(app.storage, app.settings, summaries, datetime.now(UTC))
    return [author_json(summary, nexts[summary.name]) for summary in summaries]


@contextmanager
def answering() -> Iterator[None]:
    """syncd's refusals as HTTP answers: 400 bad input, 404 unknown, 409 configured or known."""
    try:
        yield
    except (ConfigError, SeedError) as exc:
        raise HTTPException(400, str(exc)) from None
    except NotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    except ConflictError as exc:
        raise HTTPException(409, str(exc)) from None


def authors_router(app: App) -> APIRouter:
    """The authors' routes over ``app``'s storage."""
    prefix = f"{API_PREFIX}/authors"
    router = APIRouter(prefix=prefix, tags=["authors"])
    writes = APIRouter(prefix=prefix, tags=["authors"], route_class=token_first(app))
    # The dependency declares the bearer scheme in the OpenAPI schema; the route class checks it.
    guarded: dict[str, Any] = {"dependencies": [Depends(admin_bearer)], "tags": ["operators"]}

    router.add_api_route(
        "", _lister(app), methods=["GET"], response_class=Response, responses=_LIST_RESPONSES
    )

    @router.get(
        "/{name:path}",
        response_class=Response,
        responses={200: {"model": AuthorDetailOut}, **_UNKNOWN},
    )
    def author(name: NamePath) -> Response:
        """One author, with the candidates held for review and why."""
        summary = find_author(app, name)
        held = [candidate_json(c) for c in app.storage.papers.candidates(summary.name)]
        return json_response(_shown(app, summary)[0] | {"candidate_papers": held})

    @writes.post(
        "",
        response_class=Response,
        responses={200: {"model": AuthorOut}, 201: {"model": AuthorOut}, **_ADMIN},
        **guarded,
    )
    def follow(body: AuthorIn) -> Response:
        """Follow an author from the next cycle on (201; 200 when already followed)."""
        with answering():
            author = runtime_author(
                body.name, orcid=body.orcid, arxiv_author_id=body.arxiv_author_id, query=body.query
            )
            (done,) = add_authors(app.storage, app.settings, [author])
        summary = find_author(app, author.name)
        return json_response(_shown(app, summary)[0], 201 if done == Put.ADDED else 200)

    @writes.delete(
        "/{name:path}",
        response_class=Response,
        responses={200: {"model": AuthorOut}, **_ADMIN},
        **guarded,
    )
    def unfollow(name: NamePath) -> Response:
        """Stop following a run-time author; its papers, history and events stay."""
        name = app.storage.authors.stored_name(name)
        with answering():
            remove_author(app.storage, app.settings, name)
        return json_response(_shown(app, find_author(app, name))[0])

    for decision, verb in ((Decision.CONFIRMED, "confirm"), (Decision.REJECTED, "reject")):
        writes.add_api_route(
            f"/{{name:path}}/{verb}",
            _decider(app, decision),
            methods=["POST"],
            response_class=Response,
            responses={200: {"model": DecisionOut}, **_ADMIN},
            summary=f"{verb.capitalize()} candidates of the author",
            **guarded,
        )
    both = APIRouter()
    both.include_router(router)
    both.include_router(writes)
    return both


def token_first(app: App) -> type[APIRoute]:
    """The route class of the operators' writes: who asks is checked before what they sent.

    FastAPI reads and parses a body before it runs a route's dependencies,
    so a malformed body would be a 400 to anyone, token or not; here a
    request without the token is a 401 (404 without one configured) whatever
    its body.
    """

    class TokenFirst(APIRoute):
        def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
            answer = super().get_route_handler()

            async def checked(request: Request) -> Response:
                check_admin(app, await admin_bearer(request))
                return await answer(request)

            return checked

    return TokenFirst


def _lister(app: App) -> Any:
    """``GET /api/v1/authors``: a page of authors, its ``Link`` to the next."""

    def authors(
        request: Request,
        after: AfterName = None,
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
        status: StandingQuery = None,
        group: PrintableText | None = None,
    ) -> Response:
        """The authors syncd follows or has followed by name, as `syncd authors list --json`,
        at most ``limit`` after the one named ``after``; ``status`` (synced, failing, never)
        and ``group`` narrow them to followed ones."""
        found = authors_page(app, after, limit, status, group)
        response = json_response(_shown(app, *found[:limit]))
        if len(found) > limit:
            cursor = found[limit - 1].name
            response.headers["Link"] = next_link_header(request, cursor)
        return response

    return authors


def _decider(app: App, decision: Decision) -> Any:
    def decide(name: NamePath, body: DecisionIn) -> Response:
        """Confirmed: tracked, paper.added published. Rejected: never the author's again."""
        name = app.storage.authors.stored_name(name)
        with answering():
            ids = arxiv_ids(body.ids)
            events = app.storage.authors.decide(name, ids, decision)
        answer = {"name": name, "decision": decision, "ids": ids, "events": [e.id for e in events]}
        return json_response(answer)

    return decide
