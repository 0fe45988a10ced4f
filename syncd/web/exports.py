"""Exports by URL: ``/papers.bib``, ``.json`` and ``.ris`` for everyone's papers, and the same
under ``/authors/{name}/`` for one author's and ``/groups/{name}/`` for a group's members'.

Each is read from the record when asked (never cached: ``no-store``), in the
format's media type and as a download.  Query parameters narrow it as
``syncd export``'s flags do: ``since`` and ``until`` (days, of the first
version), ``status`` (repeatable; tracked alone by default) and ``published``
(``true``: with a DOI or journal reference; ``false``: without).  A bad value
is a 400 that names the parameter.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Path, Query
from starlette.responses import Response

from syncd.domain.citations import ExportFilter, ExportFormat
from syncd.domain.vocabulary import PaperStatus
from syncd.render.exports import export
from syncd.service.app import App
from syncd.web.api import followed_author
from syncd.web.authors_api import NamePath
from syncd.web.groups_read_api import find_group

__all__ = ["exports_router"]

Day = Annotated[date | None, Query(description="a day, YYYY-MM-DD, of the first version")]
Statuses = Annotated[list[PaperStatus] | None, Query(description="tracked by default")]
Published = Annotated[bool | None, Query(description="with a DOI or journal reference, or not")]
GroupPath = Annotated[str, Path(max_length=100, pattern=r"^[^\x00-\x1f\x7f/]*$")]


def _export_filter(
    since: date | None, until: date | None, status: list[PaperStatus] | None, published: bool | None
) -> ExportFilter:
    """The filter the query parameters ask for; a 400 when no paper could pass it."""
    wanted = ExportFilter.asked(status, since, until, published)
    problem = wanted.problem()
    if problem is not None:
        raise HTTPException(400, problem)
    return wanted


def _download(body: str, form: ExportFormat, name: str | None) -> Response:
    """``body`` as a file to save: ``papers.bib``, or the author's or group's name in UTF-8
    (RFC 6266)."""
    filename = f"papers.{form.extension}"
    disposition = f'attachment; filename="{filename}"'
    if name is not None:
        disposition += f"; filename*=UTF-8''{quote(f'{name}.{form.extension}', safe='')}"
    return Response(
        body.encode(),
        media_type=f"{form.media_type}; charset=utf-8",
        headers={"Content-Disposition": disposition},
    )


def exports_router(app: App) -> APIRouter:
    """The export routes over ``app``'s storage (before ``/authors/{name}``, which would
    take an author's)."""
    router = APIRouter(include_in_schema=False)

    def answer(
        form: ExportFormat, wanted: ExportFilter, scope: tuple[str, list[str]] | None
    ) -> Response:
        """The export of ``scope``'s authors (its name and theirs), or everyone's."""
        name, authors = scope if scope is not None else (None, None)
        body = export(app.storage.paper_sets.for_export(authors, wanted), form)
        return _download(body, form, name)

    def add_routes(form: ExportFormat) -> None:
        @router.get(f"/papers.{form.extension}")
        def everyone(
            since: Day = None,
            until: Day = None,
            status: Statuses = None,
            published: Published = None,
        ) -> Response:
            return answer(form, _export_filter(since, until, status, published), None)

        @router.get(f"/authors/{{name:path}}/papers.{form.extension}")
        def author(
            name: NamePath,
            since: Day = None,
            until: Day = None,
            status: Statuses = None,
            published: Published = None,
        ) -> Response:
            wanted = _export_filter(since, until, status, published)
            name = followed_author(app, name)
            return answer(form, wanted, (name, [name]))

        @router.get(f"/groups/{{name}}/papers.{form.extension}")
        def group(
            name: GroupPath,
            since: Day = None,
            until: Day = None,
            status: Statuses = None,
            published: Published = None,
        ) -> Response:
            wanted = _export_filter(since, until, status, published)
            found = find_group(app, name)
            return answer(form, wanted, (found.name, list(found.members)))

    for form in ExportFormat:
        add_routes(form)
    return router
