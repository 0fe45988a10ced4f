"""``syncd run``: scheduled cycles, the outbox worker and the HTTP surface in one process.

Shutdown (SIGTERM, SIGINT) is ordered: stop scheduling, let the cycle in
flight stop at its next wait (it then stores nothing), let deliveries in
flight finish, give back unfinished leases, stop HTTP, close the database;
all within ``delivery.shutdown_grace`` seconds, then exit 0.
"""

from __future__ import annotations

import fcntl
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType

import sqlalchemy as sa
import structlog
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from syncd import metrics
from syncd.arxiv import ArxivClient
from syncd.config import ScheduleSettings, Settings
from syncd.dispatch import Dispatcher
from syncd.errors import ConfigError, Interrupted, StoreError, SyncdError
from syncd.http import HttpServer, Readiness, readiness
from syncd.store import Store
from syncd.sync import sync_all

__all__ = ["run_daemon", "schedule_period", "trigger_for"]

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


def schedule_period(schedule: ScheduleSettings, now: datetime) -> float:
    """Seconds between two scheduled cycles (for cron, the next two fire times)."""
    if schedule.cron is None:
        return schedule.interval
    trigger = trigger_for(schedule.model_copy(update={"jitter": 0.0}))
    first = trigger.get_next_fire_time(None, now)
    second = trigger.get_next_fire_time(first, first + timedelta(seconds=1))
    return float((second - first).total_seconds())


@contextmanager
def _only_replica(database_url: str) -> Iterator[None]:
    """Refuse a second daemon on one SQLite file: SQLite has no cross-process claims."""
    url = sa.engine.make_url(database_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        yield
        return
    path = Path(f"{url.database}.run.lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                f"another `syncd run` already uses {url.database}: SQLite supports one "
                "replica; use PostgreSQL to run several"
            ) from None
        yield


def _interruptible_sleep(stop: threading.Event) -> Callable[[float], None]:
    def sleep(seconds: float) -> None:
        if stop.wait(seconds):
            raise Interrupted("shutting down")

    return sleep


def run_daemon(settings: Settings, store: Store) -> int:
    """Serve until SIGTERM or SIGINT; return the exit code."""
    with _only_replica(settings.database.url):
        return _serve(settings, store)


def _serve(settings: Settings, store: Store) -> int:
    stop, wake = threading.Event(), threading.Event()
    started_at = datetime.now(UTC)
    cycle_lock = threading.Lock()

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

    # Bound first: a port in use stops syncd before there is anything to undo.
    server = HttpServer(settings.http.host, settings.http.port, ready=ready)
    _listen(server, settings.http.host, settings.http.port)
    # Replicas share the schedule: the first to fire in a half period runs it.
    claim_window = schedule_period(settings.schedule, started_at) / 2
    client = ArxivClient(settings.arxiv, sleep=_interruptible_sleep(stop))
    hooks = {h.display_name: h for h in settings.webhooks}
    dispatcher = Dispatcher(store, hooks, settings.delivery)

    def cycle() -> None:
        # max_instances=1 already forbids overlap; the lock also covers shutdown.
        with cycle_lock:
            if stop.is_set():
                return
            results = sync_all(
                store, client, settings.authors, settings.sync, claim_window=claim_window
            )
            if any(r.events for r in results):
                wake.set()

    collector = metrics.register_store_collector(
        lambda: metrics.StoreSnapshot(store.paper_counts(), *store.outbox_counts())
    )
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
        clean = _shutdown(
            settings.delivery.shutdown_grace, scheduler, cycle_lock, worker, dispatcher
        )
        server.stop()
        client.close()
        metrics.unregister_store_collector(collector)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if not clean:
        # A request stuck in a read cannot be interrupted; its cycle stores
        # nothing and its deliveries were released, so leave without it.
        _log.warning("daemon_stopped", forced=True)
        store.close()
        os._exit(0)
    _log.info("daemon_stopped")
    return 0


def _listen(server: HttpServer, host: str, port: int) -> None:
    """Start serving HTTP; an address in use or not ours is a one-line error (exit 1)."""
    try:
        server.start()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise SyncdError(f"cannot serve HTTP on {host}:{port}: {reason} (see [http])") from None


def _shutdown(
    grace: float,
    scheduler: BackgroundScheduler,
    cycle_lock: threading.Lock,
    worker: threading.Thread,
    dispatcher: Dispatcher,
) -> bool:
    """Stop everything within ``grace`` seconds; return whether every thread finished."""
    deadline = time.monotonic() + grace
    scheduler.shutdown(wait=False)
    cycle_done = cycle_lock.acquire(timeout=max(0.0, deadline - time.monotonic()))
    if cycle_done:
        cycle_lock.release()
    else:
        _log.warning("cycle_still_running_at_shutdown")
    worker.join(max(0.0, deadline - time.monotonic()))
    clean = cycle_done and not worker.is_alive()
    dispatcher.close(wait=clean)
    return clean
