"""Upstream chaos soak: hundreds of cycles against a misbehaving fake arXiv, compared.

In-process, with one ``App`` and one ``ArxivClient`` as the daemon has.  A
seeded coin faults each request with probability ``rate`` (a fifth), taking
the next fault of a seeded list built in shuffled rounds of every kind in
``FAULTS`` (timeouts, resets, 429/500/503 with and without Retry-After,
truncated bodies, empty pages, totalResults lies, error feeds, slow drips
under and over the client's timeout, empty results, and hostile entries: a
version lower than the one stored, markup in a title or summary, a repeated
title, an id outside arXiv's scheme, a version out of range).  A lower
version is only sent once syncd holds every version the fake serves (before
that it would be news, not a lie); until then that fault waits its turn.
Every ``every`` cycles
a step of the seeded upstream script is due; it is applied once the previous
one has been seen by a cycle that succeeded with no fault at all, so two
steps never reach syncd as one (which would merge their revisions, unlike
the reference).  After the last cycle the faults stop, postponed steps are
applied with a clean cycle each, ``removal_after + 1`` clean cycles settle,
and the outbox is drained to a verifying receiver, and to two endpoints grouped
by cycle, a signed one and a Slack one, each of which must receive every
event in exactly one digest (``tests.reliability.digests``).

The reference replays the same script with the same cycles, no faults and
no pacing (its spacing is not checked, and its results do not depend on it).
Compared: events as (paper, type, kinds, record hash) multisets (zero false,
zero missed), revisions and paper states equal, every event delivered.  On
the faulty run, spacing where the pacer enforces it: every request the fake
logged took a turn of its own, and no two turns began closer than
``request_interval`` by the pacer's clock.  Sends (taken by a transport like
syncd's own) and arrivals closer than that are reported, not failed: a busy
machine delays a send after its turn, and the fake's handler thread after the
send.  A retry after a 429/503 with Retry-After is never sent sooner than it
asked (capped by ``backoff_max``): the wait lies between the two sends.
Every hostile entry sent failed its cycle, which therefore stored nothing.

Full run: ``python -m tests.reliability.soak`` (``make reliability``).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa
import structlog

from syncd.config import Settings, load_settings
from syncd.httpclient import DeadlineTransport
from syncd.logs import configure_logging
from syncd.service.app import App
from syncd.service.sync import sync_all
from syncd.sources.arxiv import ArxivClient, _pacing
from syncd.storage import Storage
from syncd.storage.migrate import upgrade
from syncd.storage.schema import paper_authors_table, papers_table
from tests import fakearxiv as fa
from tests.helpers import ROOT, WEBHOOK_SECRET
from tests.integration.pacing import RecordingPacer
from tests.receiver import Receiver
from tests.reliability.checks import (
    DeliveryTally,
    Snapshot,
    compare,
    integrity_problems,
    snapshot,
    tally_deliveries,
)
from tests.reliability.digests import DigestTally, digest_endpoints
from tests.reliability.harness import (
    UpstreamScript,
    announce,
    connect,
    scratch_database,
    stock,
    write_config,
)

__all__ = ["FAULTS", "HOSTILE", "main", "run_soak"]

REQUEST_INTERVAL = 0.05
CLIENT_TIMEOUT = 0.3
BACKOFF_MAX = 1.0
RETRY_AFTER = 1
# syncd's pacer stamps a request's start just before httpx builds and sends it,
# and the fake stamps it when its handler thread gets to it: sends and arrivals
# closer than the interval by more than this are reported as jitter.
SLACK = 0.005
PAGE_SIZE = 5
REMOVAL_AFTER = 3  # the default

# Each kind builds its fault from the seeded generator; all apply to one request.
FAULTS: dict[str, Callable[[random.Random], fa.Fault]] = {
    "timeout": lambda _: fa.timeout(0.5),
    "timeout, then dropped": lambda _: fa.timeout(0.5, drop=True),
    "connection reset": lambda _: fa.reset(),
    "429": lambda _: fa.status(429),
    "429 + Retry-After": lambda _: fa.status(429, retry_after=RETRY_AFTER),
    "500": lambda _: fa.status(500),
    "500 + Retry-After": lambda _: fa.status(500, retry_after=RETRY_AFTER),
    "503": lambda _: fa.status(503),
    "503 + Retry-After": lambda _: fa.status(503, retry_after=RETRY_AFTER),
    "truncated body": lambda rng: fa.truncate(round(rng.uniform(0.05, 0.95), 2)),
    "empty page": lambda _: fa.empty_page(),
    "totalResults lie": lambda rng: fa.total_lie(rng.choice((-3, -2, -1, 1, 2, 3, 7))),
    "error feed": lambda _: fa.error_feed("internal error"),
    "slow drip under the timeout": lambda _: fa.slow_drip(0.1, chunk_size=4096),
    "slow drip over the timeout": lambda _: fa.slow_drip(0.6, chunk_size=4096),
    "empty result": lambda _: fa.empty_result(),
    "version lower than stored": lambda _: fa.stale_version(),
    "markup in the title": lambda _: fa.markup("title"),
    "only markup in the summary": lambda _: fa.markup("summary", lead=0),
    "repeated title": lambda _: fa.repeated("title", "A title sent twice"),
    "id outside arXiv's scheme": lambda rng: fa.entry_id(rng.choice(_IMPOSSIBLE_IDS)),
    "version out of range": lambda rng: fa.entry_id("{id}v" + rng.choice(_IMPOSSIBLE_VERSIONS)),
}
_HONOURED = ("429 + Retry-After", "503 + Retry-After")
# Answers a cycle must refuse outright (docs/RELIABILITY.md, hostile review items 1-3).
HOSTILE = (
    "version lower than stored",
    "markup in the title",
    "only markup in the summary",
    "repeated title",
    "id outside arXiv's scheme",
    "version out of range",
)
# Needs syncd to hold every current version first: see _Coin.
_NEEDS_SETTLED = "version lower than stored"
# A 300-letter archive, month 13, a 4-digit number after 2014, an old-style id after 0703.
_IMPOSSIBLE_IDS = ("a" * 300 + "/0601001v1", "2613.00001v1", "2604.0695v1", "hep-th/0801001v1")
# Below 1, past 32 bits (PostgreSQL's INTEGER), past 64 bits (SQLite's).
_IMPOSSIBLE_VERSIONS = ("0", "3000000000", "99999999999999999999")


class _SendClock(DeadlineTransport):
    """syncd's own transport (one connection, no retries), noting when each request is sent.

    The fake logs a request when its handler thread gets to it, which on a
    busy machine can be a few ms late; the send times say whether syncd's
    pacing or the fake's clock made two arrivals close.
    """

    def __init__(self) -> None:
        super().__init__(httpx.Limits(max_connections=1, max_keepalive_connections=1))
        self.times: list[float] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.times.append(time.monotonic())
        return super().handle_request(request)


class _Coin:
    """Decides once per request (the fake asks every queued fault) whether to fault it.

    A hit takes the next fault of ``plan``.  A lower version than the one
    stored is a lie only once syncd has stored every version the fake serves
    (before, it is news: a paper's previous version, say, when its latest one
    has not been seen yet); while ``settled`` is false, a hit that would send
    it is not taken, and the fault waits for the next hit after settling.
    """

    def __init__(self, rng: random.Random, rate: float, plan: list[str]) -> None:
        self._rng = rng
        self._rate = rate
        self._plan = plan
        self._taken = 0
        self._last: object = None
        self._hit = False
        self.enabled = True
        self.settled = False

    def __call__(self, params: Mapping[str, str]) -> bool:
        if params is not self._last:  # the fake passes one dict per request
            self._last = params
            self._hit = self.enabled and self._rng.random() < self._rate
            if self._hit and not self.settled and self._plan[self._taken] == _NEEDS_SETTLED:
                self._hit = False
            self._taken += self._hit
        return self._hit


def _fault_plan(rng: random.Random, count: int) -> list[str]:
    """``count`` fault kinds in shuffled rounds, so every kind comes before any repeats."""
    plan: list[str] = []
    while len(plan) < count:
        plan += rng.sample(list(FAULTS), len(FAULTS))
    return plan[:count]


@dataclass
class SoakRun:
    """One pass of the script: the reference or the faulty one."""

    state: Snapshot
    tally: DeliveryTally
    cycles: int = 0
    failed_cycles: int = 0
    requests: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    steps: int = 0
    postponed: int = 0
    flushed: int = 0
    false_absences: int = 0
    min_gap: float | None = None  # between arrivals at the fake
    min_send_gap: float | None = None  # between sends by the client
    min_turn_gap: float | None = None  # between the pacer's stamps
    sends: list[float] = field(default_factory=list)
    turns: list[float] = field(default_factory=list)
    arrival_jitter: list[tuple[int, float, float]] = field(default_factory=list)
    sends_under_interval: int = 0  # the pacer's stamp-to-send jitter
    spacing_violations: list[tuple[int, float, float]] = field(default_factory=list)
    retry_after_checked: int = 0
    retry_after_violations: list[tuple[str, float]] = field(default_factory=list)
    hostile_refused: Counter[str] = field(default_factory=Counter)
    hostile_missed: Counter[str] = field(default_factory=Counter)  # found no entry to spoil
    hostile_trusted: list[tuple[str, int]] = field(default_factory=list)  # kind, request index
    integrity: list[str] = field(default_factory=list)
    digests: list[DigestTally] = field(default_factory=list)
    seconds: float = 0.0


def _false_absences(url: str, live: set[str]) -> int:
    """Papers marked absent (or removed) although the fake still lists them."""
    p, t = papers_table, paper_authors_table
    with connect(url) as conn:
        rows = conn.execute(
            sa.select(p.c.arxiv_id)
            .join(t, t.c.paper_id == p.c.id)
            .where(sa.or_(t.c.absent_syncs > 0, t.c.status == "removed"), p.c.arxiv_id.is_not(None))
        )
        return sum(1 for (arxiv_id,) in rows if arxiv_id in live)


class _Pass:
    """One pass of the script through syncd: cycles, script steps, the gate between them."""

    def __init__(
        self,
        fake: fa.FakeArxiv,
        store: Storage,
        client: ArxivClient,
        settings: Settings,
        *,
        url: str,
        seed: int,
    ) -> None:
        self.fake = fake
        self.store = store
        self.client = client
        self.settings = settings
        self.url = url
        self.script = UpstreamScript(seed)
        self.run = SoakRun(state=Snapshot({}, {}, {}, Counter(), Counter()), tally=_NO_TALLY)
        self.boundaries: list[tuple[int, int]] = []  # request log indices of each cycle
        self.outcomes: list[bool] = []  # whether each cycle succeeded

    def cycle(self) -> bool:
        """One cycle; whether it succeeded with no fault on any of its requests."""
        before = len(self.fake.requests)
        results = sync_all(
            self.store, self.client, self.settings.configured_authors, self.settings.sync
        )
        after = len(self.fake.requests)
        self.boundaries.append((before, after))
        self.run.cycles += 1
        ok = all(r.ok for r in results)
        self.outcomes.append(ok)
        self.run.failed_cycles += not ok
        self.run.false_absences += _false_absences(self.url, set(self.fake.papers))
        return ok and not any(r.fault for r in self.fake.requests[before:after])

    def apply_step(self) -> None:
        """Apply the script's next step to the fake."""
        for change in self.script.step(self.run.steps):
            change.apply(self.fake)
        self.run.steps += 1

    def play(self, cycles: int, every: int, coin: _Coin) -> None:
        """``cycles`` cycles with a step due every ``every``; then clean cycles to settle."""
        seen = True  # whether the last step applied was seen by a clean, good cycle
        due = 0
        for number in range(cycles):
            if number and number % every == 0:
                due += 1
            if self.run.steps < due and seen:
                self.apply_step()
                seen = coin.settled = False
            elif self.run.steps < due:
                self.run.postponed += 1
            clean = self.cycle()
            seen = clean or seen
            coin.settled = clean or coin.settled
        coin.enabled = False
        self.fake.clear_faults()
        clean = []
        while self.run.steps < due:
            self.apply_step()
            self.run.flushed += 1
            clean.append(self.cycle())
        clean += [self.cycle() for _ in range(REMOVAL_AFTER + 1)]
        if not all(clean):
            raise AssertionError("a cycle failed after the faults stopped")


