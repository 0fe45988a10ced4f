"""Crash-consistency torture: SIGKILL ``syncd sync`` and ``syncd run`` at fault points, compare.

Each trial applies one step of a seeded upstream script to the fake arXiv,
then runs ``syncd sync`` or ``syncd run`` (picked by the seeded generator) as
a subprocess one to three times in a row, each time armed through
``SYNCD_FAULT_POINTS`` to SIGKILL itself at a point and pass count the
generator picks (see ``syncd.faults.POINTS``: fetch, cycle written, cycle
committed, deliveries claimed, sent, acknowledged).  After every kill the
database's integrity is checked; then the same command runs unarmed until the
cycle has committed and the outbox is empty (a daemon is then stopped with
SIGTERM).  Points are taken in seeded shuffled rounds, so every point is hit
before any is hit twice.

A reference run replays the same script on a fresh database without kills,
one clean ``syncd sync`` per step.  Both then settle with ``removal_after``
clean cycles and are compared: revisions per paper as (seq, record hash,
kinds, source), paper states, events as (paper, type, kinds, record hash)
multisets, every event delivered (verified) under its own id, and integrity.
Two more endpoints are grouped by cycle (a signed one and a Slack one): every
event reaches each in exactly one digest (``tests.reliability.digests``).

Full run: ``python -m tests.reliability.torture --db sqlite --db postgresql``
(``make reliability``).  ``test_reliability.py`` runs a short one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
import structlog

from syncd.cli import main as syncd_main
from syncd.faults import HARVEST_POINTS
from syncd.faults import POINTS as ALL_POINTS
from syncd.storage.schema import deliveries_table, sync_runs_table
from tests.fakearxiv import FakeArxiv
from tests.helpers import ROOT, WEBHOOK_SECRET
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
    author_pages,
    connect,
    scratch_database,
    stock,
    write_config,
)

__all__ = ["POINTS", "TortureError", "main", "run_torture"]

PAGE_SIZE = 5
REMOVAL_AFTER = 2
LEASE = 2
DELIVERY_POINTS = ("store.deliveries_claimed", "dispatch.sent", "dispatch.acknowledged")
# What `sync` and `run` pass; a harvest's points have their own kill tests (test_harvest).
POINTS = tuple(p for p in ALL_POINTS if p not in HARVEST_POINTS)
ATTEMPT_TIMEOUT = 60.0  # seconds any one syncd process may take
COMMANDS = ("sync", "run")


class TortureError(AssertionError):
    """syncd did something the torture cannot carry on from (a hang, a failed clean run)."""


@dataclass(frozen=True)
class Attempt:
    """One syncd process of a trial."""

    trial: int
    command: str
    point: str | None
    passes: int
    returncode: int
    killed: bool
    seconds: float
    integrity: tuple[str, ...] = ()


def _sections() -> dict[str, dict[str, object]]:
    return {
        "arxiv": {
            "request_interval": 0.0,
            "page_size": PAGE_SIZE,
            "timeout": 5.0,
            "max_retries": 2,
            "backoff_base": 0.01,
            "backoff_max": 0.1,
        },
        "log": {"level": "info", "format": "json"},
        "sync": {"removal_after": REMOVAL_AFTER},
        "schedule": {"interval": 1, "jitter": 0},
        "http": {"host": "127.0.0.1", "port": 0},
        "delivery": {
            "workers": 4,
            "lease": LEASE,
            "poll_interval": 0.05,
            "sync_wait": 20,
            "shutdown_grace": 5,
            "retry_schedule": [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2],
        },
    }


class _Probe:
    """Reads the torture database between processes."""

    def __init__(self, url: str) -> None:
        self.url = url

    def last_run(self) -> int:
        with connect(self.url) as conn:
            return int(conn.scalar(sa.select(sa.func.max(sync_runs_table.c.id))) or 0)

    def ok_run_after(self, run_id: int) -> bool:
        s = sync_runs_table
        with connect(self.url) as conn:
            query = sa.select(sa.func.count()).where(s.c.id > run_id, s.c.status == "ok")
            return bool(conn.scalar(query))

    def pending(self) -> int:
        d = deliveries_table
        with connect(self.url) as conn:
            return int(conn.scalar(sa.select(sa.func.count()).where(d.c.status == "pending")) or 0)

    def settled_after(self, run_id: int) -> bool:
        """A cycle started after ``run_id`` succeeded and nothing is left to deliver."""
        try:
            return self.ok_run_after(run_id) and self.pending() == 0
        except sa.exc.OperationalError:  # SQLite busy while the daemon writes
            return False


class _Rotation:
    """Fault points in seeded shuffled rounds: each round hits every point once."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._round: list[str] = []

    def pick(self, reachable: Callable[[str], bool]) -> str | None:
        """The next point of the round that ``reachable`` allows, else any point it allows."""
        if not self._round:
            self._round = self._rng.sample(POINTS, len(POINTS))
        spare = self._rng.sample(POINTS, len(POINTS))
        return next((p for p in [*self._round, *spare] if reachable(p)), None)

    def hit(self, point: str) -> None:
        if point in self._round:
            self._round.remove(point)


