"""No secret leaves syncd: every output of the suite's scenarios is grepped for them.

The secrets: a webhook secret being rotated out, the one rotated in (both as
``whsec_...`` and as their bare base64), a PostgreSQL password in the database
URL, and credentials in webhook URLs.  The scenarios run the real CLI
in-process and ``syncd run`` as a subprocess, on PostgreSQL, logging at debug
level: seeding, syncing with deliveries (a 500 then success, a 410, dead
letters), the read commands in both formats, the webhooks commands, an
unreachable database, bad configurations, and the daemon's HTTP endpoints.
Everything printed, logged (structlog and the stdlib records libraries make),
served, or stored as a delivery error is checked.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import signal
import subprocess
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from syncd.cli import main
from syncd.storage.schema import deliveries_table, endpoints_table, metadata, sync_runs_table
from tests import scenario
from tests.fakearxiv import FakeArxiv
from tests.integration.conftest import Outcome, Syncd
from tests.integration.daemons import eventually, free_port
from tests.receiver import Receiver

pytestmark = pytest.mark.postgres

OLD_SECRET = "whsec_" + base64.b64encode(b"rotating-out secret: do not leak").decode()
NEW_SECRET = "whsec_" + base64.b64encode(b"rotating-in secret: never leak!!").decode()
DB_PASSWORD = "S3cretPa55-db-4f1c9e"
URL_TOKEN = "hook-t0ken-7a2b4c9d"
URL_PASSWORD = "hook-pa55-5e8d"
SECRET_ENV = "ROTATED_HOOK_SECRETS"
NESTPIPE = "2604.06956"

# What must never show up, by what it is; the base64 parts without padding also
# catch the padded form and the whole secret.
SECRETS = {
    "old webhook secret": OLD_SECRET.removeprefix("whsec_").rstrip("="),
    "new webhook secret": NEW_SECRET.removeprefix("whsec_").rstrip("="),
    "database password": DB_PASSWORD,
}
URL_CREDENTIALS = {"webhook URL token": URL_TOKEN, "webhook URL password": URL_PASSWORD}


class Transcript:
    """Every text syncd produced, by where it came from."""

    def __init__(self) -> None:
        self.texts: list[tuple[str, str]] = []

    def add(self, where: str, text: str) -> None:
        self.texts.append((where, text))

    def outcome(self, what: str, outcome: Outcome) -> Outcome:
        self.add(f"{what}: stdout", outcome.out)
        self.add(f"{what}: stderr", outcome.err)
        return outcome

    def leaks(self, forbidden: dict[str, str]) -> list[str]:
        return [
            f"{name} in {where}"
            for where, text in self.texts
            for name, value in forbidden.items()
            if value in text
        ]


@pytest.fixture
def password_url(postgres_server_url: str) -> str:
    """The session's empty PostgreSQL database, as a URL with a password (trust auth ignores it)."""
    engine = sa.create_engine(postgres_server_url)
    with engine.begin() as conn:
        metadata.drop_all(conn)
        conn.execute(sa.text("DROP TABLE IF EXISTS alembic_version"))
    engine.dispose()
    url = sa.engine.make_url(postgres_server_url).set(drivername="postgresql", password=DB_PASSWORD)
    return url.render_as_string(hide_password=False)


@pytest.fixture
def receivers() -> Iterator[dict[str, Receiver]]:
    """One receiver per endpoint: mid-rotation on the new and on the old secret, gone, broken."""
    with (
        Receiver([NEW_SECRET]) as rotating,
        Receiver([OLD_SECRET]) as legacy,
        Receiver([OLD_SECRET]) as gone,
        Receiver([OLD_SECRET]) as broken,
    ):
        yield {"rotating": rotating, "legacy": legacy, "gone": gone, "broken": broken}


def _sections(receivers: dict[str, Receiver], daemon_port: int) -> str:
    rotating, legacy, gone, broken = (
        receivers[n] for n in ("rotating", "legacy", "gone", "broken")
    )
    broken_url = broken.url.replace("://", f"://hookuser:{URL_PASSWORD}@")
    return f"""
[schedule]
interval = 1
jitter = 0

[http]
port = {daemon_port}
ready_max_age = 30

[delivery]
retry_schedule = [0.05, 0.05]
sync_wait = 10
poll_interval = 0.05
shutdown_grace = 5

[[webhooks]]
name = "rotating"
url = "{rotating.url}?token={URL_TOKEN}"
secret = ["{OLD_SECRET}", "{NEW_SECRET}"]
timeout = 2

[[webhooks]]
name = "legacy"
url = "{legacy.url}"
secret_env = "{SECRET_ENV}"
timeout = 2

[[webhooks]]
name = "gone"
url = "{gone.url}"
secret = "{OLD_SECRET}"
timeout = 2

[[webhooks]]
name = "broken"
url = "{broken_url}"
secret = ["{NEW_SECRET}", "{OLD_SECRET}"]
timeout = 2
"""


