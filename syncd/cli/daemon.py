"""``syncd run``: scheduled cycles, the outbox worker and the HTTP surface in one process.

Each cycle syncs the authors the database follows at that moment, so authors
added or removed at run time (``syncd authors``, the API) are picked up at the
next cycle by every replica; ``[[authors]]`` tables are reconciled at start.

A harvest (``[harvest] enabled``) runs beside the cycles, on its own thread
and arXiv connection (the politeness budget is shared): a long harvest never
holds back a cycle, and a cycle and a harvest page that write one author's
papers take turns by the author's write sequence (``syncd.service.harvest``).

Publication lookups (``[publications] enabled``) run on a thread of their own
too, every minute, on the papers due then (``syncd.service.publications``):
they ask Crossref and OpenAlex, never arXiv, and never hold back a cycle.

When arXiv throttles us past what a request waits, the cycle or harvest it
stopped runs again once the cooldown ends (a one-off job), not only at its
next scheduled time: a daily harvest would otherwise resume a day later.

Shutdown (SIGTERM, SIGINT) is ordered: stop scheduling, let the cycle and the
harvest in flight stop at their next wait (a cycle then stores nothing, a
harvest keeps its pages applied), let deliveries in flight finish, give back
unfinished leases, stop HTTP, close the database; all within
``delivery.shutdown_grace`` seconds, then exit 0.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from types import FrameType

import structlog
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from syncd import metrics
from syncd.config import ScheduleSettings
from syncd.domain.authors import Author
from syncd.domain.cadence import claim_window, next_cycle, schedule_period
from syncd.domain.throttle import describe
from syncd.errors import Interrupted, StoreError, SyncdError, Throttled
from syncd.logs import route_library_logs
from syncd.service.app import App
from syncd.service.authors import followed_authors, reconcile_config
from syncd.service.harvest import harvest
from syncd.service.publications import check_publications, publication_sources
from syncd.service.sync import CycleResult, sweep_all, sync_all
from syncd.web.ops import Readiness, readiness
from syncd.web.server import HttpServer

__all__ = ["PUBLICATIONS_PERIOD", "run_daemon", "trigger_for"]

_log = structlog.get_logger(__name__)

# Seconds between two reads of the papers whose publication lookup is due.
PUBLICATIONS_PERIOD = 60.0


class _TimetableTrigger(BaseTrigger):  # type: ignore[misc]  # APScheduler 3 has no types
    """APScheduler's side of ``next_cycle``: the scheduler starts cycles when it says."""

    __slots__ = ("_phase", "_timetable")

    def __init__(self, timetable: ScheduleSettings, phase: float) -> None:
        self._timetable = timetable
        self._phase = phase

    def get_next_fire_time(
        self, previous_fire_time: datetime | None, now: datetime
    ) -> datetime | None:
        return next_cycle(self._timetable, previous_fire_time or now, phase=self._phase)


def trigger_for(schedule: ScheduleSettings, phase: float = 0.0) -> BaseTrigger:
    """The APScheduler trigger for the configured interval or cron line, with jitter, for
    an installation of ``phase`` (``syncd.domain.cadence.next_cycle``)."""
    return _TimetableTrigger(schedule, phase)


def _interruptible_sleep(stop: threading.Event) -> Callable[[float], None]:
    def sleep(seconds: float) -> None:
        if stop.wait(seconds):
            raise Interrupted("shutting down")

    return sleep


def run_daemon(app: App) -> int:
    """Serve until SIGTERM or SIGINT; return the exit code."""
    with app.storage.db.only_replica():
        return _Daemon(app).serve()


def _listen(server: HttpServer, host: str, port: int) -> None:
    """Start serving HTTP; an address in use or not ours is a one-line error (exit 1)."""
    try:
        server.start()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise SyncdError(f"cannot serve HTTP on {host}:{port}: {reason} (see [http])") from None


class _PublicationLookups:
    """The daemon's publication lookups (``[publications] enabled``): the papers due, read
    every ``PUBLICATIONS_PERIOD`` seconds; they wake the worker when they announce."""

    def __init__(self, app: App, stop: threading.Event, wake: threading.Event) -> None:
        self._app, self._stop, self._wake = app, stop, wake
        # Not the cycles' lock: lookups ask Crossref and OpenAlex, never arXiv.
        self.lock = threading.Lock()

    def run(self) -> None:
        """Look up the papers due now; a failure is logged, and tried again next time."""
        with self.lock:
            if self._stop.is_set():
                return
            app = self._app
            try:
                sleep = _interruptible_sleep(self._stop)
                with publication_sources(app.settings, app.storage, sleep) as sources:
                    run = check_publications(app.storage, sources, app.settings, stop=self._stop)
            except SyncdError as exc:
                _log.error("publications_failed", error=str(exc), error_type=type(exc).__name__)
                return
            except Exception:
                _log.exception("publications_failed", error_type="unexpected")
                return
            if run.events:
                self._wake.set()