def _soak_once(
    *, url: str, workdir: Path, seed: int, cycles: int, every: int, rate: float, name: str
) -> SoakRun:
    started = time.monotonic()
    with (
        fa.FakeArxiv() as fake,
        Receiver([WEBHOOK_SECRET]) as receiver,
        digest_endpoints(WEBHOOK_SECRET) as digest_receivers,
    ):
        stock(fake)
        # The reference's pacing proves nothing (its spacing is not checked) and
        # would cost request_interval a request; its results do not depend on it.
        interval = REQUEST_INTERVAL if rate > 0 else 0.0
        config = write_config(
            workdir / f"{name}.toml",
            api_url=fake.url,
            database_url=url,
            hook_url=receiver.url,
            sections={
                "arxiv": {
                    "request_interval": interval,
                    "page_size": PAGE_SIZE,
                    "timeout": CLIENT_TIMEOUT,
                    "max_retries": 3,
                    "backoff_base": 0.02,
                    "backoff_max": BACKOFF_MAX,
                    # Waited out in place, as the other faults' backoff: the soak's throttles
                    # pass (a storm's cooldown is tests/integration/test_throttling.py's).
                    "throttle_cooldown": 0.02,
                    "throttle_cooldown_max": BACKOFF_MAX,
                },
                "sync": {"removal_after": REMOVAL_AFTER},
                "delivery": {"poll_interval": 0.05, "retry_schedule": [0.1] * 5},
            },
            more_hooks=digest_receivers.hooks,
        )
        settings = load_settings(config)
        plan = _fault_plan(random.Random(seed * 31 + 7), cycles * 4 + 64) if rate > 0 else []
        coin = _Coin(random.Random(seed * 31 + 11), rate, plan)
        build = random.Random(seed * 31 + 13)
        # Every queued fault asks the same coin, so a request takes at most one, in order.
        fake.inject(*(replace(FAULTS[kind](build), when=coin) for kind in plan))
        app = App.open(settings)
        store = app.storage
        try:
            upgrade(store.engine)
            app.register_endpoints()
            clock, turns = _SendClock(), RecordingPacer(_pacing._PACER)
            with ArxivClient(
                settings.arxiv,
                transport=clock,
                rng=random.Random(seed),
                pacer=turns,
                cooldowns=store.cooldowns,
            ) as client:
                soak = _Pass(fake, store, client, settings, url=url, seed=seed)
                soak.play(cycles, every, coin)
            with app.dispatcher() as dispatcher:
                dispatcher.drain(30)
        finally:
            app.close()
        run = soak.run
        run.sends, run.turns = clock.times, turns.stamps
        run.state = snapshot(url)
        run.tally = tally_deliveries(run.state.events, receiver.received)
        run.digests = digest_receivers.tally(url)
        run.integrity = integrity_problems(url)
        requests = list(fake.requests)
    run.requests = len(requests)
    _check_requests(run, requests, plan, soak.boundaries)
    _check_hostile(run, requests, plan, soak.boundaries, soak.outcomes)
    run.seconds = time.monotonic() - started
    return run