def _bad_configs(syncd: Syncd) -> dict[str, str]:
    """Configurations that stop syncd with exit 2, each holding a secret near the mistake."""
    base = f'[[authors]]\nname = "{scenario.AUTHOR}"\n[database]\nurl = "{syncd.database_url}"\n'
    hook = '[[webhooks]]\nname = "h"\nurl = "{url}"\nsecret = {secret}\n'
    good_url = "http://127.0.0.1:9/hook"
    return {
        "ftp webhook": base
        + hook.format(url=f"ftp://u:{URL_PASSWORD}@x/?token={URL_TOKEN}", secret=f'"{OLD_SECRET}"'),
        "misspelt key": base
        + hook.format(url=good_url, secret=f'"{OLD_SECRET}"')
        + f'secrett = "{NEW_SECRET}"\n',
        "unterminated secret": base + hook.format(url=good_url, secret=f'"{OLD_SECRET}'),
        "secret not base64": base + hook.format(url=good_url, secret=f'"{OLD_SECRET}!"'),
        "second secret bad": base
        + hook.format(url=good_url, secret=f'["{NEW_SECRET}", "{OLD_SECRET}$"]'),
        "secret and secret_env": base
        + hook.format(url=good_url, secret=f'"{OLD_SECRET}"')
        + f'secret_env = "{SECRET_ENV}"\n',
        "blocked destination": base
        + hook.format(
            url=f"http://u:{URL_PASSWORD}@169.254.169.254/?token={URL_TOKEN}",
            secret=f'"{OLD_SECRET}"',
        ),
        "mysql database": f'[[authors]]\nname = "x"\n[database]\n'
        f'url = "mysql://root:{DB_PASSWORD}@127.0.0.1/syncd"\n',
        "bad sync section": base
        + "[sync]\nremoval_after = 0\n"
        + hook.format(url=good_url, secret=f'"{OLD_SECRET}"'),
    }


def _stored_errors(password_url: str) -> str:
    """Every delivery error, disabling reason and cycle error the database holds."""
    engine = sa.create_engine(password_url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as conn:
            texts = [
                *conn.scalars(sa.select(deliveries_table.c.last_error)),
                *conn.scalars(sa.select(endpoints_table.c.disabled_reason)),
                *conn.scalars(sa.select(sync_runs_table.c.error)),
            ]
    finally:
        engine.dispose()
    return "\n".join(t for t in texts if t)


def _run_daemon(config: Path, log: Path, port: int) -> subprocess.Popen[bytes]:
    """``syncd run`` at debug level, logging to ``log``, the rotated secrets in its env."""
    env = {
        **os.environ,
        "SYNCD_LOG_LEVEL": "debug",
        "SYNCD_HTTP_PORT": str(port),
        SECRET_ENV: f"{OLD_SECRET} {NEW_SECRET}",
    }
    with log.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "syncd", "--config", str(config), "run"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )


@dataclass
class Scene:
    """The syncd under test, its receivers, and the transcript of everything it produced."""

    syncd: Syncd
    arxiv: FakeArxiv
    receivers: dict[str, Receiver]
    password_url: str
    daemon_port: int
    transcript: Transcript = field(default_factory=Transcript)

    def run(self, *args: str) -> Outcome:
        """One in-process ``syncd`` command, recorded."""
        return self.transcript.outcome(f"syncd {' '.join(args)}", self.syncd(*args))