class _Runner:
    """Starts syncd processes against one config and waits for them, bounded."""

    def __init__(self, config: Path, probe: _Probe, logs: Path) -> None:
        self.config = config
        self.probe = probe
        self.logs = logs
        self.count = 0

    def run(self, command: str, fault: str | None) -> tuple[int, float]:
        """Run ``command`` once (armed with ``fault`` if given); return its exit code and time."""
        self.count += 1
        env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
        if fault:
            env["SYNCD_FAULT_POINTS"] = fault
        argv = [sys.executable, "-m", "syncd", "--config", str(self.config), command]
        log = self.logs / f"{self.count:04d}-{command}-{fault or 'clean'}.log".replace(":", "_")
        started = time.monotonic()
        with log.open("w") as out:
            process = subprocess.Popen(
                argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, text=True
            )
            try:
                code = self._wait(process, command)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait(timeout=10)
        return code, time.monotonic() - started

    def _wait(self, process: subprocess.Popen[str], command: str) -> int:
        deadline = time.monotonic() + ATTEMPT_TIMEOUT
        if command == "sync":
            try:
                return process.wait(timeout=ATTEMPT_TIMEOUT)
            except subprocess.TimeoutExpired:
                raise TortureError(f"`syncd sync` hung for {ATTEMPT_TIMEOUT} s") from None
        before = self.probe.last_run()
        while time.monotonic() < deadline:
            code = process.poll()
            if code is not None:
                return code
            if self.probe.settled_after(before):
                process.send_signal(signal.SIGTERM)
                try:
                    return process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    raise TortureError("`syncd run` did not stop within 30 s of SIGTERM") from None
            time.sleep(0.05)
        raise TortureError(f"`syncd run` did not settle in {ATTEMPT_TIMEOUT} s")

    def finish(self, command: str, step_run: int) -> None:
        """Run ``command`` unarmed until the step's cycle committed and the outbox is empty."""
        for _ in range(4):
            code, _ = self.run(command, None)
            if code != 0:
                raise TortureError(f"clean `syncd {command}` exited {code}; see {self.logs}")
            if self.probe.ok_run_after(step_run) and self.probe.pending() == 0:
                return
        raise TortureError(f"`syncd {command}` left work behind four times; see {self.logs}")


def _quiet_main(argv: list[str], log: Path) -> int:
    """``syncd`` in-process with its output in ``log`` (for the reference and the settle)."""
    with (
        log.open("a") as out,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(out),
    ):
        try:
            return syncd_main(argv)
        finally:
            structlog.reset_defaults()


def _reference(
    url: str, workdir: Path, seed: int, steps: int, max_papers: int
) -> tuple[Snapshot, DeliveryTally, float]:
    """Replay ``steps`` steps of the script with one clean in-process sync each."""
    started = time.monotonic()
    with FakeArxiv() as fake, Receiver([WEBHOOK_SECRET]) as receiver:
        stock(fake)
        config = write_config(
            workdir / "reference.toml",
            api_url=fake.url,
            database_url=url,
            hook_url=receiver.url,
            sections=_sections(),
        )
        log = workdir / "reference.log"
        script = UpstreamScript(seed, max_papers=max_papers)
        for step in range(steps):
            for change in script.step(step):
                change.apply(fake)
            if _quiet_main(["--config", str(config), "sync"], log) != 0:
                raise TortureError(f"reference step {step} failed; see {log}")
        for _ in range(REMOVAL_AFTER):
            if _quiet_main(["--config", str(config), "sync"], log) != 0:
                raise TortureError(f"reference settle failed; see {log}")
        state = snapshot(url)
        tally = tally_deliveries(state.events, receiver.received)
    return state, tally, time.monotonic() - started