_NO_TALLY = DeliveryTally(0, [], 0, [], 0, 0)


def _check_requests(
    run: SoakRun,
    requests: list[fa.LoggedRequest],
    plan: list[str],
    boundaries: list[tuple[int, int]],
) -> None:
    """Spacing of every request's turn; Retry-After honoured by retries within a cycle."""
    faulted = iter(plan)
    kinds: dict[int, str] = {}
    for index, request in enumerate(requests):
        if request.fault is not None:
            kinds[index] = next(faulted)
            run.faults[kinds[index]] += 1
    # A request sent without a turn, or one the fake never logged.
    if len(run.turns) < len(requests) or len(run.sends) != len(requests):
        run.spacing_violations.append((-1, float(len(run.turns)), float(len(requests))))
    gaps = [b - a for a, b in itertools.pairwise(run.turns)]
    run.min_turn_gap = min(gaps, default=None)
    run.spacing_violations += [
        (index, round(gap, 6), round(gap, 6))
        for index, gap in enumerate(gaps, start=1)
        if gap < REQUEST_INTERVAL
    ]
    sends = run.sends if len(run.sends) == len(requests) else [r.time for r in requests]
    ordered = sorted(range(len(requests)), key=lambda i: requests[i].time)
    for a, b in itertools.pairwise(ordered):
        gap, sent = requests[b].time - requests[a].time, sends[b] - sends[a]
        run.min_gap = gap if run.min_gap is None else min(run.min_gap, gap)
        run.min_send_gap = sent if run.min_send_gap is None else min(run.min_send_gap, sent)
        if min(gap, sent) < REQUEST_INTERVAL - SLACK:
            run.arrival_jitter.append((b, round(gap, 4), round(sent, 4)))
        run.sends_under_interval += sent < REQUEST_INTERVAL
    last_of_cycle = {after - 1 for _, after in boundaries if after}
    for index, kind in kinds.items():
        if kind not in _HONOURED or index in last_of_cycle or index + 1 >= len(requests):
            continue
        run.retry_after_checked += 1
        gap = sends[index + 1] - sends[index]
        if gap < min(RETRY_AFTER, BACKOFF_MAX):
            run.retry_after_violations.append((kind, round(gap, 4)))


