"""``/api/v1/publications``: the links a score left in doubt, for operators to decide.

Every route answers only ``Authorization: Bearer <[http] admin_token>``, as
the authors' writes do (404 without a token configured, 401 for a missing or
wrong one, checked before the body is read).  A confirmed link is announced
(``paper.published``, or ``paper.publication_changed`` over a current one)
and delivered by the running daemon; a rejected one never comes back.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from starlette.responses import Response

from syncd.domain.publications import review_json
from syncd.domain.vocabulary import Decision
from syncd.service.app import App
from syncd.service.publications import decide_publication
from syncd.web.api import API_PREFIX, admin_bearer, json_response
from syncd.web.authors_api import answering, token_first
from syncd.web.schemas import (
    ErrorOut,
    PublicationDecisionIn,
    PublicationDecisionOut,
    ReviewOut,
)

__all__ = ["publications_router"]

PaperPath = Annotated[
    str, Path(max_length=60, pattern=r"^[\x21-\x7e]+$", description="the paper's arXiv id")
]
_ADMIN: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "no or a wrong bearer token"},
    404: {"model": ErrorOut, "description": "no `[http] admin_token`, or no such paper"},
    409: {"model": ErrorOut, "description": "the paper has no such link to decide on"},
}


def publications_router(app: App) -> APIRouter:
    """The operators' publication routes over ``app``'s storage."""
    router = APIRouter(
        prefix=f"{API_PREFIX}/publications",
        tags=["operators"],
        route_class=token_first(app),
        dependencies=[Depends(admin_bearer)],
    )

    @router.get(
        "/review", response_class=Response, responses={200: {"model": list[ReviewOut]}, **_ADMIN}
    )
    def review() -> Response:
        """Candidate links, oldest first: scored from review_score up to accept_score."""
        return json_response([review_json(item) for item in app.storage.publications.review()])

    for decision, verb in ((Decision.CONFIRMED, "confirm"), (Decision.REJECTED, "reject")):
        router.add_api_route(
            f"/{{paper:path}}/{verb}",
            _decider(app, decision),
            methods=["POST"],
            response_class=Response,
            responses={200: {"model": PublicationDecisionOut}, **_ADMIN},
            summary=f"{verb.capitalize()} a publication link of a paper",
        )
    return router


def _decider(app: App, decision: Decision) -> Any:
    def decide(paper: PaperPath, body: PublicationDecisionIn) -> Response:
        """Confirmed: announced as the paper's publication. Rejected: never proposed again."""
        with answering():
            events = decide_publication(app.storage, paper, body.doi, decision, datetime.now(UTC))
        answer = {
            "paper": paper,
            "doi": body.doi,
            "decision": decision,
            "events": [e.id for e in events],
        }
        return json_response(answer)

    return decide
