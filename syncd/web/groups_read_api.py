"""``GET /api/v1/groups/{name}/papers`` and ``.../report``: a group's papers and report.

Groups themselves (list, one, the operators' writes) are ``syncd.web.groups_api``'s;
these two reads show what the group's pages show.  Also what the pages and
the feeds share about a group: how it is found by name, its paths, the period
a report asks for.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, HTTPException, Path, Query, Request
from starlette.responses import Response

from syncd.domain.groups import Group, group_json
from syncd.domain.reports import Period, report_period
from syncd.domain.views import report_json
from syncd.domain.vocabulary import PaperStatus
from syncd.errors import NotFoundError
from syncd.service.app import App
from syncd.service.groups import named_group
from syncd.service.reports import report_of
from syncd.storage import PaperListQuery, PaperScope
from syncd.web.api import (
    API_PREFIX,
    DEFAULT_LIMIT,
    ERROR_RESPONSES,
    MAX_LIMIT,
    json_response,
    listed_papers,
)
from syncd.web.index import paper_cursor, papers_page
from syncd.web.paging import AfterQuery, next_link_header, paged_responses
from syncd.web.schemas import ErrorOut, GroupPapersOut, PaperOut, ReportOut

__all__ = [
    "SHOWN_STATUSES",
    "DayQuery",
    "GroupNamePath",
    "find_group",
    "group_feed_path",
    "group_papers",
    "group_path",
    "groups_read_router",
    "period_of",
]

GroupNamePath = Annotated[
    str, Path(max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$", description="the group's name")
]
DayQuery = Annotated[
    str | None, Query(max_length=10, pattern=r"^[0-9-]*$", description="a day, YYYY-MM-DD")
]
# A group's papers: their members' own (a candidate is not theirs yet).
SHOWN_STATUSES = (PaperStatus.TRACKED, PaperStatus.UNLINKED, PaperStatus.REMOVED)
_UNKNOWN: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "no group by that name"}
}


def group_path(name: str) -> str:
    """The path of a group's page; a name that is a dot segment is asked for by query
    (a browser would resolve ``/groups/..`` away, as for authors)."""
    if name in (".", ".."):
        return "/groups?" + urlencode({"name": name})
    return "/groups/" + quote(name, safe="")


def group_feed_path(name: str) -> str:
    """The path of a group's Atom feed."""
    return "/feeds/groups/" + quote(name, safe="") + ".atom"


def find_group(app: App, name: str) -> Group:
    """The group called ``name``; a 404 when there is none."""
    try:
        return named_group(app.storage, name)
    except NotFoundError as exc:
        raise HTTPException(404, str(exc)) from None


def group_papers(group: Group) -> PaperScope:
    """A group's papers: its members' own (``SHOWN_STATUSES``)."""
    return PaperScope(group=group.name, statuses=SHOWN_STATUSES)


def period_of(since: str | None, until: str | None) -> Period:
    """The period a request asks for; a 400 saying what is wrong with it."""
    try:
        return report_period(since, until, datetime.now(UTC).date())
    except ValueError as exc:
        raise HTTPException(400, f"bad period: {exc}") from None


def groups_read_router(app: App) -> APIRouter:
    """The read routes of ``/api/v1/groups`` over ``app``'s storage."""
    router = APIRouter(prefix=f"{API_PREFIX}/groups", tags=["groups"], responses=ERROR_RESPONSES)

    @router.get(
        "/{name}/report",
        response_class=Response,
        responses={200: {"model": ReportOut}, **_UNKNOWN},
    )
    def report(name: GroupNamePath, since: DayQuery = None, until: DayQuery = None) -> Response:
        """Per member, new papers, new versions and withdrawals from ``since`` to ``until``
        (whole UTC days; the last 30 days by default), as `syncd report --json`."""
        group = find_group(app, name)
        found = report_of(app.storage, group.name, group.members, period_of(since, until))
        return json_response(report_json(found))

    @router.get(
        "/{name}/papers",
        response_class=Response,
        responses={
            200: {"model": GroupPapersOut, "headers": paged_responses(PaperOut)[200]["headers"]},
            **_UNKNOWN,
        },
    )
    def papers(
        request: Request,
        name: GroupNamePath,
        after: AfterQuery = None,
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    ) -> Response:
        """One group, and a page of its members' papers, each once, latest change first:
        at most ``limit`` after the cursor ``after``."""
        found = find_group(app, name)
        query = PaperListQuery(group_papers(found), after=paper_cursor(after), limit=limit)
        shown, cursor = papers_page(app, query)
        link = next_link_header(request, cursor) if cursor else None
        return listed_papers(app, shown, link, group_json(found))

    return router