def _asked_again(requests: list[fa.LoggedRequest], index: int, end: int) -> bool:
    """Whether the cycle sent request ``index`` again before ``end``: the client gave up on
    that answer (on a loaded machine, often a timeout before it was read), so the cycle's
    outcome is the retry's, not the hostile answer's."""
    sent = requests[index]
    return any((r.path, r.params) == (sent.path, sent.params) for r in requests[index + 1 : end])


def _check_hostile(
    run: SoakRun,
    requests: list[fa.LoggedRequest],
    plan: list[str],
    boundaries: list[tuple[int, int]],
    outcomes: list[bool],
) -> None:
    """Every hostile answer the cycle kept (an entry there to spoil, not asked again) failed
    its cycle."""
    faulted = iter(plan)
    kinds = {i: next(faulted) for i, request in enumerate(requests) if request.fault is not None}
    for (before, after), ok in zip(boundaries, outcomes, strict=True):
        for index in range(before, after):
            kind = kinds.get(index)
            if kind not in HOSTILE:
                continue
            if requests[index].missed or _asked_again(requests, index, after):
                run.hostile_missed[kind] += 1
            elif ok:
                run.hostile_trusted.append((kind, index))
            else:
                run.hostile_refused[kind] += 1


def run_soak(
    *,
    database_url: str,
    reference_url: str,
    workdir: Path,
    cycles: int = 300,
    every: int = 4,
    rate: float = 0.2,
    seed: int = 1,
) -> dict[str, Any]:
    """Soak ``database_url`` for ``cycles`` cycles with faults; compare with a clean reference."""
    workdir.mkdir(parents=True, exist_ok=True)
    with _logging_to(workdir / "soak.log"), _prompt_threads():
        reference = _soak_once(
            url=reference_url,
            workdir=workdir,
            seed=seed,
            cycles=cycles,
            every=every,
            rate=0.0,
            name="reference",
        )
        run = _soak_once(
            url=database_url,
            workdir=workdir,
            seed=seed,
            cycles=cycles,
            every=every,
            rate=rate,
            name="faulty",
        )
    comparison = compare(reference.state, run.state)
    digests = run.digests + reference.digests
    lost = len(comparison.lost) + len(run.tally.undelivered) + sum(len(t.lost) for t in digests)
    false = len(comparison.false) + len(run.tally.unknown) + sum(len(t.false) for t in digests)
    duplicated = len(comparison.duplicated) + sum(len(t.doubled) for t in digests)
    database = sa.engine.make_url(database_url).get_backend_name()
    result: dict[str, Any] = {
        "row": {
            "family": "soak",
            "database": database,
            "trials": run.cycles,
            "faults": sum(run.faults.values()),
            "expected": comparison.expected,
            "delivered": run.tally.delivered,
            "lost": lost,
            "duplicated": duplicated,
            "false": false,
            "redelivered": run.tally.redelivered,
            "seconds": round(reference.seconds + run.seconds),
        },
        "seed": seed,
        "rate": rate,
        "cycles": run.cycles,
        "failed_cycles": run.failed_cycles,
        "requests": run.requests,
        "reference_requests": reference.requests,
        "faults_by_kind": {kind: run.faults.get(kind, 0) for kind in FAULTS},
        "script_steps": run.steps,
        "steps_postponed_cycles": run.postponed,
        "steps_applied_after_faults": run.flushed,
        "false_absence_marks": run.false_absences,
        "reference_false_absence_marks": reference.false_absences,
        "request_interval": REQUEST_INTERVAL,
        "min_request_gap": round(run.min_gap or 0.0, 4),
        "min_send_gap": round(run.min_send_gap or 0.0, 4),
        "min_turn_gap": round(run.min_turn_gap or 0.0, 6),
        "spacing_violations": run.spacing_violations,
        "arrival_jitter": run.arrival_jitter,
        "sends_under_interval": run.sends_under_interval,
        "retry_after_checked": run.retry_after_checked,
        "retry_after_violations": run.retry_after_violations,
        "hostile_answers": {
            kind: {"refused": run.hostile_refused[kind], "missed": run.hostile_missed[kind]}
            for kind in HOSTILE
        },
        "hostile_answers_trusted": run.hostile_trusted,
        "revision_diffs": comparison.revision_diffs,
        "paper_diffs": comparison.paper_diffs,
        "lost_events": [list(k) for k in comparison.lost],
        "undelivered_events": run.tally.undelivered,
        "duplicated_events": [list(k) for k in comparison.duplicated],
        "false_events": [list(k) for k in comparison.false],
        "unknown_webhook_ids": run.tally.unknown,
        "digests": [asdict(t) for t in run.digests],
        "reference_digests": [asdict(t) for t in reference.digests],
        "integrity_problems": run.integrity + reference.integrity,
        "reference": {
            "events": comparison.expected,
            "delivered": reference.tally.delivered,
            "undelivered": reference.tally.undelivered,
            "failed_cycles": reference.failed_cycles,
            "seconds": round(reference.seconds, 1),
        },
        "soak_seconds": round(run.seconds, 1),
    }
    result["ok"] = bool(
        not lost
        and not false
        and not duplicated
        and comparison.ok
        and not run.spacing_violations
        and not run.retry_after_violations
        and not run.hostile_trusted
        and not result["integrity_problems"]
        and not reference.failed_cycles
        and not reference.tally.undelivered
        and run.failed_cycles > 0
    )
    return result


