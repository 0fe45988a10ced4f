"""No secret leaves syncd, and none can be recovered from what it keeps at rest.

Leaks: every output of the suite's scenarios is grepped for secrets.

The secrets: a webhook secret being rotated out, the one rotated in (both as
``whsec_...`` and as their bare base64), a PostgreSQL password in the database
URL, and credentials in webhook URLs.  The scenarios run the real CLI
in-process and ``syncd run`` as a subprocess, on PostgreSQL, logging at debug
level: seeding, syncing with deliveries (a 500 then success, a 410, dead
letters), the read commands in both formats, the webhooks commands, an
unreachable database, bad configurations, and the daemon's HTTP endpoints.
Everything printed, logged (structlog and the stdlib records libraries make),
served, or stored as a delivery error is checked.

At rest: the database files and the key file are owner-only, and the URL
hashes the database keeps of unsigned targets are keyed with a key it does
not hold, one per installation.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import signal
import stat
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
from syncd.config import load_settings
from syncd.service.app import App
from syncd.storage.migrate import upgrade
from syncd.storage.schema import deliveries_table, endpoints_table, sync_runs_table
from tests import scenario
from tests.chatreceiver import SlackReceiver
from tests.conftest import BOTH_DATABASES, PostgresDatabases, database_for
from tests.fakearxiv import FakeArxiv
from tests.helpers import StartReceiver, eventually, free_port
from tests.integration.conftest import Outcome, Syncd
from tests.receiver import Receiver
from tests.scenario import NESTPIPE


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: what is kept at rest differs: SQLite keeps the URL key beside its file,
    PostgreSQL takes a configured key file, and its URL carries the password that must not leak."""
    return database_for(request)


OLD_SECRET = "whsec_" + base64.b64encode(b"rotating-out secret: do not leak").decode()
NEW_SECRET = "whsec_" + base64.b64encode(b"rotating-in secret: never leak!!").decode()
DB_PASSWORD = "S3cretPa55-db-4f1c9e"
URL_TOKEN = "hook-t0ken-7a2b4c9d"
URL_PASSWORD = "hook-pa55-5e8d"
SECRET_ENV = "ROTATED_HOOK_SECRETS"

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
def password_url(postgres_databases: PostgresDatabases) -> Iterator[str]:
    """An empty PostgreSQL database of its own, as a URL with a password (trust auth ignores it)."""
    name = postgres_databases.create()
    url = sa.engine.make_url(postgres_databases.url(name))
    yield url.set(drivername="postgresql", password=DB_PASSWORD).render_as_string(
        hide_password=False
    )
    postgres_databases.drop(name)


@pytest.fixture
def receivers(receiver_for: StartReceiver) -> dict[str, Receiver]:
    """One receiver per endpoint: mid-rotation on the new and on the old secret, gone, broken."""
    return {
        "rotating": receiver_for(NEW_SECRET),
        "legacy": receiver_for(OLD_SECRET),
        "gone": receiver_for(OLD_SECRET),
        "broken": receiver_for(OLD_SECRET),
    }


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


@pytest.mark.slow
@pytest.mark.postgres
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


# ---- at rest

# The key every installation used for unsigned URL hashes before there was a key file.
CONSTANT_KEY = b"syncd unsigned endpoint url"
SLACK_URL = "http://127.0.0.1:9/services/T0/B0/sh0rt"
NOTIFY_URL = "ntfy://127.0.0.1:9/arxiv-lab"


def _unsigned_targets(syncd: Syncd, slack_url: str = SLACK_URL) -> None:
    syncd.sections = f"""
[delivery]
retry_schedule = [0.05, 0.05, 0.05]
sync_wait = 10
poll_interval = 0.05

[[webhooks]]
name = "chat"
url = "{slack_url}"
format = "slack"
timeout = 2

[[notify]]
name = "lab"
urls = ["{NOTIFY_URL}"]
"""


def _register(syncd: Syncd) -> dict[str, str]:
    """Register the configured endpoints as a delivering command does; their stored hashes."""
    app = App.open(load_settings(syncd.config))
    try:
        upgrade(app.storage.engine)
        app.register_endpoints()
    finally:
        app.close()
    return {name: row["url_hash"] for name, row in _endpoint_rows(syncd).items()}


def _endpoint_rows(syncd: Syncd) -> dict[str, dict[str, object]]:
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.select(endpoints_table)).mappings()
            return {row["name"]: dict(row) for row in rows}
    finally:
        engine.dispose()


def _disable(syncd: Syncd, name: str) -> None:
    """What a 410 does to an endpoint."""
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                endpoints_table.update()
                .where(endpoints_table.c.name == name)
                .values(disabled_at=sa.func.now(), disabled_reason="HTTP 410 Gone")
            )
    finally:
        engine.dispose()


def _key_file(syncd: Syncd) -> Path:
    key_path = load_settings(syncd.config).database.key_path
    assert key_path is not None
    return key_path


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """The umask most systems start processes with: new files 0644 unless asked otherwise."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("loose_umask")
def test_a_fresh_data_folder_is_owner_only(
    arxiv: FakeArxiv, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After `syncd seed` and `syncd sync` on a fresh data folder the database, its WAL and
    shared memory, and the key file beside it are 0600, while syncd has them open too."""
    data = tmp_path / "data"
    syncd = Syncd(arxiv, f"sqlite:///{data}/syncd.sqlite3", tmp_path, capsys)
    _unsigned_targets(syncd)
    database, key = data / "syncd.sqlite3", data / "syncd.sqlite3.key"
    assert syncd("seed").code == 0
    assert {p.name: _mode(p) for p in (database, key)} == {p.name: 0o600 for p in (database, key)}
    assert syncd("sync").code == 0
    app = App.open(load_settings(syncd.config))
    try:
        app.register_endpoints()  # a write: the pooled connection keeps -wal and -shm
        files = [database, Path(f"{database}-wal"), Path(f"{database}-shm"), key]
        assert {p.name: _mode(p) for p in files} == {p.name: 0o600 for p in files}
    finally:
        app.close()


