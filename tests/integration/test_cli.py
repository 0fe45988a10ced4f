"""The command line as users meet it: entry points, exit codes, tables, logs."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from syncd.cli import GC_THRESHOLDS, main
from syncd.cli.table import display_width
from tests import scenario
from tests.helpers import ROOT
from tests.integration.conftest import Syncd, revise_nestpipe


def _run(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "syncd", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=60,
        check=False,
    )


class TestEntryPoints:
    def test_python_dash_m(self) -> None:
        """python -m syncd answers --version."""
        result = _run("--version")
        assert result.returncode == 0
        assert result.stdout.startswith("syncd ")

    def test_console_script(self) -> None:
        """The installed syncd script answers --help with the commands."""
        script = Path(sys.executable).parent / "syncd"
        result = subprocess.run(
            [str(script), "--help"], capture_output=True, text=True, check=False, timeout=60
        )
        assert result.returncode == 0
        for command in ("seed", "sync", "papers", "history", "events"):
            assert command in result.stdout

    def test_usage_error_exits_2(self) -> None:
        """An unknown command is a usage error."""
        assert _run("frobnicate").returncode == 2

    @pytest.mark.parametrize("text", ["2026-07-01T00:00", "20260701", "2026-13-01"])
    def test_harvest_from_is_a_day_never_a_time(self, text: str) -> None:
        """OAI-PMH harvests by day: ``--from`` with a time, or another shape, exits 2."""
        result = _run("harvest", "--from", text)
        assert result.returncode == 2
        assert "not a day (YYYY-MM-DD)" in result.stderr

    def test_bad_config_exits_2_naming_the_key(self, tmp_path: Path) -> None:
        """A config with a bad value exits 2 and names the key."""
        config = tmp_path / "bad.toml"
        config.write_text('[arxiv]\ntimeout = "soon"\n[[authors]]\nname = "X"\n')
        result = _run("--config", str(config), "papers")
        assert result.returncode == 2
        assert "arxiv.timeout" in result.stderr

    def test_bad_orcid_checksum_exits_2_naming_the_key(self, tmp_path: Path) -> None:
        """An ORCID iD whose ISO 7064 check digit is wrong exits 2 at load, naming the key."""
        config = tmp_path / "bad.toml"
        config.write_text('[[authors]]\nname = "Ke Zhang"\norcid = "0000-0002-7970-7856"\n')
        result = _run("--config", str(config), "papers")
        assert result.returncode == 2
        assert "authors[0].orcid" in result.stderr
        assert "check digit" in result.stderr

    @pytest.mark.parametrize(
        ("variable", "value", "key"),
        [
            ("SYNCD_DELIVERY_RETRY_SCHEDULE", "5,10", "delivery.retry_schedule"),
            ("SYNCD_DELIVERY_ALLOW_DESTINATIONS", "10.0.0.0/8", "delivery.allow_destinations"),
            ("SYNCD_DELIVERY", "workers=2", "delivery"),
            ("SYNCD_WEBHOOKS", "[{", "webhooks"),
            ("SYNCD_NOTIFY", "{", "notify"),
            ("SYNCD_AUTHORS", "Zhida Jiang", "authors"),
        ],
    )
    def test_malformed_structured_environment_override_exits_2_naming_it(
        self, tmp_path: Path, variable: str, value: str, key: str
    ) -> None:
        """A list, table or array of tables from the environment that is not JSON is a
        configuration error naming the key and the variable, not a traceback."""
        config = tmp_path / "syncd.toml"
        config.write_text('[[authors]]\nname = "X"\n')
        result = _run("--config", str(config), "papers", env={variable: value})
        assert (result.returncode, result.stdout) == (2, "")
        assert "Traceback" not in result.stderr
        assert key in result.stderr
        assert variable in result.stderr

    def test_unreachable_database_exits_1_without_the_password(self, tmp_path: Path) -> None:
        """A database that cannot be reached is a runtime failure, and the password stays secret."""
        config = tmp_path / "pg.toml"
        config.write_text(
            '[database]\nurl = "postgresql://syncd:hunter2secret@127.0.0.1:1/none"\n'
            '[[authors]]\nname = "X"\n'
        )
        result = _run("--config", str(config), "papers")
        assert result.returncode == 1
        assert "database error" in result.stderr
        assert "hunter2secret" not in result.stderr + result.stdout

    def test_uncreatable_sqlite_folder_exits_1_with_one_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A SQLite folder that cannot be made (a file is in the way) exits 1 with one line."""
        (tmp_path / "plain").write_text("not a folder", encoding="utf-8")
        folder = tmp_path / "plain" / "data"
        config = tmp_path / "syncd.toml"
        config.write_text(
            f'[database]\nurl = "sqlite:///{folder}/syncd.sqlite3"\n[[authors]]\nname = "X"\n'
        )
        assert main(["--config", str(config), "papers"]) == 1
        captured = capsys.readouterr()
        assert captured.err == (
            f"syncd: error: cannot create the database folder {folder}: Not a directory\n"
        )


