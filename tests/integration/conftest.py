"""A syncd under test: the real CLI against a fake arXiv on loopback and a real database."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from syncd.cli import main
from syncd.storage.schema import events_table, revisions_table, sync_runs_table
from tests import scenario
from tests.fakearxiv import FakeArxiv

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

    @property
    def config(self) -> Path:
        seeds = ", ".join(f'"{p}"' for p in self.seeds)
        text = f"""
[arxiv]
api_url = "{self.arxiv.url}"
request_interval = {self.request_interval}
page_size = 5
timeout = 0.5
max_retries = 2
backoff_base = 0.01
backoff_max = 2.0

[database]
url = "{self.database_url}"

[log]
format = "json"

[[authors]]
name = "{scenario.AUTHOR}"
seeds = [{seeds}]
{self.extra}
{self.sections}
"""
        path = self.workdir / "syncd.toml"
        path.write_text(text, encoding="utf-8")
        return path

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
