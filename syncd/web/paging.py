"""Keyset pagination shared by every list: the cursor in ``?after=``, the next page's link.

A cursor names the last row shown by its sort key and a unique tie-breaker,
so a row inserted between two requests never makes another repeat or vanish
(an offset would).  A list ordered by a unique name (authors, groups, a
group's members) takes the last name shown as its cursor, as a list ordered
by a unique integer takes that integer (``/api/v1/events?after=<seq>``):
any printable text is a place in such a list, so no cursor of it is malformed.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import Query, Request

__all__ = ["PAGE_SIZE", "AfterName", "next_link", "next_link_header", "paged_responses"]

# The rows a page shows (the API's own limits are syncd.web.api's DEFAULT_LIMIT, MAX_LIMIT).
PAGE_SIZE = 50

AfterName = Annotated[
    str | None,
    Query(
        max_length=200,
        pattern=r"^[^\x00-\x1f\x7f]*$",
        description="the last name of the previous page (its `next` link gives it)",
    ),
]


def next_link(request: Request, cursor: str) -> str:
    """The address of the page after the one ``request`` asked for: the same filters,
    ``after`` the cursor of its last row."""
    params = dict(request.query_params) | {"after": cursor}
    return f"{request.url.path}?{urlencode(params)}"


def next_link_header(request: Request, cursor: str) -> str:
    """The API's ``Link`` header to the page after the one ``request`` asked for."""
    return f'<{next_link(request, cursor)}>; rel="next"'


def paged_responses(model: Any) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI answer of a paginated list of ``model``: its ``Link`` header."""
    link = {
        "description": '`<...?after=CURSOR...>; rel="next"` when more follow',
        "schema": {"type": "string"},
    }
    return {200: {"model": list[model], "headers": {"Link": link}}}
