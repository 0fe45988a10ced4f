"""``syncd run``: scheduled cycles, the outbox worker and the HTTP surface in one process.

Shutdown (SIGTERM, SIGINT) is ordered: stop scheduling, let the cycle in
flight stop at its next wait (it then stores nothing), let deliveries in
flight finish, give back unfinished leases, stop HTTP, close the database;
all within ``delivery.shutdown_grace`` seconds, then exit 0.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from types import FrameType

import structlog
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from syncd import metrics
from syncd.arxiv import ArxivClient
from syncd.config import ScheduleSettings, Settings
from syncd.dispatch import Dispatcher
from syncd.errors import Interrupted, StoreError
from syncd.http import HttpServer, Readiness, readiness
from syncd.store import Store
from syncd.sync import sync_all

__all__ = ["run_daemon", "trigger_for"]

_log = structlog.get_logger(__name__)


def trigger_for(schedule: ScheduleSettings) -> BaseTrigger:
    """The APScheduler trigger for the configured interval or cron line, with jitter."""
    jitter = int(schedule.jitter) or None
    if schedule.cron is None:
        return IntervalTrigger(seconds=schedule.interval, jitter=jitter, timezone=UTC)
    minute, hour, day, month, day_of_week = schedule.cron.split()
    return CronTrigger(
        minute=minute,
        hour=hour,
        day=day,
        month=month,
        day_of_week=day_of_week,
        jitter=jitter,
        timezone=UTC,
    )


def _interruptible_sleep(stop: threading.Event) -> Callable[[float], None]:
    def sleep(seconds: float) -> None:
        if stop.wait(seconds):
            raise Interrupted("shutting down")

    return sleep


def run_daemon(settings: Settings, store: Store) -> int:
    """Serve until SIGTERM or SIGINT; return the exit code."""
    stop, wake = threading.Event(), threading.Event()
    started_at = datetime.now(UTC)
    cycle_lock = threading.Lock()
    client = ArxivClient(settings.arxiv, sleep=_interruptible_sleep(stop))
    hooks = {h.display_name: h for h in settings.webhooks}
    dispatcher = Dispatcher(store, hooks, settings.delivery)

    def cycle() -> None:
        # max_instances=1 already forbids overlap; the lock also covers shutdown.
        with cycle_lock:
            if stop.is_set():
                return
            results = sync_all(store, client, settings.authors, settings.sync)
            if any(r.events for r in results):
                wake.set()

    def ready() -> Readiness:
        try:
            last_success, database_ok = store.last_successful_sync(), True
        except StoreError:
            last_success, database_ok = None, False
        return readiness(
            database_ok=database_ok,
            last_success=last_success,
            started_at=started_at,
            now=datetime.now(UTC),
            max_age=settings.ready_max_age,
        )

    collector = metrics.register_store_collector(
        lambda: metrics.StoreSnapshot(store.paper_counts(), *store.outbox_counts())
    )
    server = HttpServer(settings.http.host, settings.http.port, ready=ready)
    scheduler = BackgroundScheduler(timezone=UTC)
    scheduler.add_job(
        cycle,
        trigger_for(settings.schedule),
        id="sync",
        max_instances=1,
        coalesce=True,
        misfire_grace_time=None,
        next_run_time=datetime.now(UTC),
    )
    worker = threading.Thread(
        target=dispatcher.run, args=(stop, wake), name="syncd-dispatch", daemon=True
    )

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        _log.info("shutdown_requested", signal=signal.Signals(signum).name)
        stop.set()
        wake.set()

    previous = {s: signal.signal(s, request_stop) for s in (signal.SIGTERM, signal.SIGINT)}
    server.start()
    _log.info(
        "daemon_started",
        http=f"{settings.http.host}:{server.port}",
        authors=len(settings.authors),
        endpoints=len(hooks),
        worker=dispatcher.owner,
    )
    scheduler.start()
    worker.start()
    try:
        stop.wait()
    finally:
        _shutdown(settings.delivery.shutdown_grace, scheduler, cycle_lock, worker, dispatcher)
        server.stop()
        client.close()
        metrics.unregister_store_collector(collector)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    _log.info("daemon_stopped")
    return 0


def _shutdown(
    grace: float,
    scheduler: BackgroundScheduler,
    cycle_lock: threading.Lock,
    worker: threading.Thread,
    dispatcher: Dispatcher,
) -> None:
    deadline = time.monotonic() + grace
    scheduler.shutdown(wait=False)
    if cycle_lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
        cycle_lock.release()
    else:
        _log.warning("cycle_still_running_at_shutdown")
    worker.join(max(0.0, deadline - time.monotonic()))
    dispatcher.close()
