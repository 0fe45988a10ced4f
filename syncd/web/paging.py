"""Keyset pagination shared by every list: the cursor in ``?after=``, the next page's link.

A cursor names the last row shown by its sort key and a unique tie-breaker,
so a row inserted between two requests never makes another repeat or vanish
(an offset would).  A list ordered by something else than one unique value
(papers by latest change) takes an opaque cursor: URL-safe base64 of a JSON
array; one that does not decode to the key its list expects is a 400.  A list
ordered by a unique name (authors, groups, a group's members) takes the last
name shown as its cursor, as a list ordered by a unique integer takes that
integer (``/api/v1/events?after=<seq>``): any printable text is a place in
such a list, so no cursor of it is malformed.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import HTTPException, Query, Request

__all__ = [
    "PAGE_SIZE",
    "AfterName",
    "AfterQuery",
    "decode_cursor",
    "encode_cursor",
    "next_link",
    "next_link_header",
    "paged_responses",
]

# The rows a page shows (the API's own limits are syncd.web.api's DEFAULT_LIMIT, MAX_LIMIT).
PAGE_SIZE = 50
# A cursor holds a sort key and a tie-breaker: a name is at most 200 characters.
_MAX_CURSOR = 1200

AfterQuery = Annotated[
    str | None,
    Query(
        max_length=_MAX_CURSOR,
        pattern=r"^[A-Za-z0-9_=-]*$",
        description="the cursor of the previous page's `next` link",
    ),
]
AfterName = Annotated[
    str | None,
    Query(
        max_length=200,
        pattern=r"^[^\x00-\x1f\x7f]*$",
        description="the last name of the previous page (its `next` link gives it)",
    ),
]


def encode_cursor(*key: str | int) -> str:
    """The cursor naming a row by ``key`` (its sort key, then a unique tie-breaker)."""
    text = json.dumps(list(key), ensure_ascii=False, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode()


def decode_cursor(cursor: str, *kinds: type[str] | type[int]) -> tuple[str | int, ...]:
    """The key ``cursor`` names, one value of each of ``kinds``; a 400 when it names none."""
    try:
        key = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (binascii.Error, ValueError):
        key = None
    if (
        not isinstance(key, list)
        or len(key) != len(kinds)
        # bool is an int to Python, never to a cursor.
        or not all(type(part) is kind for part, kind in zip(key, kinds, strict=True))
    ):
        raise HTTPException(400, "bad parameter 'after': not a cursor this list gave")
    return tuple(key)


def next_link(request: Request, cursor: str, param: str = "after") -> str:
    """The address of the page after the one ``request`` asked for: the same filters,
    ``param`` (``after``, or the cursor of a page's second list) the cursor of its last row."""
    params = dict(request.query_params) | {param: cursor}
    # The path as asked for, still percent-encoded: a header holds ASCII only, and a
    # name's "/" stays %2F.
    path = request.scope.get("raw_path", b"").decode("ascii") or quote(request.url.path)
    return f"{path}?{urlencode(params)}"


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