class _Trials:
    """The trials on one database: apply a script step, kill syncd, restart, repeat."""

    def __init__(
        self,
        runner: _Runner,
        fake: FakeArxiv,
        script: UpstreamScript,
        rng: random.Random,
        say: Callable[[str], None],
    ) -> None:
        self.runner = runner
        self.probe = runner.probe
        self.fake = fake
        self.script = script
        self.rng = rng
        self.rotation = _Rotation(rng)
        self.say = say
        self.attempts: list[Attempt] = []
        self.killed = 0
        self.trials = 0

    def trial(self, kills: int) -> None:
        """One step of the script, one to three armed processes, then a clean finish."""
        changes = self.script.step(self.trials)
        for change in changes:
            change.apply(self.fake)
        command = COMMANDS[self.trials % 2] if self.trials < 2 else self.rng.choice(COMMANDS)
        step_run = self.probe.last_run()
        events_due = len({c.arxiv_id for c in changes if c.publishes_event})
        for _ in range(self.rng.choice((1, 1, 2, 3))):
            if self.killed >= kills or not self._attempt(command, step_run, events_due, kills):
                break
        self.runner.finish(command, step_run)
        self.trials += 1

    def _attempt(self, command: str, step_run: int, events_due: int, kills: int) -> bool:
        """Run ``command`` armed at a point it can reach; False when none is reachable."""
        committed = self.probe.ok_run_after(step_run)
        deliveries = self.probe.pending() + (0 if committed else events_due)
        point = self.rotation.pick(lambda p: p not in DELIVERY_POINTS or deliveries > 0)
        if point is None:
            return False
        passes = 1
        if point == "sync.page_fetched":
            passes = self.rng.randint(1, author_pages(self.fake, PAGE_SIZE))
        elif point in ("dispatch.sent", "dispatch.acknowledged"):
            passes = self.rng.randint(1, deliveries)
        code, seconds = self.runner.run(command, f"{point}:{passes}")
        dead = code == -signal.SIGKILL
        problems: tuple[str, ...] = ()
        if dead:
            self.killed += 1
            self.rotation.hit(point)
            problems = tuple(integrity_problems(self.probe.url))
        elif code != 0:
            raise TortureError(f"armed `syncd {command}` exited {code}; see {self.runner.logs}")
        self.attempts.append(
            Attempt(self.trials, command, point, passes, code, dead, round(seconds, 2), problems)
        )
        self.say(
            f"trial {self.trials:3d} {command:4s} {point}:{passes} -> "
            f"{'KILLED' if dead else 'completed'} ({self.killed}/{kills} kills)"
            + (f" INTEGRITY: {problems}" if problems else "")
        )
        return True


