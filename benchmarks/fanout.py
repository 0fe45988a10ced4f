"""Row "Webhook fan-out": events delivered to a loopback receiver.

The events are real: one endpoint is configured, then a sync of N new papers
publishes N ``paper.added`` events with their delivery rows (the outbox).
syncd's side is ``Dispatcher.drain`` with ``[delivery] workers = 4`` (the
default): claim, sign, POST, record, until nothing is due.  The baseline posts
the same N bodies (``syncd.delivery.payload.event_body``, unsigned) with a bare
``httpx.Client`` from a ``ThreadPoolExecutor`` of the same 4 workers.  Both
post to the same receiver (``benchmarks.servers hooks``: answers 204 at once,
in its own process).  Between repetitions every delivery is set pending again
(straight in the table, untimed).

With a ``budget`` the drain is cut after that many seconds (``drain(budget)``)
and the throughput is what it delivered in that time: at 10,000 queued events
a full drain takes far longer than a benchmark run can wait (see the report).

CPU per delivery: ``time.process_time()`` of this process (every thread) over
each side, per delivery or post; the receiver and the database server are
other processes.  On a loaded machine it moves far less than the wall time:
the side that does less per post is preempted less, so the throughput ratio
under load reads close to the ratio of the CPU figures.

Latency "commit to 2xx" per delivery: ``deliveries.delivered_at`` (written
right after the 2xx) minus the moment the deliveries became due, which is the
commit of the cycle for the first drain and the commit of the reset for the
others.  For the first drain also ``delivered_at - events.created_at``, which
is what ``syncd_webhook_delivery_latency_seconds`` observes (``created_at`` is
stamped inside the cycle's transaction, before its commit).
"""

from __future__ import annotations

import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import httpx
import sqlalchemy as sa

from benchmarks.common import Paired, Server, alternate, fresh_heap, percentile, settle
from benchmarks.cycles import Pages, sync_once

SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"  # any base64 will do
WORKERS = 4
TARGET = 0.7  # issue 24: throughput against bare httpx, both databases


def _hook_settings(url: str) -> Any:
    from syncd.config import DeliverySettings  # noqa: PLC0415
    from syncd.domain.routing import Endpoint, EndpointSpec  # noqa: PLC0415

    hook = Endpoint(EndpointSpec("bench", f"{url}/hook", "-"), (SECRET,), timeout=15.0)
    return hook, DeliverySettings(workers=WORKERS)


def _latencies(store: Any, due: float) -> tuple[list[float], list[float]]:
    """Seconds from due and from ``created_at`` to ``delivered_at``, of delivered ones."""
    from syncd.storage.schema import deliveries_table, events_table  # noqa: PLC0415

    d, e = deliveries_table, events_table
    query = (
        sa.select(d.c.delivered_at, e.c.created_at)
        .join(e, e.c.seq == d.c.event_seq)
        .where(d.c.status == "delivered")
    )
    since_due, since_created = [], []
    with store.engine.connect() as conn:
        for delivered_at, created_at in conn.execute(query):
            delivered = _utc(delivered_at)
            since_due.append(delivered.timestamp() - due)
            since_created.append((delivered - _utc(created_at)).total_seconds())
    return since_due, since_created


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _bare_posts(posts: list[tuple[str, bytes]], cpu: list[float] | None = None) -> float:
    """The baseline: POST each (url, body) with one bare ``httpx.Client`` from ``WORKERS``
    threads; return the seconds it took (and append the process's CPU seconds to ``cpu``)."""
    fresh_heap()
    headers = {"content-type": "application/json"}
    with httpx.Client(timeout=15.0) as client, ThreadPoolExecutor(WORKERS) as pool:

        def post(item: tuple[str, bytes]) -> int:
            return client.post(item[0], content=item[1], headers=headers).status_code

        started, cpu_started = time.perf_counter(), time.process_time()
        statuses = list(pool.map(post, posts))
        elapsed = time.perf_counter() - started
        if cpu is not None:
            cpu.append(time.process_time() - cpu_started)
    if any(status != 204 for status in statuses):
        raise RuntimeError("the bare client got a non-204")
    return elapsed


def _reset(store: Any) -> float:
    """Every delivery pending and due again; return the commit's wall time."""
    from syncd.storage.schema import deliveries_table  # noqa: PLC0415

    with store.engine.begin() as conn:
        conn.execute(
            deliveries_table.update().values(
                status="pending",
                attempts=0,
                next_attempt_at=datetime.now(UTC),
                lease_owner=None,
                lease_until=None,
                last_status=None,
                last_error=None,
                delivered_at=None,
            )
        )
    return time.time()


