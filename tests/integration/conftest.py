"""A syncd under test: the real CLI against a fake arXiv on loopback and a real database."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from syncd.cli import main
from syncd.config import load_settings
from syncd.domain.record import Record
from syncd.logs import configure_logging
from syncd.service.app import App
from syncd.storage.schema import events_table, revisions_table, sync_runs_table
from syncd.web.ops import Readiness
from syncd.web.server import HttpServer
from tests import scenario
from tests.fakearxiv import FakeArxiv, make_record, truncate
from tests.integration.browser import launch_browser, open_page
from tests.scenario import NESTPIPE

SEEDS = [scenario.SEEDS / "000_bae548b29664adf4.txt", scenario.SEEDS / "001_486f742ac3512806.txt"]


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


@dataclass
class Syncd:
    """Runs ``syncd`` commands in-process against one config, and reads the database."""

    arxiv: FakeArxiv
    database_url: str
    workdir: Path
    capsys: pytest.CaptureFixture[str]
    request_interval: float = 0.0
    extra: str = ""
    sections: str = ""
    seeds: tuple[Path, ...] = tuple(SEEDS)
    arxiv_options: str = ""  # more keys of the [arxiv] table
    author_table: bool = True  # the seeded author's [[authors]] table (with ``extra``)
    # Short, and within backoff_max: a throttle is waited out in place, as transient faults are.
    throttle_cooldown: float = 0.05
    throttle_cooldown_max: float = 2.0

    @property
    def config(self) -> Path:
        text = f"""
[arxiv]
api_url = "{self.arxiv.url}"
author_feed_url = "{self.arxiv.author_feed_url}"
request_interval = {self.request_interval}
page_size = 5
timeout = 0.5
max_retries = 2
backoff_base = 0.01
backoff_max = 2.0
throttle_cooldown = {self.throttle_cooldown}
throttle_cooldown_max = {self.throttle_cooldown_max}
{self.arxiv_options}

[database]
url = "{self.database_url}"
{self.key_file_line}

[log]
format = "json"

{self.authors_table}
{self.sections}
"""
        path = self.workdir / "syncd.toml"
        path.write_text(text, encoding="utf-8")
        return path

    @property
    def authors_table(self) -> str:
        """The seeded author's table, or nothing: every author is then added at run time."""
        if not self.author_table:
            return ""
        seeds = ", ".join(f'"{p}"' for p in self.seeds)
        return f'[[authors]]\nname = "{scenario.AUTHOR}"\nseeds = [{seeds}]\n{self.extra}'

    @property
    def key_file_line(self) -> str:
        """PostgreSQL has no file to keep the key beside: it is configured (SQLite's default)."""
        if self.database_url.startswith("sqlite"):
            return ""
        return f'key_file = "{self.workdir / "url.key"}"'

    def __call__(self, *args: str) -> Outcome:
        self.capsys.readouterr()
        code = main(["--config", str(self.config), *args])
        captured = self.capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    def json(self, *args: str) -> Any:
        outcome = self(*args, "--json")
        assert outcome.code == 0, outcome.err
        return json.loads(outcome.out)

    def papers(self) -> dict[str, dict[str, Any]]:
        return {p["key"]: p for p in self.json("papers")}

    def counts(self) -> dict[str, int]:
        """How many revisions, events and sync runs the database holds."""
        engine = sa.create_engine(self.database_url)
        try:
            with engine.connect() as conn:
                return {
                    name: conn.scalar(sa.select(sa.func.count()).select_from(table)) or 0
                    for name, table in (
                        ("revisions", revisions_table),
                        ("events", events_table),
                        ("runs", sync_runs_table),
                    )
                }
        finally:
            engine.dispose()

    def last_run_status(self) -> str:
        engine = sa.create_engine(self.database_url)
        try:
            with engine.connect() as conn:
                return str(
                    conn.scalar(
                        sa.select(sync_runs_table.c.status).order_by(sync_runs_table.c.id.desc())
                    )
                )
        finally:
            engine.dispose()


@pytest.fixture
def arxiv() -> Iterator[FakeArxiv]:
    """A fake arXiv serving the seeded author's papers as DESIGN.md describes them."""
    with FakeArxiv() as fake:
        for record in scenario.upstream_versions():
            fake.publish(record)
        yield fake


