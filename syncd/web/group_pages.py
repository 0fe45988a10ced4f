"""The groups' pages: ``/groups``, ``/groups/{name}`` and a group's report (page and CSV).

``/groups`` lists the groups by name, ``PAGE_SIZE`` a page, each with its
papers and its members' cycles counted.  A group's page lists its members
(``PAGE_SIZE`` a page, each linking to their page, marked when their syncs
fail), its papers newest change first (each once, however many
members share it; candidates stay on their author's page) and carries the
status strip of its members only.  Its Atom feed is ``/feeds/groups/{name}.atom``.
The report counts per person what ``syncd.domain.reports`` counts, over whole
UTC days (``?since=YYYY-MM-DD&until=YYYY-MM-DD``, the last 30 days by default).
Like every page: no script, every string escaped and isolated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from syncd.domain.groups import GroupListing
from syncd.domain.model import SyncStanding, SyncTally
from syncd.domain.reports import report_csv
from syncd.service.app import App
from syncd.service.reports import report_of
from syncd.storage import PaperListQuery
from syncd.web.groups_read_api import (
    SHOWN_STATUSES,
    DayQuery,
    GroupNamePath,
    find_group,
    group_feed_path,
    group_papers,
    group_path,
    period_of,
)
from syncd.web.index import NextSync, paper_cursor, papers_page
from syncd.web.pages import page_renderer
from syncd.web.paging import PAGE_SIZE, AfterName, AfterQuery, next_link
from syncd.web.published import listed_publications

__all__ = ["GroupLine", "group_lines", "group_pages_router"]


@dataclass(frozen=True, slots=True)
class GroupLine:
    """A group as ``/groups`` lists it: its papers counted, when the latest changed, and
    how its members' cycles go."""

    group: GroupListing
    papers: int
    last_change: datetime | None
    health: SyncTally


def group_pages_router(app: App, next_sync: NextSync | None = None) -> APIRouter:
    """``/groups``, a group's page and its report, with the status strip."""
    router = APIRouter(include_in_schema=False)
    page = page_renderer(app, next_sync)
    links = {"group_path": group_path, "group_feed_path": group_feed_path}

    @router.get("/groups/{name}/report.csv")
    def report_file(
        name: GroupNamePath, since: DayQuery = None, until: DayQuery = None
    ) -> Response:
        group = find_group(app, name)
        report = report_of(app.storage, group.name, group.members, period_of(since, until))
        period = report.period
        filename = f"report-{period.since.isoformat()}-{period.until.isoformat()}.csv"
        return Response(
            report_csv(report).encode(),
            media_type="text/csv; charset=utf-8; header=present",
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
        )

    @router.get("/groups/{name}/report")
    def report(name: GroupNamePath, since: DayQuery = None, until: DayQuery = None) -> Response:
        group = find_group(app, name)
        found = report_of(app.storage, group.name, group.members, period_of(since, until))
        period = {"since": found.period.since.isoformat(), "until": found.period.until.isoformat()}
        return page(
            "group_report.html",
            group=group,
            report=found,
            csv_path=f"{group_path(group.name)}/report.csv?{urlencode(period)}",
            strip_group=group.name,
            **links,
        )

    @router.get("/groups/{name}")
    def group_page(
        request: Request,
        name: GroupNamePath,
        after: AfterQuery = None,
        members_after: AfterName = None,
    ) -> Response:
        group = find_group(app, name)
        scope = group_papers(group)
        query = PaperListQuery(scope, after=paper_cursor(after), limit=PAGE_SIZE)
        shown, cursor = papers_page(app, query)
        owners = app.storage.papers.owners([p.arxiv_id for p in shown if p.arxiv_id])
        return page(
            "group.html",
            group=group,
            **_members(app, request, group.name, members_after),
            papers=shown,
            next_url=next_link(request, cursor) if cursor else None,
            total=sum(app.storage.paper_lists.counts(scope).values()),
            changes=app.storage.papers.latest_changes([p.id for p in shown]),
            owners={
                arxiv_id: sorted(names & set(group.members)) for arxiv_id, names in owners.items()
            },
            published=listed_publications(app, shown),
            strip_group=group.name,
            **links,
        )

    router.add_api_route("/groups", _lister(app, page, group_page, links), methods=["GET"])
    return router


def _members(app: App, request: Request, group: str, after: str | None) -> dict[str, Any]:
    """A page of a group's members after ``after``, the failing among them, the next page's link."""
    members = app.storage.groups.members_page(group, after, PAGE_SIZE + 1)
    listed = members[:PAGE_SIZE]
    more = len(members) > PAGE_SIZE
    # The first failing members from the page's first on hold every failing one it lists.
    failing = app.storage.authors.page(after, PAGE_SIZE, SyncStanding.FAILING, group)
    return {
        "members": listed,
        "more_members": next_link(request, listed[-1], "members_after") if more else None,
        "failing": {a.name for a in failing},
    }


def _lister(
    app: App,
    page: Callable[..., Response],
    group_page: Callable[..., Response],
    links: Mapping[str, Callable[[str], str]],
) -> Any:
    """``/groups``: a page of groups, or the page of one whose name a path cannot hold."""

    def groups(
        request: Request,
        name: Annotated[str | None, Query(max_length=200)] = None,
        after: AfterName = None,
    ) -> Response:
        if name is not None:
            # A name a path cannot hold (group_path); ``after`` is then its papers' cursor.
            return group_page(request, name, after)
        found = app.storage.groups.page(after, PAGE_SIZE + 1)
        listed = found[:PAGE_SIZE]
        more = len(found) > PAGE_SIZE
        return page(
            "groups.html",
            groups=group_lines(app, listed),
            first_page=after is None,
            next_page=next_link(request, listed[-1].name) if more else None,
            **links,
        )

    return groups


def group_lines(app: App, groups: Sequence[GroupListing]) -> list[GroupLine]:
    """How ``/groups`` lists ``groups``: their papers and members' cycles, counted for the
    page's groups at once."""
    names = [g.name for g in groups]
    papers = app.storage.groups.paper_counts(names, SHOWN_STATUSES)
    tallies = app.storage.runs.tallies(names)
    return [
        GroupLine(
            group,
            *papers.get(group.name, (0, None)),
            tallies.get(group.name, SyncTally(0, 0, 0, 0, 0, None)),
        )
        for group in groups
    ]