def run(  # noqa: PLR0915 (one row: setup, both sides, summary, profile)
    store: Any,
    pages: Pages,
    events: int,
    reps: int,
    *,
    budget: float | None = None,
    profile_budget: float | None = None,
) -> dict[str, Any]:
    from syncd.delivery.payload import event_body  # noqa: PLC0415
    from syncd.delivery.worker import Dispatcher  # noqa: PLC0415

    with Server("hooks") as receiver:
        hook, delivery = _hook_settings(receiver.url)
        store.endpoints.register([hook.spec])
        dataset = pages.dataset(events, 1)
        pages.warm(dataset, events)
        sync_once(store, pages.api_url(dataset))
        settle(store)
        due = {"at": time.time()}
        pending, _ = store.outbox.counts()
        if pending != events:
            raise RuntimeError(f"{pending} deliveries pending, expected {events}")
        bodies = [event_body(event) for event in store.events.since()]
        url = hook.spec.url
        drains: list[dict[str, Any]] = []
        created_based: list[float] = []
        bare_cpu: list[float] = []

        def syncd_side(i: int) -> float:
            if i:
                due["at"] = _reset(store)
            fresh_heap()
            with Dispatcher(store.outbox, {hook.name: hook}, delivery) as dispatcher:
                started, cpu_started = time.perf_counter(), time.process_time()
                dispatcher.drain(budget if budget is not None else 3600)
                elapsed = time.perf_counter() - started
                cpu = time.process_time() - cpu_started
            left, dead = store.outbox.counts()
            delivered = events - left - dead
            if budget is None and (left or dead):
                raise RuntimeError(f"drain left {left} pending and {dead} dead")
            since_due, since_created = _latencies(store, due["at"])
            complete = delivered == events
            drains.append(
                {
                    "seconds": elapsed,
                    "delivered": delivered,
                    "rate": delivered / elapsed,
                    "cpu_us": cpu / max(delivered, 1) * 1e6,
                    "p50": percentile(since_due, 0.5) if complete else None,
                    "p99": percentile(since_due, 0.99) if complete else None,
                }
            )
            if i == 0 and complete:
                created_based.extend(since_created)
            return elapsed

        def baseline_side(_: int) -> float:
            return _bare_posts([(url, body) for body in bodies], bare_cpu)

        paired: Paired = alternate(reps, syncd_side, baseline_side)
        bare_rates = [events / t for t in paired.baseline]
        ratios = [d["rate"] / b for d, b in zip(drains, bare_rates, strict=True)]
        ratio = statistics.median(ratios)
        complete = all(d["delivered"] == events for d in drains)
        delivered = statistics.median(d["delivered"] for d in drains)
        result: dict[str, Any] = {
            "database": store.db.dialect,
            "events": events,
            "workers": WORKERS,
            "budget_seconds": budget,
            "complete": complete,
            "delivered_median": delivered,
            "syncd_seconds": [round(d["seconds"], 3) for d in drains],
            "baseline_seconds": [round(t, 3) for t in paired.baseline],
            "syncd_events_per_second": round(statistics.median(d["rate"] for d in drains), 1),
            "baseline_events_per_second": round(statistics.median(bare_rates), 1),
            "throughput_ratios": [round(r, 4) for r in ratios],
            "throughput_ratio": round(ratio, 4),
            "syncd_cpu_us_per_delivery": [round(d["cpu_us"]) for d in drains],
            "baseline_cpu_us_per_post": [round(c / events * 1e6) for c in bare_cpu],
            "target": f"throughput >= {TARGET}x bare httpx",
            "met": ratio >= TARGET,
        }
        if complete:
            result["latency_commit_to_2xx_seconds"] = {
                k: round(statistics.median(d[k] for d in drains), 3) for k in ("p50", "p99")
            }
            result["latency_created_at_to_2xx_first_drain_seconds"] = {
                "p50": round(percentile(created_based, 0.5), 3),
                "p99": round(percentile(created_based, 0.99), 3),
            }
        else:
            rate = result["syncd_events_per_second"]
            result["note"] = (
                f"drain cut after {budget:g} s with {delivered:.0f} of {events} delivered;"
                " latency percentiles need every delivery"
            )
            result["projected_full_drain_seconds_at_this_rate"] = (
                round(events / rate) if rate else None
            )
        if profile_budget is not None:
            from benchmarks.profiling import sample_threads  # noqa: PLC0415

            _reset(store)

            def drain() -> None:
                with Dispatcher(store.outbox, {hook.name: hook}, delivery) as dispatcher:
                    dispatcher.drain(profile_budget)

            result["profile"] = sample_threads(drain)
        return result