@pytest.mark.usefixtures("loose_umask")
def test_a_world_readable_database_from_before_is_tightened(
    arxiv: FakeArxiv, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A database an earlier version made 0644 is 0600 after the next command."""
    database = tmp_path / "syncd.sqlite3"
    syncd = Syncd(arxiv, f"sqlite:///{database}", tmp_path, capsys)
    assert syncd("seed").code == 0
    database.chmod(0o644)
    assert syncd("papers").code == 0
    assert _mode(database) == 0o600


def test_unsigned_url_hashes_are_keyed_per_installation(
    syncd: Syncd, arxiv: FakeArxiv, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hashes of a slack and an Apprise URL are not HMACs under a key from the source,
    and two installations (two key files) store different ones."""
    _unsigned_targets(syncd)
    first = _register(syncd)
    assert first["chat"] != hmac.new(CONSTANT_KEY, SLACK_URL.encode(), hashlib.sha256).hexdigest()
    assert first["lab#1"] != hmac.new(CONSTANT_KEY, NOTIFY_URL.encode(), hashlib.sha256).hexdigest()
    other = tmp_path / "other"
    other.mkdir()
    database_url = syncd.database_url
    if database_url.startswith("sqlite"):
        database_url = f"sqlite:///{other}/syncd.sqlite3"
    elsewhere = Syncd(arxiv, database_url, other, capsys)
    _unsigned_targets(elsewhere)
    second = _register(elsewhere)
    assert _key_file(elsewhere) != _key_file(syncd)
    assert second["chat"] != first["chat"] and second["lab#1"] != first["lab#1"]


def test_a_restart_with_the_same_key_keeps_the_hashes(syncd: Syncd) -> None:
    """Same key, same URLs: the same hashes, and an endpoint a 410 disabled stays disabled."""
    _unsigned_targets(syncd)
    first = _register(syncd)
    _disable(syncd, "chat")
    assert _register(syncd) == first
    assert _endpoint_rows(syncd)["chat"]["disabled_at"] is not None


def test_a_lost_key_file_is_made_again_and_reads_as_changed_urls(syncd: Syncd) -> None:
    """Without its key file syncd makes a new one (0600): every unsigned hash changes, which
    is what a changed URL does, re-enabling a disabled endpoint, and nothing else."""
    _unsigned_targets(syncd)
    first = _register(syncd)
    _disable(syncd, "chat")
    key = _key_file(syncd)
    key.unlink()
    second = _register(syncd)
    assert _mode(key) == 0o600
    assert second["chat"] != first["chat"] and second["lab#1"] != first["lab#1"]
    assert _endpoint_rows(syncd)["chat"]["disabled_at"] is None


def test_an_upgrade_from_the_constant_key_keeps_pending_deliveries(syncd: Syncd) -> None:
    """Hashes an earlier version stored under the constant key read as changed URLs: the
    endpoint keeps its deliveries, and the one pending is delivered after the upgrade."""
    with SlackReceiver() as slack:
        _unsigned_targets(syncd, slack.url)
        syncd.sections = syncd.sections.replace("sync_wait = 10", "sync_wait = 0")
        slack.go_down()
        assert syncd("sync").code == 0
        (endpoint,) = [e for e in syncd.json("webhooks", "list") if e["name"] == "chat"]
        assert endpoint["pending"] == 1
        engine = sa.create_engine(syncd.database_url)
        try:
            with engine.begin() as conn:
                conn.execute(
                    endpoints_table.update()
                    .where(endpoints_table.c.name == "chat")
                    .values(
                        url_hash=hmac.new(CONSTANT_KEY, slack.url.encode(), "sha256").hexdigest()
                    )
                )
        finally:
            engine.dispose()
        slack.come_up()
        syncd.sections = syncd.sections.replace("sync_wait = 0", "sync_wait = 10")
        assert syncd("sync").code == 0
        (endpoint,) = [e for e in syncd.json("webhooks", "list") if e["name"] == "chat"]
        assert (endpoint["pending"], endpoint["delivered"]) == (0, 1)
        (message,) = slack.received
        assert message.status_sent == 200


def test_postgresql_without_a_key_file_names_the_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On PostgreSQL there is no file to keep the key beside: a chat target without
    [database] key_file exits 2 naming it, before connecting."""
    config = tmp_path / "syncd.toml"
    config.write_text(
        '[database]\nurl = "postgresql://syncd@127.0.0.1:1/none"\n'
        '[[authors]]\nname = "X"\n'
        f'[[webhooks]]\nname = "chat"\nurl = "{SLACK_URL}"\nformat = "slack"\n'
    )
    assert main(["--config", str(config), "papers"]) == 2
    assert "database.key_file" in capsys.readouterr().err


def test_a_short_key_file_is_refused(syncd: Syncd, capsys: pytest.CaptureFixture[str]) -> None:
    """A key file holding a guessable key stops syncd with exit 2 naming it."""
    _unsigned_targets(syncd)
    key = _key_file(syncd)
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_text("hunter2\n")
    outcome = syncd("papers")
    assert outcome.code == 2
    assert str(key) in outcome.err and "hunter2" not in outcome.err