@pytest.fixture
def scene(
    arxiv: FakeArxiv,
    password_url: str,
    receivers: dict[str, Receiver],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> Scene:
    """syncd on PostgreSQL with a password, four endpoints, and the rotated secrets in the env."""
    syncd = Syncd(arxiv=arxiv, database_url=password_url, workdir=tmp_path, capsys=capsys)
    daemon_port = free_port()
    syncd.sections = _sections(receivers, daemon_port)
    return Scene(syncd, arxiv, receivers, password_url, daemon_port)


def _working_database(scene: Scene) -> None:
    """Seed, sync with a 500 then success, a 410 and dead letters, then every read command."""
    receivers = scene.receivers
    receivers["rotating"].respond_with(500, times=3, body=f"no: /hook?token={URL_TOKEN}".encode())
    receivers["gone"].always(410)
    receivers["broken"].always(500, body=b"database on fire")
    assert scene.run("seed").code == 0
    synced = scene.run("sync")
    assert synced.code == 0, synced.err
    assert "7 dead-lettered" in synced.out
    events = json.loads(scene.run("events", "--json").out)
    for command in (
        ["papers"],
        ["papers", "--json"],
        ["papers", "--author", scenario.AUTHOR],
        ["history", NESTPIPE],
        ["history", NESTPIPE, "--json"],
        ["history", "no-such-paper"],
        ["events"],
        ["events", "--since", events[0]["id"]],
        ["webhooks", "list"],
        ["webhooks", "list", "--json"],
        ["webhooks", "test", "rotating"],
        ["webhooks", "test", "legacy"],
        ["webhooks", "test", "gone"],
        ["webhooks", "test", "broken"],
        ["webhooks", "test", "nobody"],
        ["webhooks", "redeliver", events[0]["id"]],
        ["webhooks", "redeliver", "--dead"],
        ["sync", "--no-deliver"],
        ["sync"],
        ["sync", "--author", "Nobody"],
        ["db", "upgrade"],
        ["db", "check"],
    ):
        scene.run(*command)
    assert len(receivers["rotating"].delivered) >= 8  # the 500s were retried
    assert len(receivers["legacy"].delivered) >= 8  # the old secret verifies during the overlap
    assert all(r.verified for r in receivers["legacy"].received)
    assert receivers["gone"].received and receivers["broken"].received


def _daemon(scene: Scene) -> None:
    """``syncd run``: a cycle with a change delivered, every HTTP endpoint scraped, SIGTERM."""
    scene.arxiv.amend(NESTPIPE, comment="camera ready")
    log = scene.syncd.workdir / "daemon.log"
    process = _run_daemon(scene.syncd.config, log, scene.daemon_port)
    base = f"http://127.0.0.1:{scene.daemon_port}"

    def healthy() -> bool:
        assert process.poll() is None, log.read_text()
        try:
            return httpx.get(f"{base}/healthz", timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    def revised() -> bool:
        delivered = scene.receivers["rotating"].delivered
        return any(r.json is not None and r.json["type"] == "paper.revised" for r in delivered)

    try:
        eventually(healthy, 20, "/healthz")
        eventually(revised, 20, "the daemon's delivery")
        eventually(lambda: httpx.get(f"{base}/readyz", timeout=5).status_code == 200, 20, "ready")
        for method, path in (
            ("GET", "/metrics"),
            ("GET", "/healthz"),
            ("GET", "/readyz"),
            ("GET", "/nothing-here"),
            ("POST", "/metrics"),
        ):
            response = httpx.request(method, f"{base}{path}", timeout=5)
            scene.transcript.add(f"daemon {method} {path}", f"{response.headers}\n{response.text}")
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0, log.read_text()[-3000:]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    text = log.read_text()
    assert '"event": "daemon_stopped"' in text
    scene.transcript.add("syncd run log", text)
    scene.transcript.add("errors stored in the database", _stored_errors(scene.password_url))


def _unreachable_database(scene: Scene, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing listens on the port: from the file, from SYNCD_DATABASE_URL, and for the daemon."""
    port = free_port()
    unreachable = scene.password_url.replace(":5432/", f":{port}/")
    assert unreachable != scene.password_url
    scene.syncd.database_url = unreachable
    for command in (
        ["papers"],
        ["sync"],
        ["webhooks", "list", "--json"],
        ["events"],
        ["db", "upgrade"],
    ):
        assert scene.run(*command).code == 1
    try:
        scene.run("db", "check")
    except Exception:
        # `db check` lets the driver's error escape as a traceback: that must
        # hold no secret either.
        scene.transcript.add("syncd db check: traceback", traceback.format_exc())
    scene.syncd.database_url = scene.password_url
    monkeypatch.setenv("SYNCD_DATABASE_URL", unreachable)
    assert scene.transcript.outcome("env database: papers", scene.syncd("papers")).code == 1
    log = scene.syncd.workdir / "daemon-no-database.log"
    process = _run_daemon(scene.syncd.config, log, free_port())
    assert process.wait(timeout=30) == 1, log.read_text()
    scene.transcript.add("syncd run log, database unreachable", log.read_text())
    monkeypatch.delenv("SYNCD_DATABASE_URL")


def _bad_configurations(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    """Each bad configuration stops syncd with exit 2."""
    for name, text in _bad_configs(scene.syncd).items():
        path = scene.syncd.workdir / f"bad-{name.replace(' ', '-')}.toml"
        path.write_text(text, encoding="utf-8")
        capsys.readouterr()
        code = main(["--config", str(path), "papers"])
        captured = capsys.readouterr()
        assert code == 2, (name, captured.err)
        scene.transcript.outcome(f"bad config ({name})", Outcome(code, captured.out, captured.err))


def test_no_secret_in_any_output(
    scene: Scene,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Secrets, rotated secrets and the database password appear in no output of any scenario."""
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("SYNCD_LOG_LEVEL", "debug")
    monkeypatch.setenv(SECRET_ENV, f"{OLD_SECRET} {NEW_SECRET}")
    _working_database(scene)
    _daemon(scene)
    _unreachable_database(scene, monkeypatch)
    _bad_configurations(scene, capsys)
    transcript = scene.transcript
    # The records libraries give Python's logging, which syncd never prints.
    transcript.add("stdlib log records", "\n".join(r.getMessage() for r in caplog.records))

    leaks = transcript.leaks(SECRETS)
    assert leaks == [], leaks
    # URL credentials go to the endpoint, and SQL parameters (in the stdlib
    # records, never printed) carry the endpoint's URL; nothing printed may.
    printed = Transcript()
    printed.texts = [(w, t) for w, t in transcript.texts if w != "stdlib log records"]
    leaks = printed.leaks(URL_CREDENTIALS)
    assert leaks == [], leaks
    # The secrets never went over the wire either: only HMACs did.
    for name, receiver in scene.receivers.items():
        wire = "\n".join(f"{r.headers}\n{r.body.decode()}" for r in receiver.received)
        assert [s for s, v in SECRETS.items() if v in wire] == [], name