def run_slack(store: Any, pages: Pages, endpoints: int, papers: int, reps: int) -> dict[str, Any]:
    """Row "fan-out, slack": one cycle of ``papers`` new papers to ``endpoints`` Slack endpoints.

    Each endpoint is grouped by cycle (the chat default), so the cycle queues one
    digest per endpoint.  syncd's side is ``Dispatcher.drain``: claim a digest
    with its events, render the Slack message, POST it unsigned, record it, over
    one connection pool per endpoint as the daemon has.  The baseline posts the
    same rendered bodies with one bare ``httpx.Client`` from 4 threads.
    """
    from syncd.config import DeliverySettings  # noqa: PLC0415
    from syncd.delivery.messages import message_body  # noqa: PLC0415
    from syncd.delivery.worker import Dispatcher  # noqa: PLC0415
    from syncd.domain.routing import Endpoint, EndpointSpec  # noqa: PLC0415
    from syncd.domain.vocabulary import DeliveryFormat, DeliveryGroup  # noqa: PLC0415

    with Server("hooks") as receiver:
        delivery = DeliverySettings(workers=WORKERS)
        hooks = {
            f"slack-{i:04d}": Endpoint(
                EndpointSpec(
                    f"slack-{i:04d}",
                    f"{receiver.url}/services/{i:04d}",
                    "-",
                    format=DeliveryFormat.SLACK,
                    group=DeliveryGroup.CYCLE,
                ),
                (),
                timeout=15.0,
            )
            for i in range(endpoints)
        }
        store.endpoints.register([hook.spec for hook in hooks.values()])
        dataset = pages.dataset(papers, 1)
        pages.warm(dataset, papers)
        sync_once(store, pages.api_url(dataset))
        settle(store)
        pending, _ = store.outbox.counts()
        if pending != endpoints:
            raise RuntimeError(f"{pending} digests pending, expected {endpoints}")
        events = store.events.since()
        body = message_body(DeliveryFormat.SLACK, events, public_url=None)
        posts = [(hook.spec.url, body) for hook in hooks.values()]

        def syncd_side(i: int) -> float:
            if i:
                _reset(store)
            fresh_heap()
            with Dispatcher(store.outbox, hooks, delivery) as dispatcher:
                started = time.perf_counter()
                dispatcher.drain(3600)
                elapsed = time.perf_counter() - started
            left, dead = store.outbox.counts()
            if left or dead:
                raise RuntimeError(f"drain left {left} pending and {dead} dead")
            return elapsed

        def baseline_side(_: int) -> float:
            return _bare_posts(posts)

        paired: Paired = alternate(reps, syncd_side, baseline_side)
        ratios = [b / s for s, b in zip(paired.syncd, paired.baseline, strict=True)]
        ratio = statistics.median(ratios)
        return {
            "database": store.db.dialect,
            "endpoints": endpoints,
            "events_per_digest": len(events),
            "workers": WORKERS,
            "syncd_seconds": [round(t, 3) for t in paired.syncd],
            "baseline_seconds": [round(t, 3) for t in paired.baseline],
            "syncd_messages_per_second": round(endpoints / statistics.median(paired.syncd), 1),
            "baseline_messages_per_second": round(
                endpoints / statistics.median(paired.baseline), 1
            ),
            "throughput_ratios": [round(r, 4) for r in ratios],
            "throughput_ratio": round(ratio, 4),
            "target": "throughput >= 0.5x bare httpx",
            "met": ratio >= 0.5,
        }


def slack_table_rows(results: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """The rows of benchmarks.run's table: one per database."""
    return [
        (
            f"Fan-out, slack, {kind}: {r['endpoints']:,} endpoints, a digest of "
            f"{r['events_per_digest']} events each",
            f"{r['syncd_messages_per_second']:.0f} messages/s",
            f"httpx {r['baseline_messages_per_second']:.0f}/s",
            f"{r['throughput_ratio']:.3f}x throughput",
            ">= 0.5x",
            "yes" if r["met"] else "NO",
        )
        for kind, r in results.items()
    ]