@pytest.fixture
def syncd(
    arxiv: FakeArxiv, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Syncd:
    """syncd configured for the seeded author against the fake arXiv, on each database."""
    return Syncd(arxiv=arxiv, database_url=database_url, workdir=tmp_path, capsys=capsys)


# NestPipe's v2 as the site fixtures publish it: three title words changed, a
# sentence added to the abstract, the first two authors swapped.
NESTPIPE_V2_TITLE = (
    "NestPipe: Scaling Recommendation Training to 1,500+ Accelerators with Nested Pipelining"
)
NESTPIPE_V2_SENTENCE = "Code and traces are public."
# A paper of the author whose title and abstract hold markup that would run in a page.
HOSTILE_ID = "2601.00666"
HOSTILE_TITLE = "Owned: <script>window.pwned = 'title'</script> a study"
HOSTILE_ABSTRACT = (
    "We study <script>window.pwned = 'abstract'</script> and "
    "<img src=x onerror=\"window.pwned = 'img'\"> injection."
)


def revise_nestpipe(arxiv: FakeArxiv, **fields: Any) -> None:
    """Publish NestPipe's v2: a new title, a sentence more, two authors swapped (or ``fields``)."""
    (v1,) = [r for r in scenario.upstream_versions() if r.arxiv_id == NESTPIPE]
    authors = (v1.authors[1], v1.authors[0], *v1.authors[2:])
    changes: dict[str, Any] = {
        "version": 2,
        "updated": None,
        "title": NESTPIPE_V2_TITLE,
        "abstract": f"{v1.abstract} {NESTPIPE_V2_SENTENCE}",
        "authors": authors,
    }
    arxiv.publish(replace(v1, **(changes | fields)))


@dataclass
class Site:
    """syncd's HTTP surface over a database the ``syncd`` fixture filled."""

    url: str
    http: httpx.Client
    syncd: Syncd

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.http.get(path, **kwargs)


@contextmanager
def serving(syncd: Syncd) -> Iterator[Site]:
    """An HttpServer with the read surface over ``syncd``'s configuration, on a free port.

    Its own lines (starting, stopping) go nowhere: ``syncd(...)`` points structlog
    at pytest's capture of stderr, which may be closed by the time it stops, and
    stdout is where the CLI's JSON is read from.
    """
    app = App.open(load_settings(syncd.config))
    configure_logging("warning", "json", io.StringIO())
    try:
        ready = Readiness(True, {"database": "ok"})
        with (
            HttpServer("127.0.0.1", 0, ready=lambda: ready, app=app) as server,
            httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=10.0) as http,
        ):
            yield Site(f"http://127.0.0.1:{server.port}", http, syncd)
            configure_logging("warning", "json", io.StringIO())
    finally:
        app.close()


def sync_ok(syncd: Syncd) -> None:
    """One ``syncd sync`` that must succeed."""
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err


def harvest_stopped_on_its_second_page(syncd: Syncd) -> None:
    """``[harvest] enabled`` on the fake's OAI-PMH endpoint; a sync, a complete harvest of
    the fake's day, then one whose second page comes cut: its first page stays applied."""
    syncd.sections += f'\n[harvest]\nenabled = true\nurl = "{syncd.arxiv.oai_url}"\n'
    sync_ok(syncd)
    day = syncd.arxiv.oai.today.isoformat()
    outcome = syncd("harvest", "--from", day)
    assert outcome.code == 0, outcome.err
    syncd.arxiv.inject(replace(truncate(0.7), when=lambda params: "resumptionToken" in params))
    assert syncd("harvest", "--from", day).code == 1


@pytest.fixture
def site(syncd: Syncd, arxiv: FakeArxiv) -> Iterator[Site]:
    """Served after a first sync and NestPipe's v2 (title, abstract, authors changed)."""
    sync_ok(syncd)
    revise_nestpipe(arxiv)
    sync_ok(syncd)
    with serving(syncd) as running:
        yield running


def hostile_paper(arxiv_id: str = HOSTILE_ID) -> Record:
    """A paper of the author whose title and abstract hold markup that would run."""
    return make_record(
        arxiv_id,
        title=HOSTILE_TITLE,
        abstract=HOSTILE_ABSTRACT,
        authors=("Zhida Jiang", "Zhaolong <b>Xing</b>"),
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium under Playwright, one per test module."""
    yield from launch_browser()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page that fails the test on any script error or dialog."""
    yield from open_page(browser)
