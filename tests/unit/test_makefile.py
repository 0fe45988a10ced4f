"""The README's `make run`: the daemon's dependencies only, and the config syncd itself picks.

`make` runs here against a virtual environment of the test's own: a fresh one
(``make -n`` prints what it would install, installing nothing), or one whose
``bin/syncd`` is a stand-in that reports how it was started.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _make(*args: str, env: dict[str, str] | None = None) -> list[str]:
    done = subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


def test_make_run_installs_the_project_without_its_test_tools(tmp_path: Path) -> None:
    """A first `make run` makes a venv with the project alone: no pytest, mypy or Playwright."""
    venv = tmp_path / "venv"
    commands = _make("-n", "run", f"VENV={venv}")
    installs = [c for c in commands if " install " in c]
    assert installs == [
        f"{venv}/bin/pip install -q --upgrade pip",
        f"{venv}/bin/pip install -q -e .",
    ]
    assert commands[-1] == f"{venv}/bin/syncd run"


def test_make_test_adds_the_test_tools(tmp_path: Path) -> None:
    """`make test` installs the test extra on top of what `make run` installs."""
    venv = tmp_path / "venv"
    commands = _make("-n", "test", f"VENV={venv}")
    assert f"{venv}/bin/pip install -q -e ." in commands
    assert f"{venv}/bin/pip install -q -e '.[test]'" in commands


@pytest.mark.parametrize("config", [None, "elsewhere/lab.toml"])
def test_make_run_leaves_the_config_to_syncd(tmp_path: Path, config: str | None) -> None:
    """`make run` passes no --config: syncd reads $SYNCD_CONFIG, else config/syncd.toml."""
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    stand_in = bin_dir / "syncd"
    stand_in.write_text('#!/bin/sh\necho "args: $*"\necho "SYNCD_CONFIG=${SYNCD_CONFIG-unset}"\n')
    stand_in.chmod(0o755)
    # Newer than pyproject.toml: make takes the venv as installed.
    newer = (ROOT / "pyproject.toml").stat().st_mtime + 60
    os.utime(stand_in, (newer, newer))
    env = {k: v for k, v in os.environ.items() if k != "SYNCD_CONFIG"}
    if config is not None:
        env["SYNCD_CONFIG"] = config
    lines = _make("run", f"VENV={tmp_path / 'venv'}", env=env)
    assert lines[-2:] == ["args: run", f"SYNCD_CONFIG={config or 'unset'}"]
