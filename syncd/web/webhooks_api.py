"""``/api/v1/webhooks``: how each endpoint's deliveries stand, for operators.

It answers only ``Authorization: Bearer <[http] admin_token>``, as the
authors' writes do (``check_admin``): 404 without a token configured, 401
for a missing or wrong one.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.security import HTTPAuthorizationCredentials
from starlette.responses import Response

from syncd.domain.views import endpoint_json
from syncd.service.app import App
from syncd.web.api import API_PREFIX, ERROR_RESPONSES, admin_bearer, check_admin, json_response
from syncd.web.schemas import EndpointOut, ErrorOut

__all__ = ["webhooks_router"]


def webhooks_router(app: App) -> APIRouter:
    """The ``/api/v1/webhooks`` route over ``app``'s endpoints (beside the read API's)."""
    router = APIRouter(prefix=API_PREFIX, tags=["read API"], responses=ERROR_RESPONSES)

    @router.get(
        "/webhooks",
        response_class=Response,
        tags=["operators"],
        responses={
            200: {"model": list[EndpointOut], "description": "as `syncd webhooks list --json`"},
            401: {"model": ErrorOut, "description": "no or a wrong bearer token"},
            404: {"model": ErrorOut, "description": "no `[http] admin_token` is configured"},
        },
    )
    def webhooks(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(admin_bearer)],
    ) -> Response:
        """Per webhook endpoint: pending, delivered and dead-lettered deliveries (operators)."""
        check_admin(app, credentials)
        summaries = app.endpoint_summaries()
        return json_response([endpoint_json(e, app.endpoint_origin(e.name)) for e in summaries])

    return router
