"""The groups' pages: ``/groups``, ``/groups/{name}`` and a group's report (page and CSV).

A group's page lists its members (each linking to their page, marked when
their syncs fail), its papers newest change first (each once, however many
members share it; candidates stay on their author's page) and carries the
status strip of its members only: a department of hundreds would otherwise
push the page below the fold.  Its Atom feed is ``/feeds/groups/{name}.atom``.
The report counts per person what ``syncd.domain.reports`` counts, over whole
UTC days (``?since=YYYY-MM-DD&until=YYYY-MM-DD``, the last 30 days by default).
Like every page: no script, every string escaped and isolated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from syncd.domain.groups import Group
from syncd.domain.model import AuthorSyncs, LatestChange
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
from syncd.web.paging import PAGE_SIZE, AfterQuery, next_link
from syncd.web.published import listed_publications

__all__ = ["GroupHealth", "GroupLine", "group_pages_router", "health"]


@dataclass(frozen=True, slots=True)
class GroupHealth:
    """How a group's members sync: how many are well, failing, never synced yet."""

    members: int
    failing: int
    never: int
    last_synced: datetime | None

    @property
    def synced(self) -> int:
        """Members whose last cycle succeeded."""
        return self.members - self.failing - self.never


@dataclass(frozen=True, slots=True)
class GroupLine:
    """A group as ``/groups`` lists it."""

    group: Group
    papers: int
    last_change: datetime | None
    health: GroupHealth


def health(runs: Mapping[str, AuthorSyncs], members: Sequence[str]) -> GroupHealth:
    """How the syncs of ``members`` go, from their runs."""
    mine = [runs.get(name, AuthorSyncs(name, None, None, False)) for name in members]
    successes = [
        r.last_success.finished_at or r.last_success.started_at
        for r in mine
        if r.last_success is not None
    ]
    return GroupHealth(
        members=len(mine),
        failing=sum(r.failing for r in mine),
        never=sum(r.last_success is None and not r.failing for r in mine),
        last_synced=max(successes, default=None),
    )


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
            strip_of=group.members,
            **links,
        )

    @router.get("/groups/{name}")
    def group_page(request: Request, name: GroupNamePath, after: AfterQuery = None) -> Response:
        group = find_group(app, name)
        scope = group_papers(group)
        query = PaperListQuery(scope, after=paper_cursor(after), limit=PAGE_SIZE)
        shown, cursor = papers_page(app, query)
        owners = app.storage.papers.owners([p.arxiv_id for p in shown if p.arxiv_id])
        members = set(group.members)
        runs = {r.author: r for r in app.storage.runs.by_author()}
        return page(
            "group.html",
            group=group,
            papers=shown,
            next_url=next_link(request, cursor) if cursor else None,
            total=sum(app.storage.paper_lists.counts(scope).values()),
            changes=app.storage.papers.latest_changes([p.id for p in shown]),
            owners={arxiv_id: sorted(names & members) for arxiv_id, names in owners.items()},
            failing={name for name in group.members if name in runs and runs[name].failing},
            published=listed_publications(app, shown),
            strip_of=group.members,
            **links,
        )

    @router.get("/groups")
    def groups(
        request: Request,
        name: Annotated[str | None, Query(max_length=200)] = None,
        after: AfterQuery = None,
    ) -> Response:
        if name is not None:
            return group_page(
                request, name, after
            )  # a group whose name a path cannot hold (group_path)
        runs = {r.author: r for r in app.storage.runs.by_author()}
        lines = [_line(app, group, runs) for group in app.storage.groups.all()]
        return page("groups.html", groups=lines, **links)

    return router


def _line(app: App, group: Group, runs: Mapping[str, AuthorSyncs]) -> GroupLine:
    papers = app.storage.paper_sets.of_authors(group.members, SHOWN_STATUSES)
    changes: dict[int, LatestChange] = app.storage.papers.latest_changes([p.id for p in papers])
    last = max((c.at for c in changes.values()), default=None)
    return GroupLine(group, len(papers), last, health(runs, group.members))