def run_torture(
    *,
    database_url: str,
    reference_url: str,
    workdir: Path,
    kills: int = 50,
    seed: int = 1,
    budget: float = 600.0,
    max_papers: int = 30,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Torture syncd on ``database_url`` until ``kills`` kills (bounded); return the result.

    ``reference_url`` is an empty database of the same kind for the reference
    run.  Trials stop at ``kills`` kills, at ``3 * kills`` trials, or when
    ``budget`` seconds have passed, whichever comes first.
    """
    logs = workdir / "logs"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    started = time.monotonic()
    probe = _Probe(database_url)
    with (
        FakeArxiv() as fake,
        Receiver([WEBHOOK_SECRET]) as receiver,
        digest_endpoints(WEBHOOK_SECRET) as digest_receivers,
    ):
        stock(fake)
        config = write_config(
            workdir / "torture.toml",
            api_url=fake.url,
            database_url=database_url,
            hook_url=receiver.url,
            sections=_sections(),
            more_hooks=digest_receivers.hooks,
        )
        runner = _Runner(config, probe, logs)
        if _quiet_main(["--config", str(config), "db", "upgrade"], logs / "upgrade.log") != 0:
            raise TortureError(f"`syncd db upgrade` failed; see {logs}")
        script = UpstreamScript(seed, max_papers=max_papers)
        trials = _Trials(runner, fake, script, random.Random(seed), progress or (lambda _: None))
        while (
            trials.killed < kills
            and trials.trials < 3 * kills
            and time.monotonic() - started < budget
        ):
            trials.trial(kills)
        for _ in range(REMOVAL_AFTER):
            runner.finish("sync", probe.last_run())
        seconds = time.monotonic() - started
        state = snapshot(database_url)
        tally = tally_deliveries(state.events, receiver.received)
        digests = digest_receivers.tally(database_url)
    final_problems = integrity_problems(database_url)
    reference = _reference(reference_url, workdir, seed, trials.trials, max_papers)
    return _result(
        database_url=database_url,
        trials=trials,
        kills=kills,
        seed=seed,
        state=state,
        tally=tally,
        digests=digests,
        final_problems=final_problems,
        reference=reference,
        seconds=seconds,
    )


def _result(
    *,
    database_url: str,
    trials: _Trials,
    kills: int,
    seed: int,
    state: Snapshot,
    tally: DeliveryTally,
    digests: list[DigestTally],
    final_problems: list[str],
    reference: tuple[Snapshot, DeliveryTally, float],
    seconds: float,
) -> dict[str, Any]:
    reference_state, reference_tally, reference_seconds = reference
    comparison = compare(reference_state, state)
    attempts = trials.attempts
    by_point = Counter(a.point for a in attempts if a.killed)
    kill_problems = [p for a in attempts for p in a.integrity]
    lost = len(comparison.lost) + len(tally.undelivered) + sum(len(t.lost) for t in digests)
    false = len(comparison.false) + len(tally.unknown) + sum(len(t.false) for t in digests)
    duplicated = len(comparison.duplicated) + sum(len(t.doubled) for t in digests)
    result: dict[str, Any] = {
        "row": {
            "family": "torture",
            "database": sa.engine.make_url(database_url).get_backend_name(),
            "trials": trials.trials,
            "faults": trials.killed,
            "expected": comparison.expected,
            "delivered": tally.delivered,
            "lost": lost,
            "duplicated": duplicated,
            "false": false,
            "redelivered": tally.redelivered,
            "seconds": round(seconds + reference_seconds),
        },
        "seed": seed,
        "kills": trials.killed,
        "kills_wanted": kills,
        "kills_by_point": {p: by_point.get(p, 0) for p in POINTS},
        "kills_by_command": dict(Counter(a.command for a in attempts if a.killed)),
        "armed_processes": len(attempts),
        "armed_processes_not_killed": sum(1 for a in attempts if not a.killed),
        "processes": trials.runner.count,
        "integrity_checks": trials.killed + 1,
        "integrity_problems_after_kills": kill_problems,
        "integrity_problems_final": final_problems,
        "revision_diffs": comparison.revision_diffs,
        "paper_diffs": comparison.paper_diffs,
        "lost_events": [list(k) for k in comparison.lost],
        "undelivered_events": tally.undelivered,
        "duplicated_events": [list(k) for k in comparison.duplicated],
        "false_events": [list(k) for k in comparison.false],
        "unknown_webhook_ids": tally.unknown,
        "mismatched_webhook_ids": tally.mismatched,
        "unverified_posts": tally.unverified,
        "digests": [asdict(t) for t in digests],
        "outbox": dict(state.outbox),
        "runs": dict(state.runs),
        "reference": {
            "events": reference_tally.delivered + len(reference_tally.undelivered),
            "delivered": reference_tally.delivered,
            "undelivered": reference_tally.undelivered,
            "redelivered": reference_tally.redelivered,
            "runs": dict(reference_state.runs),
            "seconds": round(reference_seconds, 1),
        },
        "torture_seconds": round(seconds, 1),
        "attempts": [asdict(a) for a in attempts],
    }
    result["ok"] = bool(
        trials.killed >= kills
        and not lost
        and not false
        and not duplicated
        and comparison.ok
        and not kill_problems
        and not final_problems
        and not tally.mismatched
        and not reference_tally.undelivered
        and set(state.outbox) <= {"delivered"}
    )
    return result


@contextlib.contextmanager
def _workdir(base: Path | None, name: str) -> Iterator[Path]:
    if base is not None:
        path = base / name
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    with tempfile.TemporaryDirectory(prefix=f"syncd-{name}-") as tmp:
        yield Path(tmp)


def main(argv: list[str] | None = None) -> int:
    """Run the torture on each ``--db``, print a table row each, write JSON; 1 if any failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--db", action="append", choices=("sqlite", "postgresql"))
    parser.add_argument("--kills", type=int, default=60, help="kills per database (default 60)")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--budget", type=float, default=900.0, help="seconds per database")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "reliability")
    parser.add_argument("--quiet", action="store_true", help="no line per trial")
    args = parser.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so scratch databases are dropped and children killed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    results = []
    for kind in args.db or ["sqlite", "postgresql"]:
        with (
            _workdir(args.out / "work", f"torture-{kind}") as workdir,
            scratch_database(kind, workdir, "torture") as url,
            scratch_database(kind, workdir, "reference") as reference_url,
        ):
            for stale in workdir.glob("*.sqlite3*"):
                stale.unlink()
            result = run_torture(
                database_url=url,
                reference_url=reference_url,
                workdir=workdir,
                kills=args.kills,
                seed=args.seed,
                budget=args.budget,
                progress=None if args.quiet else lambda line: print(line, flush=True),
            )
        announce(args.out, result)
        results.append(result)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
