"""Short CI versions of the reliability runs on SQLite and PostgreSQL (full: ``make reliability``).

Also two reproductions of bugs the runs found (a totalResults lowered to a
page boundary; an empty answer to the earlier-versions fetch), now fixed.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import structlog

from syncd.cli import main as syncd_main
from tests import fakearxiv as fa
from tests import scenario
from tests.conftest import BOTH_DATABASES, database_for
from tests.helpers import WEBHOOK_SECRET
from tests.receiver import Receiver
from tests.reliability.harness import format_table, scratch_database, stock, write_config
from tests.reliability.soak import FAULTS, HOSTILE, run_soak
from tests.reliability.torture import POINTS, run_torture

pytestmark = pytest.mark.slow


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: a SIGKILL lands between each dialect's own commits and locks, and
    CI runs these short versions of `make reliability` on both."""
    return database_for(request)


@contextlib.contextmanager
def _reference_database(database_url: str, directory: Path) -> Iterator[str]:
    kind = sa.engine.make_url(database_url).get_backend_name()
    with scratch_database(kind, directory, "reference") as url:
        yield url


def _report(result: dict[str, Any], directory: Path) -> str:
    (directory / "result.json").write_text(json.dumps(result, indent=2, default=str))
    return format_table([result]) + f"\nfull result: {directory / 'result.json'}"


@pytest.mark.timeout(170)
def test_torture_kills_lose_and_double_nothing(database_url: str, tmp_path: Path) -> None:
    """Twelve SIGKILLs of sync and run, over every fault point, lose, double and invent nothing."""
    with _reference_database(database_url, tmp_path) as reference_url:
        result = run_torture(
            database_url=database_url,
            reference_url=reference_url,
            workdir=tmp_path,
            kills=12,
            seed=7,
            budget=110,
        )
    report = _report(result, tmp_path)
    row = result["row"]
    assert result["kills"] >= 12, report
    assert all(result["kills_by_point"][p] >= 1 for p in POINTS), report
    assert set(result["kills_by_command"]) == {"sync", "run"}, report
    assert (row["lost"], row["duplicated"], row["false"]) == (0, 0, 0), report
    assert row["delivered"] == row["expected"] > 0, report
    assert all(0 < t["received"] == t["digests"] for t in result["digests"]), report
    assert not result["integrity_problems_after_kills"], report
    assert not result["integrity_problems_final"], report
    assert not result["revision_diffs"] and not result["paper_diffs"], report
    assert result["ok"], report


@pytest.mark.timeout(120)
def test_soak_under_upstream_chaos_reports_no_false_or_missed_change(
    database_url: str, tmp_path: Path
) -> None:
    """Sixty cycles with two fifths of requests faulted publish just the reference's events, spaced.

    Two fifths (the full run faults one fifth) so that sixty cycles' 140-odd
    requests take every one of the 22 kinds at least twice; the hostile
    entries among them (a lower version, markup, a repeated title, impossible
    ids and versions) each fail their cycle.
    """
    with _reference_database(database_url, tmp_path) as reference_url:
        result = run_soak(
            database_url=database_url,
            reference_url=reference_url,
            workdir=tmp_path,
            cycles=60,
            rate=0.4,
            seed=7,
        )
    report = _report(result, tmp_path)
    row = result["row"]
    assert (row["lost"], row["duplicated"], row["false"]) == (0, 0, 0), report
    assert row["delivered"] == row["expected"] > 0, report
    assert all(0 < t["received"] == t["digests"] for t in result["digests"]), report
    assert all(result["faults_by_kind"][kind] >= 1 for kind in FAULTS), report
    assert result["failed_cycles"] > 0, report
    assert not result["spacing_violations"], report
    assert result["min_turn_gap"] >= 0.05, report
    assert not result["retry_after_violations"], report
    assert not result["hostile_answers_trusted"], report
    assert all(result["hostile_answers"][kind]["refused"] >= 1 for kind in HOSTILE), report
    assert not result["revision_diffs"] and not result["paper_diffs"], report
    assert not result["integrity_problems"], report
    assert result["ok"], report


# -- reproductions of bugs found by the runs (see docs/RELIABILITY.md) ----------------------


def _sync(config: Path, *args: str) -> int:
    try:
        return syncd_main(["--config", str(config), *args])
    finally:
        structlog.reset_defaults()


def _events(config: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert _sync(config, "events", "--json") == 0
    events: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    return events


@contextlib.contextmanager
def _syncd(tmp_path: Path, removal_after: int = 3) -> Iterator[tuple[fa.FakeArxiv, Path]]:
    with fa.FakeArxiv() as fake, Receiver([WEBHOOK_SECRET]) as receiver:
        stock(fake)
        config = write_config(
            tmp_path / "syncd.toml",
            api_url=fake.url,
            database_url=f"sqlite:///{tmp_path / 'syncd.sqlite3'}",
            hook_url=receiver.url,
            sections={
                "arxiv": {"request_interval": 0.0, "page_size": 5, "max_retries": 0},
                "sync": {"removal_after": removal_after},
                "delivery": {"sync_wait": 0},
            },
        )
        assert _sync(config, "sync", "--no-deliver") == 0
        yield fake, config


def test_total_results_lie_at_a_page_boundary_removes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A first page claiming 5 results when there are 7 must not make the other 2 absent."""
    with _syncd(tmp_path, removal_after=1) as (fake, config):
        before = len(_events(config, capsys))
        fake.inject(fa.total_lie(-2))
        _sync(config, "sync", "--no-deliver")
        new = _events(config, capsys)[before:]
    assert [(e["type"], e["paper"]["key"]) for e in new] == []


def test_empty_earlier_versions_answer_never_adds_a_seed_paper(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty answer to the earlier-versions fetch never turns a seed paper into paper.added."""
    with _syncd(tmp_path) as (fake, config):
        before = len(_events(config, capsys))
        first = fa.make_record(
            "2607.01234",
            title=scenario.seed_title("CompileMask"),
            abstract=scenario.seed_abstract("CompileMask"),
            authors=(scenario.AUTHOR, "Zhaolong Xing"),
            primary_category="cs.DC",
            categories=("cs.DC",),
        )
        fake.publish(first)
        fake.publish(
            replace(
                first,
                version=2,
                updated=None,
                title="MaskCompiler: fast attention masks",
                abstract="A rewritten abstract about compilers for attention masks.",
            )
        )
        fake.inject(fa.empty_result(when=lambda params: bool(params.get("id_list"))))
        _sync(config, "sync", "--no-deliver")
        fake.clear_faults()
        _sync(config, "sync", "--no-deliver")
        new = _events(config, capsys)[before:]
    assert [e["type"] for e in new if e["paper"]["arxiv_id"] == "2607.01234"] == ["paper.linked"]