class _Daemon:
    """The scheduler, the outbox worker and the HTTP server of one ``syncd run``."""

    def __init__(self, app: App) -> None:
        self._app = app
        self._settings = app.settings
        self._stop, self._wake = threading.Event(), threading.Event()
        self._started_at = datetime.now(UTC)
        self._cycle_lock = threading.Lock()
        # Not the cycles' lock: cycles go on while a harvest runs.
        self._harvest_lock = threading.Lock()
        self._publications = _PublicationLookups(app, self._stop, self._wake)
        # Replicas share the schedule: the first to fire in a half period runs it.
        self._claim_window = claim_window(self._settings.schedule, self._started_at)
        harvesting = self._settings.harvest
        # The harvest follows the changes; each author's API cycle is then the
        # periodic full sweep (absences, names written differently), spread
        # over sweep_interval by the author's name.
        self._sweep_interval = harvesting.sweeps
        # A harvest is late after two of its periods without one complete.
        self._harvest_max_age = 2 * schedule_period(
            ScheduleSettings(cron=harvesting.cron, jitter=0), self._started_at
        )
        self._client = app.arxiv_client(sleep=_interruptible_sleep(self._stop))
        self._harvest_client = app.arxiv_client(sleep=_interruptible_sleep(self._stop))
        self._dispatcher = app.dispatcher()
        # What /readyz reports while the database, which knows better, does not answer.
        self._last_success: datetime | None = None
        # Whether the last cycle had an author to sync (until the first, assume so).
        self._following = True
        self._scheduler: BackgroundScheduler | None = None
        self._last_harvest: datetime | None = None

    def cycle(self) -> None:
        """One scheduled cycle of every author; wakes the worker when it published events."""
        # max_instances=1 already forbids overlap; the lock also covers shutdown.
        with self._cycle_lock:
            if self._stop.is_set():
                return
            try:
                # Read at every cycle: authors added or removed since, by any replica.
                authors = followed_authors(self._app.storage, self._settings)
                self._following = bool(authors)
                results = self._sync(authors)
            except StoreError as exc:
                _log.error("cycle_failed", error=str(exc), error_type=type(exc).__name__)
                metrics.observe_cycle(False, 0.0, time.time())
                return
            except Exception:
                # A bug, not a cycle failure sync_all knows: still one line and the
                # failed counter, never a bare traceback from the scheduler thread.
                _log.exception("cycle_failed", error_type="unexpected")
                metrics.observe_cycle(False, 0.0, time.time())
                return
            if any(r.ok for r in results):
                self._last_success = datetime.now(UTC)
            if any(r.events for r in results):
                self._wake.set()
            throttled = [r.next_try_at for r in results if r.next_try_at is not None]
            if throttled:
                self._resume_after_throttle("sync", self.cycle, max(throttled))

    def _sync(self, authors: list[Author]) -> list[CycleResult]:
        """The authors' cycles: all of them, or while harvesting those whose sweep is due."""
        storage, client, sync = self._app.storage, self._client, self._settings.sync
        if self._sweep_interval is None:
            return sync_all(storage, client, authors, sync, claim_window=self._claim_window)
        return sweep_all(
            storage,
            client,
            authors,
            sync,
            sweep_interval=self._sweep_interval,
            claim_window=self._claim_window,
        )

    def harvest(self) -> None:
        """One scheduled harvest (when ``[harvest] enabled``); wakes the worker on events."""
        with self._harvest_lock:
            if self._stop.is_set():
                return
            try:
                # Not even claimed while arXiv cools down: nothing to record as failed.
                self._harvest_client.check_throttle(self._settings.harvest.url)
                result = harvest(self._app.storage, self._harvest_client, self._settings)
            except Throttled as exc:
                # The pages applied stay applied; the harvest resumes from its token.
                _log.warning("harvest_throttled", error=str(exc))
                self._resume_after_throttle("harvest", self.harvest, exc.next_try_at)
                return
            except SyncdError as exc:
                # The pages applied stay applied; the next harvest resumes.
                _log.error("harvest_failed", error=str(exc), error_type=type(exc).__name__)
                return
            except Exception:
                _log.exception("harvest_failed", error_type="unexpected")
                return
            if result.complete:
                self._last_harvest = datetime.now(UTC)
            if result.events:
                self._wake.set()

    def _resume_after_throttle(
        self, job: str, run: Callable[[], None], when: datetime | None
    ) -> None:
        """Run ``run`` once more when arXiv's cooldown ends (``when``), before its schedule."""
        scheduler = self._scheduler
        if when is None or scheduler is None or not scheduler.running:
            return
        scheduler.add_job(
            run,
            DateTrigger(run_date=when, timezone=UTC),
            id=f"{job}_resume",
            replace_existing=True,
            misfire_grace_time=None,
        )
        _log.info("resume_scheduled", job=job, at=when.isoformat())

    def ready(self) -> Readiness:
        """The verdict ``/readyz`` gives."""
        harvest_done = self._last_harvest
        throttling: list[str] = []
        try:
            last_success, database_ok = self._app.storage.runs.last_success(), True
            if self._settings.harvest.enabled:
                harvest_done = self._app.storage.harvests.state().last_success_at
            cooldowns = self._app.storage.cooldowns.all().items()
            throttling = [said for host, state in cooldowns if (said := describe(host, state))]
        except StoreError:
            last_success, database_ok = self._last_success, False
        return readiness(
            database_ok=database_ok,
            last_success=last_success,
            started_at=self._started_at,
            now=datetime.now(UTC),
            max_age=self._settings.ready_max_age,
            harvest=(harvest_done, self._harvest_max_age)
            if self._settings.harvest.enabled
            else None,
            following=self._following,
            throttling=throttling,
        )

    def next_sync(self) -> datetime | None:
        """When the scheduler runs the next cycle (jitter included); None when it runs none."""
        scheduler = self._scheduler
        job = scheduler.get_job("sync") if scheduler is not None and scheduler.running else None
        return job.next_run_time if job is not None else None

    def request_stop(self, signum: int, _frame: FrameType | None) -> None:
        """The SIGTERM and SIGINT handler: stop scheduling and wake everything that waits."""
        _log.info("shutdown_requested", signal=signal.Signals(signum).name)
        self._stop.set()
        self._wake.set()

    def serve(self) -> int:
        """Start everything, wait for a signal, stop everything; return the exit code."""
        settings = self._settings
        reconcile_config(self._app.storage, settings)
        # Bound first: a port in use stops syncd before there is anything to undo.
        server = HttpServer(
            settings.http.host,
            settings.http.port,
            ready=self.ready,
            app=self._app,
            next_sync=self.next_sync,
        )
        _listen(server, settings.http.host, settings.http.port)
        collector = metrics.register_store_collector(self._app.store_snapshot)
        scheduler = self._scheduler = self._new_scheduler()
        worker = threading.Thread(
            target=self._dispatcher.run,
            args=(self._stop, self._wake),
            name="syncd-dispatch",
            daemon=True,
        )
        previous = {s: signal.signal(s, self.request_stop) for s in (signal.SIGTERM, signal.SIGINT)}
        _log.info(
            "daemon_started",
            http=f"{settings.http.host}:{server.port}",
            authors=len(settings.configured_authors),
            endpoints=len(self._app.endpoints),
            worker=self._dispatcher.owner,
        )
        scheduler.start()
        worker.start()
        try:
            self._stop.wait()
        finally:
            clean = self._shutdown(scheduler, worker)
            server.stop()
            self._client.close()
            self._harvest_client.close()
            metrics.unregister_store_collector(collector)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if not clean:
            # A request stuck in a read cannot be interrupted; its cycle stores
            # nothing and its deliveries were released, so leave without it.
            _log.warning("daemon_stopped", forced=True)
            self._app.close()
            os._exit(0)
        _log.info("daemon_stopped")
        return 0

    def _new_scheduler(self) -> BackgroundScheduler:
        # Its warnings are routine: a cycle still running when the next one is due
        # (the first tick after the cycle run at start may come seconds later) is skipped.
        route_library_logs("apscheduler")
        scheduler = BackgroundScheduler(timezone=UTC)
        scheduler.add_job(
            self.cycle,
            trigger_for(self._settings.schedule, self._app.storage.installation.phase()),
            id="sync",
            max_instances=1,
            coalesce=True,
            misfire_grace_time=None,
            next_run_time=datetime.now(UTC),
        )
        if self._settings.harvest.enabled:
            cron = ScheduleSettings(cron=self._settings.harvest.cron, jitter=0)
            scheduler.add_job(
                self.harvest,
                trigger_for(cron),
                id="harvest",
                max_instances=1,
                coalesce=True,
                misfire_grace_time=None,
            )
        if self._settings.publications.enabled:
            # Due papers are read each minute: new ones are looked up within one,
            # the others when their turn in the interval comes (service.publications).
            scheduler.add_job(
                self._publications.run,
                IntervalTrigger(seconds=PUBLICATIONS_PERIOD, timezone=UTC),
                id="publications",
                max_instances=1,
                coalesce=True,
                misfire_grace_time=None,
                next_run_time=datetime.now(UTC),
            )
        return scheduler

    def _shutdown(self, scheduler: BackgroundScheduler, worker: threading.Thread) -> bool:
        """Stop everything within the grace period; return whether every thread finished."""
        deadline = time.monotonic() + self._settings.delivery.shutdown_grace
        scheduler.shutdown(wait=False)
        finished = True
        for lock, unfinished in (
            (self._cycle_lock, "cycle_still_running_at_shutdown"),
            (self._harvest_lock, "harvest_still_running_at_shutdown"),
            (self._publications.lock, "publications_still_running_at_shutdown"),
        ):
            if lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
                lock.release()
            else:
                finished = False
                _log.warning(unfinished)
        worker.join(max(0.0, deadline - time.monotonic()))
        clean = finished and not worker.is_alive()
        self._dispatcher.close(wait=clean)
        return clean
