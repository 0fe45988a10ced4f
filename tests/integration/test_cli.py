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
from tests.helpers import ROOT
from tests.integration.conftest import Syncd


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
        assert events[0].split()[:3] == ["ID", "CREATED", "(UTC)"]
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