class TestPipes:
    @pytest.mark.parametrize("args", [("papers", "--json"), ("papers",), ("events", "--json")])
    def test_reader_gone_ends_quietly_with_141(self, syncd: Syncd, args: tuple[str, ...]) -> None:
        """Output into a pipe nobody reads ends with status 141 and nothing on stderr."""
        assert syncd("seed").code == 0
        # The reader is gone before syncd starts, as `| head -c 10` is by the time
        # its tenth byte arrives, but without the race: the first write fails.
        reader, writer = os.pipe()
        os.close(reader)
        try:
            result = subprocess.run(
                [sys.executable, "-m", "syncd", "--config", str(syncd.config), *args],
                stdout=writer,
                stderr=subprocess.PIPE,
                text=True,
                cwd=ROOT,
                timeout=60,
                check=False,
            )
        finally:
            os.close(writer)
        assert (result.returncode, result.stderr) == (141, "")


class TestCommands:
    def test_unknown_paper_and_event_exit_2(self, syncd: Syncd) -> None:
        """Naming a paper or event that does not exist is a usage error."""
        syncd("seed")
        missing = syncd("history", "2999.99999")
        assert missing.code == 2
        assert "2999.99999" in missing.err
        assert syncd("events", "--since", "evt_nope").code == 2
        assert syncd("sync", "--author", "Nobody").code == 2

    def test_a_config_without_authors_works_until_one_is_added(self, syncd: Syncd) -> None:
        """No [[authors]] table: the commands run, `sync` says nobody is followed yet (exit 0),
        and syncs an author once one is added at run time."""
        syncd.author_table = False
        assert syncd("papers").code == 0
        idle = syncd("sync")
        assert (idle.code, idle.out) == (0, "")
        assert "no author is followed yet: add one with `syncd authors add NAME`" in idle.err
        assert syncd("authors", "add", scenario.AUTHOR).code == 0
        synced = syncd("sync")
        assert synced.code == 0, synced.err
        assert synced.out.startswith(f"{scenario.AUTHOR}: ok, 1 event")  # author.added

    def test_commands_run_with_the_gc_thresholds(self, syncd: Syncd) -> None:
        """Every command sets GC_THRESHOLDS; CPython's defaults cost a busy cycle 15-20 %."""
        gc.set_threshold(700, 10, 10)
        assert syncd("papers").code == 0
        assert gc.get_threshold() == GC_THRESHOLDS

    def test_human_tables(self, syncd: Syncd) -> None:
        """papers, history and events print readable tables with a header."""
        assert syncd("sync").code == 0
        papers = syncd("papers").out.splitlines()
        assert papers[0].split() == ["KEY", "ARXIV", "V", "STATUS", "AUTHORS", "TITLE"]
        assert len(papers) == 10
        assert any("unlinked" in line for line in papers)
        history = syncd("history", "2606.03328").out.splitlines()
        assert history[0].startswith("rethinking-calibration-for-high-sparsity-llm  2606.03328")
        assert [line.split()[0] for line in history[2:]] == ["1", "2", "3"]
        events = syncd("events").out.splitlines()
        assert events[0].split()[:4] == ["SEQ", "ID", "CREATED", "(UTC)"]
        assert len(events) == 8

    def test_papers_shows_keys_whole(self, syncd: Syncd) -> None:
        """Every key in the papers table is whole: copied from it, history takes it."""
        assert syncd("sync").code == 0
        keys = {p["key"] for p in syncd.json("papers")}
        shown = {line.split()[0] for line in syncd("papers").out.splitlines()[1:]}
        assert shown == keys
        longest = max(keys, key=len)
        assert len(longest) > 40
        assert syncd("history", longest).code == 0

    def test_titles_shrink_to_fit_a_terminal(
        self, syncd: Syncd, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """On a narrow terminal the title column shrinks; keys and ids stay whole."""
        assert syncd("sync").code == 0
        monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
        monkeypatch.setenv("COLUMNS", "130")
        lines = syncd("papers").out.splitlines()
        keys = {p["key"] for p in syncd.json("papers")}
        assert {line.split()[0] for line in lines[1:]} == keys
        assert max(len(line) for line in lines) <= 130
        assert any(line.endswith("…") for line in lines)

    def test_json_logs_bind_the_cycle(self, syncd: Syncd) -> None:
        """Every request and change log line is JSON bound to the cycle and author, or backfill."""
        outcome = syncd("sync")
        lines = [json.loads(line) for line in outcome.err.splitlines()]
        requests = [line for line in lines if line["event"] == "arxiv_request"]
        changes = [line for line in lines if line["event"] == "paper_changed"]
        *searches, backfill = requests
        assert len(searches) == 2
        assert len(changes) == 7
        for line in searches + changes:
            assert line["cycle"] == 1
            assert line["author"] == "Zhida Jiang"
        assert all(line["paper"] for line in changes)
        # FlexMARL and OxygenREC were linked at v2: their v1s follow the cycle, for every author.
        assert backfill["backfill"] is True
        assert "cycle" not in backfill

    @pytest.mark.parametrize("command", ["papers", "events"])
    def test_json_is_one_array(self, syncd: Syncd, command: str) -> None:
        """--json prints exactly one JSON array."""
        syncd("sync")
        assert isinstance(json.loads(syncd(command, "--json").out), list)


class TestTablesFitTheTerminal:
    """`papers`, `events` and `history` at COLUMNS=60, 80 and 200 (one layout,
    ``syncd.cli.table``): no line wider, every id whole, titles cut with "…"."""

    @pytest.fixture
    def synced(self, syncd: Syncd) -> Syncd:
        assert syncd("sync").code == 0
        return syncd

    @staticmethod
    def _at(syncd: Syncd, monkeypatch: pytest.MonkeyPatch, width: int, *args: str) -> list[str]:
        monkeypatch.setenv("COLUMNS", str(width))
        outcome = syncd(*args)
        assert outcome.code == 0, outcome.err
        return outcome.out.splitlines()

    @pytest.mark.parametrize("width", [60, 80, 200])
    def test_papers(self, synced: Syncd, monkeypatch: pytest.MonkeyPatch, width: int) -> None:
        """Arxiv ids whole, titles shrink with "…"; keys go at 60 and 80, stay whole at 200."""
        papers = synced.json("papers")
        lines = self._at(synced, monkeypatch, width, "papers")
        assert max(display_width(line) for line in lines) <= width
        assert len(lines) == len(papers) + 1
        for paper, line in zip(papers, lines[1:], strict=True):
            assert paper["arxiv_id"] is None or f" {paper['arxiv_id']} " in f" {line}"
            assert _shows_title(line, paper["title"])
        assert ("KEY" in lines[0].split()) is (width == 200)
        if width == 200:
            assert {line.split()[0] for line in lines[1:]} == {p["key"] for p in papers}
        else:
            assert any(line.endswith("…") for line in lines)

    @pytest.mark.parametrize(
        ("width", "headers"),
        [
            (60, ["SEQ", "TYPE", "PAPER", "TITLE"]),
            (80, ["SEQ", "TYPE", "PAPER", "KINDS", "TITLE"]),
            (120, ["SEQ", "ID", "TYPE", "PAPER", "KINDS", "TITLE"]),
            (200, ["SEQ", "ID", "CREATED", "(UTC)", "TYPE", "PAPER", "KINDS", "TITLE"]),
        ],
    )
    def test_events(
        self, synced: Syncd, monkeypatch: pytest.MonkeyPatch, width: int, headers: list[str]
    ) -> None:
        """Seqs and papers whole, each event's title shown (cut with "…" when long); the
        creation date goes first, then the long id (SEQ names the event too), then the kinds,
        so at 80 columns every event says what happened."""
        arxiv = synced.arxiv
        revise_nestpipe(arxiv)
        assert synced("sync").code == 0
        events = synced.json("events")
        lines = self._at(synced, monkeypatch, width, "events")
        assert lines[0].split() == headers
        assert max(display_width(line) for line in lines) <= width
        for event, line in zip(events, lines[1:], strict=True):
            cells = line.split()
            assert cells[0] == str(event["seq"])
            assert ("ID" in headers) is (cells[1] == event["id"])
            assert f"  {event['type']}  " in line
            paper = event["paper"]
            assert f" {paper['arxiv_id'] or paper['key']} " in line
            assert _shows_title(line, event["record"]["title"] if event["record"] else "-")
        if "KINDS" in headers:
            assert "  version,title" in lines[-1]  # NestPipe's v2, cut at 14 cells at the least
        assert any(line.endswith("…") for line in lines)

    @pytest.mark.parametrize("width", [60, 80, 200])
    def test_history(self, synced: Syncd, monkeypatch: pytest.MonkeyPatch, width: int) -> None:
        """Revision numbers whole; titles cut with "…" at 60 and 80; syncd's date goes
        first (at 80), then arXiv's (at 60)."""
        revisions = synced.json("history", "2606.03328")
        lines = self._at(synced, monkeypatch, width, "history", "2606.03328")
        assert max(display_width(line) for line in lines[1:]) <= width
        assert [line.split()[0] for line in lines[2:]] == [str(r["seq"]) for r in revisions]
        for revision, line in zip(revisions, lines[2:], strict=True):
            assert _shows_title(line, revision["record"]["title"])
        assert all(line.endswith("…") for line in lines[2:]) is (width < 200)
        assert ("OBSERVED (UTC)" in lines[1]) is (width == 200)
        assert ("VERSION DATE (UTC)" in lines[1]) is (width >= 80)

    def test_json_and_pipes_are_not_cut(
        self, synced: Syncd, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """--json ignores the width; into a pipe (no COLUMNS) every title is whole."""
        monkeypatch.delenv("COLUMNS", raising=False)
        whole = {c: synced(c, "--json").out for c in ("papers", "events")}
        piped = synced("papers").out.splitlines()
        assert all(p["title"] in "\n".join(piped) for p in synced.json("papers"))
        monkeypatch.setenv("COLUMNS", "60")
        assert {c: synced(c, "--json").out for c in ("papers", "events")} == whole

    def test_papers_names_the_author_when_more_than_one_is_followed(
        self, synced: Syncd, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With one author followed there is no AUTHOR column; with two, each row names its own."""
        monkeypatch.setenv("COLUMNS", "200")
        assert "AUTHOR" not in synced("papers").out.splitlines()[0].split()
        synced.extra = '[[authors]]\nname = "Ada Lovelace"\n'
        lines = synced("papers").out.splitlines()
        assert lines[0].split()[:5] == ["KEY", "ARXIV", "V", "STATUS", "AUTHOR"]
        assert all(f"  {scenario.AUTHOR}  " in line for line in lines[1:])

    def test_papers_names_the_author_when_another_is_followed_at_run_time(
        self, synced: Syncd, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An author added with `syncd authors add` counts as followed: the AUTHOR column shows."""
        monkeypatch.setenv("COLUMNS", "200")
        assert synced("authors", "add", "Ada Lovelace").code == 0
        lines = synced("papers").out.splitlines()
        assert lines[0].split()[:5] == ["KEY", "ARXIV", "V", "STATUS", "AUTHOR"]
        assert all(f"  {scenario.AUTHOR}  " in line for line in lines[1:])


def _shows_title(line: str, title: str) -> bool:
    """``line`` ends with ``title``, whole or its start cut with "…"."""
    if line.endswith(title):
        return True
    shown = line.rsplit("  ", 1)[-1]
    return shown.endswith("…") and title.startswith(shown[:-1]) and len(shown) >= 10


class TestCounts:
    def test_one_event_is_one_event(self, syncd: Syncd) -> None:
        """A sync that publishes one event says "1 event"; several, "N events"."""
        first = syncd("sync")
        assert f"{scenario.AUTHOR}: ok, 7 events (" in first.out
        revise_nestpipe(syncd.arxiv)
        again = syncd("sync", "--author", scenario.AUTHOR)
        assert f"{scenario.AUTHOR}: ok, 1 event (" in again.out
