"""``/api/v1/groups``: groups of followed authors, public to read; made and changed by operators.

The writes answer only ``Authorization: Bearer <[http] admin_token>``, as
``/api/v1/authors``' do (404 without a token configured, 401 for a missing or
wrong one, before the body is read).  A change routes the next event any
process publishes.  A configured group (a ``[[groups]]`` table) is changed
in the file: 409; so is removing a group a target routes by.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from starlette.responses import Response

from syncd.domain.groups import group_json
from syncd.domain.vocabulary import Put
from syncd.service.app import App
from syncd.service.groups import add_group, change_members, remove_group
from syncd.web.api import (
    API_PREFIX,
    DEFAULT_LIMIT,
    ERROR_RESPONSES,
    MAX_LIMIT,
    admin_bearer,
    json_response,
)
from syncd.web.authors_api import answering, token_first
from syncd.web.groups_read_api import find_group
from syncd.web.paging import (
    AfterName,
    next_link_header,
    paged_responses,
)
from syncd.web.schemas import ErrorOut, GroupIn, GroupOut, MembersIn

__all__ = ["groups_router"]

GroupPath = Annotated[
    str, Path(max_length=100, pattern=r"^[^\x00-\x1f\x7f/]*$", description="the group's name")
]
_LIST_RESPONSES = paged_responses(GroupOut) | ERROR_RESPONSES
_UNKNOWN: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "no group by that name"}
}
_ADMIN: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "a name no group can have"},
    401: {"model": ErrorOut, "description": "no or a wrong bearer token"},
    404: {
        "model": ErrorOut,
        "description": "no `[http] admin_token`, no such group, or no followed author by a name",
    },
    409: {
        "model": ErrorOut,
        "description": "the group is configured in the config file, or a target routes by it",
    },
}


def groups_router(app: App) -> APIRouter:
    """The groups' routes over ``app``'s storage."""
    prefix = f"{API_PREFIX}/groups"
    router = APIRouter(prefix=prefix, tags=["groups"])
    writes = APIRouter(prefix=prefix, tags=["groups"], route_class=token_first(app))
    guarded: dict[str, Any] = {"dependencies": [Depends(admin_bearer)], "tags": ["operators"]}

    router.add_api_route(
        "", _lister(app), methods=["GET"], response_class=Response, responses=_LIST_RESPONSES
    )

    @router.get(
        "/{name}", response_class=Response, responses={200: {"model": GroupOut}, **_UNKNOWN}
    )
    def group(name: GroupPath) -> Response:
        """One group and its members."""
        return json_response(group_json(find_group(app, name)))

    @writes.post(
        "",
        response_class=Response,
        responses={200: {"model": GroupOut}, 201: {"model": GroupOut}, **_ADMIN},
        **guarded,
    )
    def make(body: GroupIn) -> Response:
        """Make a group with these members (201), or describe one again and add them (200)."""
        with answering():
            made, done = add_group(
                app.storage, app.settings, body.name, body.description, body.members
            )
        return json_response(group_json(made), 201 if done == Put.ADDED else 200)

    @writes.post(
        "/{name}/members",
        response_class=Response,
        responses={200: {"model": GroupOut}, **_ADMIN},
        **guarded,
    )
    def members(name: GroupPath, body: MembersIn) -> Response:
        """Put authors in a run-time group and take others out."""
        with answering():
            changed, _, _ = change_members(app.storage, app.settings, name, body.add, body.remove)
        return json_response(group_json(changed))

    @writes.delete(
        "/{name}",
        response_class=Response,
        responses={200: {"model": GroupOut}, **_ADMIN},
        **guarded,
    )
    def remove(name: GroupPath) -> Response:
        """Remove a run-time group; its authors stay followed.  The group as it was."""
        gone = find_group(app, name)
        with answering():
            remove_group(app.storage, app.settings, name)
        return json_response(group_json(gone))

    both = APIRouter()
    both.include_router(router)
    both.include_router(writes)
    return both


def _lister(app: App) -> Any:
    """``GET /api/v1/groups``: a page of groups, its ``Link`` to the next."""

    def groups(
        request: Request,
        after: AfterName = None,
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    ) -> Response:
        """The groups and their members by name, as `syncd groups list --json`, at most
        ``limit`` after the group named ``after``."""
        found = app.storage.groups.named_page(after, limit + 1)
        response = json_response([group_json(g) for g in found[:limit]])
        if len(found) > limit:
            cursor = found[limit - 1].name
            response.headers["Link"] = next_link_header(request, cursor)
        return response

    return groups
