"""The operations endpoints: ``/metrics``, ``/healthz`` and ``/readyz``.

``/metrics`` is prometheus-client's own ASGI app.  ``/healthz`` (liveness)
only proves the process answers and touches nothing else; ``/readyz`` asks
the daemon's ``ready`` callback, whose verdict ``readiness`` computes.
Responses carry counts, states and check names only: no configuration, URLs
or secrets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from syncd import metrics

__all__ = ["Readiness", "ops_routes", "readiness"]

_log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Readiness:
    """Whether syncd should receive traffic, and the verdict of each check by name."""

    ready: bool
    checks: dict[str, str]


def readiness(
    database_ok: bool,
    last_success: datetime | None,
    started_at: datetime,
    now: datetime,
    max_age: float,
    *,
    harvest: tuple[datetime | None, float] | None = None,
    following: bool = True,
    throttling: Sequence[str] = (),
) -> Readiness:
    """Ready when the database answers and a cycle succeeded within ``max_age`` seconds.

    Before the first successful cycle the process counts as ready for
    ``max_age`` seconds after ``started_at`` (startup grace), then not.
    With ``harvest`` (its last complete harvest and the age allowed), the
    harvester is judged the same way, as ``last_harvest``.  Without an
    author to follow (``following`` false) no cycle has anything to do, and
    none is expected: a lab adds its authors at run time.  ``throttling``
    says which arXiv hosts throttle us (check ``arxiv``): news, not a verdict,
    as this process serves as well as ever; a storm long enough to matter
    makes ``last_cycle`` stale.
    """
    cycle_ok, cycle_check = _last_success_check(last_success, started_at, now, max_age, "cycle")
    if not following:
        cycle_ok, cycle_check = True, "ok: no author is followed, nothing to sync"
    checks = {
        "database": "ok" if database_ok else "unreachable",
        "last_cycle": cycle_check,
    }
    ready = database_ok and cycle_ok
    checks["arxiv"] = "; ".join(throttling) or "ok"
    if harvest is not None:
        harvest_ok, checks["last_harvest"] = _last_success_check(
            harvest[0], started_at, now, harvest[1], "harvest"
        )
        ready = ready and harvest_ok
    return Readiness(ready=ready, checks=checks)


def _last_success_check(
    last_success: datetime | None, started_at: datetime, now: datetime, max_age: float, what: str
) -> tuple[bool, str]:
    """The verdict on the last successful ``what`` and its one-line explanation."""
    if last_success is None:
        uptime = (now - started_at).total_seconds()
        if uptime <= max_age:
            return True, f"starting: no successful {what} yet, {uptime:.0f} s since start"
        return False, f"missing: no successful {what} in {uptime:.0f} s since start"
    age = (now - last_success).total_seconds()
    if age <= max_age:
        return True, f"ok: last success {age:.0f} s ago"
    return False, f"stale: last success {age:.0f} s ago, more than {max_age:g} s"


def ops_routes(ready: Callable[[], Readiness]) -> list[BaseRoute]:
    """The three routes, GET and HEAD only, outside the API's schema."""

    def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    def readyz(request: Request) -> Response:
        try:
            verdict = ready()
        except Exception as exc:
            # A failing check is a verdict, not a crash; its message may name
            # hosts or users, so it goes to the log and not into the response.
            _log.warning("readiness_check_failed", error=f"{type(exc).__name__}: {exc}")
            verdict = Readiness(ready=False, checks={"readiness": f"error: {type(exc).__name__}"})
        label = "ready" if verdict.ready else "unready"
        return JSONResponse(
            {"status": label, "checks": dict(verdict.checks)},
            status_code=200 if verdict.ready else 503,
        )

    return [
        Route("/metrics", _Metrics(metrics.asgi_app()), methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
    ]


class _Metrics:
    """prometheus-client's ASGI app as a route endpoint (an instance: Starlette calls it raw).

    It is asked without the client's ``Accept`` header, so it answers the
    classic text format whatever the scraper prefers, as syncd always has:
    under OpenMetrics, which Prometheus asks for first, a counter's family
    loses its ``_total`` and dashboards and alerts written against the
    metadata would no longer match.
    """

    def __init__(self, app: Callable[..., Any]) -> None:
        self._app: ASGIApp = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"accept"]
        await self._app({**scope, "headers": headers}, receive, send)