@contextlib.contextmanager
def _logging_to(path: Path) -> Iterator[None]:
    with path.open("w") as out:
        configure_logging("warning", "json", out)
        try:
            yield
        finally:
            structlog.reset_defaults()


@contextlib.contextmanager
def _prompt_threads() -> Iterator[None]:
    # The fake shares this interpreter with the client: with the default 5 ms
    # GIL switch interval its handler thread may log a request's arrival up to
    # several ms late, which shows up as two requests closer than they were sent.
    previous = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


def main(argv: list[str] | None = None) -> int:
    """Soak each ``--db``, print a table row each, write JSON; exit 1 if any failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--db", action="append", choices=("sqlite", "postgresql"))
    parser.add_argument("--cycles", type=int, default=300)
    parser.add_argument("--every", type=int, default=4, help="cycles between script steps")
    parser.add_argument("--rate", type=float, default=0.2, help="share of requests faulted")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "reliability")
    args = parser.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so scratch databases are dropped and children killed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    results = []
    for kind in args.db or ["sqlite", "postgresql"]:
        with tempfile.TemporaryDirectory(prefix=f"syncd-soak-{kind}-") as tmp:
            workdir = args.out / "work" / f"soak-{kind}"
            workdir.mkdir(parents=True, exist_ok=True)
            with (
                scratch_database(kind, Path(tmp), "soak") as url,
                scratch_database(kind, Path(tmp), "soakref") as reference_url,
            ):
                result = run_soak(
                    database_url=url,
                    reference_url=reference_url,
                    workdir=workdir,
                    cycles=args.cycles,
                    every=args.every,
                    rate=args.rate,
                    seed=args.seed,
                )
        announce(args.out, result)
        results.append(result)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
