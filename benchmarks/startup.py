"""Row "CLI start-up": CPU time of `syncd --help` and `syncd papers` against a bare import.

Every `syncd` command starts a fresh interpreter, so what it imports before
doing anything is paid on every call.  The baseline is what any command of
syncd needs at the least, loaded the same way in a fresh interpreter:
``python -c "import sqlalchemy, httpx, structlog"``.  The three commands run
as subprocesses, in turn (the order rotates every repetition), and each one's
CPU time is the user + system time the kernel charged to the child: the
change of ``getrusage(RUSAGE_CHILDREN)`` across its ``wait`` (CPU time, not
wall time, so the other processes of a shared machine count less).

`syncd` runs as the installed console script does, importing the snapshot of
``syncd/`` the run took; `syncd papers` lists the seeded author's 9 papers
from a SQLite database that an untimed `syncd seed` created, with the default
config (``database.migrate = true``: the schema check is part of every
command).  Target: each command's median CPU time at most 1.5x the baseline's.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, child_env

TARGET = 1.5
BASELINE = "import sqlalchemy, httpx, structlog"
# Run from a folder without `syncd/` in it: `python -m` and the console script put
# the working directory first on sys.path, ahead of the snapshot.
_COMMANDS = {"syncd --help": ("--help",), "syncd papers": ("papers",)}


def _cpu_seconds(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> float:
    """User + system CPU seconds of one run of ``argv`` as a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _write_config(folder: Path) -> Path:
    config = folder / "syncd.toml"
    seeds = ", ".join(f'"{p}"' for p in sorted((ROOT / "seeds").glob("*.txt")))
    config.write_text(
        f'[database]\nurl = "sqlite:///{folder / "syncd.sqlite3"}"\n'
        f'[[authors]]\nname = "Zhida Jiang"\nseeds = [{seeds}]\n',
        encoding="utf-8",
    )
    return config


def run(reps: int, folder: Path) -> dict[str, Any]:
    """Measure each command against the baseline ``reps`` times, alternating."""
    folder.mkdir(parents=True, exist_ok=True)
    env = child_env() | {"SYNCD_CONFIG": str(_write_config(folder))}
    script = str(Path(sys.executable).parent / "syncd")
    subprocess.run([script, "seed"], cwd=folder, env=env, capture_output=True, check=True)
    argvs = {"baseline": (sys.executable, "-c", BASELINE)}
    argvs |= {name: (script, *args) for name, args in _COMMANDS.items()}
    for argv in argvs.values():  # warm the page cache and the bytecode caches, untimed
        _cpu_seconds(argv, folder, env)
    seconds: dict[str, list[float]] = {name: [] for name in argvs}
    names = list(argvs)
    for rep in range(reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            seconds[name].append(_cpu_seconds(argvs[name], folder, env))
    base = statistics.median(seconds["baseline"])
    commands = {}
    for name in _COMMANDS:
        median = statistics.median(seconds[name])
        commands[name] = {
            "median_cpu_seconds": round(median, 4),
            "ratio": round(median / base, 3),
            "met": median / base <= TARGET,
        }
    return {
        "baseline": f'python -c "{BASELINE}"',
        "baseline_median_cpu_seconds": round(base, 4),
        "reps": reps,
        "target": TARGET,
        "commands": commands,
        "met": all(c["met"] for c in commands.values()),
        "cpu_seconds": {name: [round(s, 4) for s in values] for name, values in seconds.items()},
    }


def table_rows(result: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """(row, syncd, baseline, ratio, target, met) per command."""
    return [
        (
            f"CLI start-up: `{name}` (CPU, {result['reps']} runs, median)",
            f"{c['median_cpu_seconds'] * 1000:.0f} ms",
            f"bare import {result['baseline_median_cpu_seconds'] * 1000:.0f} ms",
            f"{c['ratio']:.2f}x",
            f"<= {TARGET}x",
            "yes" if c["met"] else "NO",
        )
        for name, c in result["commands"].items()
    ]
