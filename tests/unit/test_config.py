"""load_settings: the bundled config, overrides, and clear errors naming the bad key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from syncd.cli import main
from syncd.cli.daemon import trigger_for
from syncd.config import load_settings
from syncd.domain.authors import Author
from syncd.domain.cadence import schedule_period
from syncd.domain.vocabulary import AuthorOrigin
from syncd.errors import ConfigError
from tests.helpers import ROOT

MINIMAL = '[[authors]]\nname = "Zhida Jiang"\n'


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "syncd.toml"
    path.write_text(text, encoding="utf-8")
    return path


class TestBundledConfig:
    def test_loads(self) -> None:
        """config/syncd.toml is valid and tracks the seeded author from both seed files."""
        settings = load_settings(ROOT / "config" / "syncd.toml")
        (author,) = settings.authors
        assert author.name == "Zhida Jiang"
        assert [p.name for p in author.seeds] == [
            "000_bae548b29664adf4.txt",
            "001_486f742ac3512806.txt",
        ]
        assert all(p.is_file() for p in author.seeds)
        assert settings.arxiv.request_interval >= 3.0
        assert settings.database.url == f"sqlite:///{ROOT / 'data' / 'syncd.sqlite3'}"

    def test_config_env_variable(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """SYNCD_CONFIG names the file when --config is not given."""
        monkeypatch.setenv("SYNCD_CONFIG", str(_write(tmp_path, MINIMAL)))
        assert load_settings().authors[0].name == "Zhida Jiang"


class TestOverrides:
    def test_environment_wins(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """SYNCD_DATABASE_URL and SYNCD_ARXIV_API_URL override the file."""
        monkeypatch.setenv("SYNCD_DATABASE_URL", "postgresql://postgres@127.0.0.1/test")
        monkeypatch.setenv("SYNCD_ARXIV_API_URL", "http://127.0.0.1:9/api/query")
        settings = load_settings(_write(tmp_path, MINIMAL))
        assert settings.database.url == "postgresql+psycopg://postgres@127.0.0.1/test"
        assert settings.arxiv.api_url == "http://127.0.0.1:9/api/query"

    def test_relative_paths_follow_the_file(self, tmp_path: Path) -> None:
        """Seed and SQLite paths resolve against the config file's folder."""
        text = MINIMAL + 'seeds = ["s/a.txt"]\n[database]\nurl = "sqlite:///db/x.sqlite3"\n'
        settings = load_settings(_write(tmp_path, text))
        assert settings.authors[0].seeds == (tmp_path / "s" / "a.txt",)
        assert settings.database.url == f"sqlite:///{tmp_path / 'db' / 'x.sqlite3'}"

    def test_the_key_file_sits_beside_sqlite_unless_configured(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """The key of URL hashes: <database>.key beside a SQLite file, else key_file (relative
        to the config file's folder); PostgreSQL has no default."""
        sqlite = MINIMAL + '[database]\nurl = "sqlite:///db/x.sqlite3"\n'
        database = load_settings(_write(tmp_path, sqlite)).database
        assert database.key_path == tmp_path / "db" / "x.sqlite3.key"
        configured = load_settings(_write(tmp_path, sqlite + 'key_file = "keys/url.key"\n'))
        assert configured.database.key_path == tmp_path / "keys" / "url.key"
        monkeypatch.setenv("SYNCD_DATABASE_URL", "postgresql://postgres@127.0.0.1/test")
        assert load_settings(_write(tmp_path, MINIMAL)).database.key_path is None
        monkeypatch.setenv("SYNCD_DATABASE_KEY_FILE", "/run/secrets/syncd-url-key")
        postgresql = load_settings(_write(tmp_path, MINIMAL)).database
        assert postgresql.key_path == Path("/run/secrets/syncd-url-key")

    def test_no_authors_table_is_needed(self, tmp_path: Path) -> None:
        """A file without [[authors]] loads: a lab may add every author at run time."""
        settings = load_settings(_write(tmp_path, "[arxiv]\npage_size = 10\n"))
        assert settings.authors == ()
        assert load_settings(_write(tmp_path, "")).authors == ()

    def test_several_authors(self, tmp_path: Path) -> None:
        """Several [[authors]] are tracked at once."""
        text = MINIMAL + '[[authors]]\nname = "Ada Lovelace"\nquery = "au:Lovelace_A"\n'
        settings = load_settings(_write(tmp_path, text))
        assert [a.search_query for a in settings.configured_authors] == [
            'au:"Zhida Jiang"',
            "au:Lovelace_A",
        ]

    def test_a_table_validates_into_the_domain_author(self, tmp_path: Path) -> None:
        """An [[authors]] table is, past the configuration, the domain Author it defines:
        its ids checked (versions dropped) and its feed the arXiv author id before the ORCID."""
        text = MINIMAL + (
            '[[authors]]\nname = "Ada Lovelace"\norcid = "0000-0002-1825-0097"\n'
            'arxiv_author_id = "lovelace_a_1"\ninclude_ids = ["2401.00001v2"]\n'
            'exclude_ids = ["2401.00002"]\n'
        )
        ada = load_settings(_write(tmp_path, text)).configured_authors[1]
        assert ada == Author(
            "Ada Lovelace",
            AuthorOrigin.CONFIG,
            orcid="0000-0002-1825-0097",
            arxiv_author_id="lovelace_a_1",
            include_ids=("2401.00001",),
            exclude_ids=("2401.00002",),
        )
        assert (ada.feed_id, ada.search_query) == ("lovelace_a_1", 'au:"Ada Lovelace"')

    def test_webhook_secret_from_environment(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """secret_env reads the secret from the environment, and repr never shows a secret."""
        monkeypatch.setenv("HOOK_SECRET", "whsec_c2VjcmV0")
        text = (
            MINIMAL + '[[webhooks]]\nurl = "http://127.0.0.1:9000/h"\nsecret_env = "HOOK_SECRET"\n'
        )
        hook = load_settings(_write(tmp_path, text)).webhooks[0]
        assert hook.secret_values() == ["whsec_c2VjcmV0"]
        plain = MINIMAL + '[[webhooks]]\nurl = "http://127.0.0.1:9000/h"\nsecret = "whsec_eHl6"\n'
        settings = load_settings(_write(tmp_path, plain))
        assert "whsec_eHl6" not in repr(settings)

    def test_chat_formats_are_unsigned_and_grouped_by_cycle(self, tmp_path: Path) -> None:
        """A slack or discord endpoint takes no secret; chat defaults to one message a cycle."""
        hooks = (
            '[[webhooks]]\nurl = "https://hooks.slack.test/T/B/x"\nformat = "slack"\n'
            '[[webhooks]]\nname = "d"\nurl = "https://discord.test/api/webhooks/1/t"\n'
            'format = "discord"\ngroup = "event"\n'
            '[[webhooks]]\nname = "s"\nurl = "http://127.0.0.1:9/h"\nsecret = "whsec_eHl6"\n'
        )
        slack, discord, standard = load_settings(_write(tmp_path, MINIMAL + hooks)).webhooks
        assert (slack.format, slack.grouping, slack.secret_values()) == ("slack", "cycle", [])
        assert (discord.format, discord.grouping) == ("discord", "event")
        assert (standard.format, standard.grouping) == ("standard", "event")

    def test_public_url_loses_its_trailing_slash(self, tmp_path: Path) -> None:
        """[http] public_url is a base that paths are appended to."""
        text = MINIMAL + '[http]\npublic_url = "https://syncd.example.org/lab/"\n'
        assert load_settings(_write(tmp_path, text)).http.public_url == (
            "https://syncd.example.org/lab"
        )


class TestErrors:
    @pytest.mark.parametrize(
        ("text", "needle"),
        [
            (MINIMAL + "[arxiv]\nrequest_interval = -1\n", "arxiv.request_interval"),
            (MINIMAL + '[arxiv]\npage_size = "many"\n', "arxiv.page_size"),
            (MINIMAL + "[arxiv]\nunknown_knob = 1\n", "arxiv.unknown_knob"),
            (MINIMAL + "[surprise]\nx = 1\n", "surprise"),
            ('[[authors]]\nname = ""\n', "authors[0].name"),
            (MINIMAL + '[database]\nurl = "mysql://x"\n', "database.url"),
            (MINIMAL + '[[webhooks]]\nurl = "http://x"\n', "webhooks[0]"),
            (
                MINIMAL + '[[webhooks]]\nurl = "http://x"\nsecret_env = "SYNCD_NOPE_X"\n',
                "SYNCD_NOPE_X",
            ),
            (MINIMAL + MINIMAL, "author listed twice without regard to case"),
            (
                MINIMAL
                + '[[webhooks]]\nurl = "http://x"\nformat = "slack"\nsecret = "whsec_eHl6"\n',
                "'slack' is not signed",
            ),
            (MINIMAL + '[[webhooks]]\nurl = "http://x"\nformat = "teams"\n', "webhooks[0].format"),
            (MINIMAL + '[http]\npublic_url = "ftp://x/"\n', "http.public_url"),
            (MINIMAL + '[http]\npublic_url = "https://u:p@x/"\n', "http.public_url"),
            (
                MINIMAL + '[[webhooks]]\nurl = "http://x"\nsecret = "whsec_eHl6"\ngroup = "day"\n',
                "webhooks[0].group",
            ),
            (MINIMAL + 'include_ids = ["not an id"]\n', "authors[0].include_ids"),
            # the check digit of 0000-0002-7970-7855 is 5
            (MINIMAL + 'orcid = "0000-0002-7970-7856"\n', "authors[0].orcid"),
            (MINIMAL + 'orcid = "0000-0002-7970"\n', "authors[0].orcid"),
            (MINIMAL + 'arxiv_author_id = "Warner S"\n', "authors[0].arxiv_author_id"),
            (MINIMAL + '[arxiv]\nauthor_feed_url = "file:///a/"\n', "arxiv.author_feed_url"),
            (MINIMAL + "[sync]\nbasis_margin = 0.5\n", "sync.basis_margin"),
        ],
    )
    def test_invalid_values_name_the_key(self, tmp_path: Path, text: str, needle: str) -> None:
        """An invalid value raises ConfigError naming the file and the key."""
        with pytest.raises(ConfigError) as caught:
            load_settings(_write(tmp_path, text))
        assert needle in str(caught.value)
        assert "syncd.toml" in str(caught.value)

    @pytest.mark.parametrize(
        ("variable", "value", "line"),
        [
            ("SYNCD_HARVEST_ENABLE", "true", "harvest.enable: Extra inputs are not permitted"),
            ("SYNCD_HARVEST_ENABLED", "maybe", "harvest.enabled: Input should be a valid boolean"),
            ("SYNCD_WEBHOOKS", '[{"url": 1}]', "webhooks[0].url: Input should be a valid string"),
        ],
    )
    def test_a_bad_variable_is_blamed_not_the_file(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, line: str
    ) -> None:
        """A value the environment gave is reported as the variable's, not the file's."""
        monkeypatch.setenv(variable, value)
        with pytest.raises(ConfigError) as caught:
            load_settings(_write(tmp_path, MINIMAL))
        heading, reported = str(caught.value).splitlines()
        assert heading == f"environment variable {variable}: invalid configuration:"
        assert reported.startswith(f"  {line}")

    def test_file_and_variable_errors_each_name_their_source(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With the file wrong too, the file is blamed and the variable named on its line."""
        monkeypatch.setenv("SYNCD_HARVEST_ENABLE", "true")
        with pytest.raises(ConfigError) as caught:
            load_settings(_write(tmp_path, '[[authors]]\nname = ""\n'))
        heading, *lines = str(caught.value).splitlines()
        assert heading.endswith("syncd.toml: invalid configuration:")
        assert sorted(lines) == [
            "  authors[0].name: Value error, must not be empty",
            "  harvest.enable: Extra inputs are not permitted (from SYNCD_HARVEST_ENABLE)",
        ]

    def test_a_short_admin_token_is_refused_without_echoing_it(self, tmp_path: Path) -> None:
        """An admin_token under 16 characters names the key and never the token."""
        text = MINIMAL + '[http]\nadmin_token = "tiny-tok3n"\n'
        with pytest.raises(ConfigError) as caught:
            load_settings(_write(tmp_path, text))
        assert "http.admin_token" in str(caught.value)
        assert "tiny-tok3n" not in str(caught.value)

    def test_not_toml(self, tmp_path: Path) -> None:
        """A TOML syntax error names the line."""
        with pytest.raises(ConfigError, match="line 2"):
            load_settings(_write(tmp_path, '[arxiv]\napi_url = "unterminated\n'))

    def test_missing_file(self, tmp_path: Path) -> None:
        """A missing file says so and how to name another."""
        with pytest.raises(ConfigError, match="not found"):
            load_settings(tmp_path / "nope.toml")

    def test_unreadable_file(self, tmp_path: Path) -> None:
        """A file that is not UTF-8 is a config error, not a crash."""
        path = tmp_path / "syncd.toml"
        path.write_bytes(b"\xff\xfe\x00junk")
        with pytest.raises(ConfigError, match="cannot read"):
            load_settings(path)


class TestAuthorNames:
    """Issue 29: names are normalised, refused when they would change a query, and one
    author without regard to case."""

    def test_a_name_is_kept_in_its_normal_form(self, tmp_path: Path) -> None:
        """Spaces collapse and NFC applies at load: the name is stored and queried so."""
        text = '[[authors]]\nname = " Jose\u0301\u00a0 Martí "\n'
        (author,) = load_settings(_write(tmp_path, text)).configured_authors
        assert (author.name, author.search_query) == ("José Martí", 'au:"José Martí"')

    def test_two_spellings_of_one_name_exit_2_naming_both(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """ "Zhida Jiang" and "ZHIDA  JIANG" are one author listed twice: exit 2, both named."""
        path = _write(tmp_path, MINIMAL + '[[authors]]\nname = "ZHIDA  JIANG"\n')
        assert main(["--config", str(path), "authors", "list"]) == 2
        err = capsys.readouterr().err
        assert "authors: " in err
        assert "authors[1] 'ZHIDA JIANG' is authors[0] 'Zhida Jiang'" in err

    @pytest.mark.parametrize(
        ("line", "key", "reason"),
        [
            ("name = 'Zed Zulu\" OR au:\"Eve Evans'", "authors[0].name", "double quote"),
            ('name = "Eve Evans OR cat:cs.LG"', "authors[0].name", "field prefix"),
            ('name = "Jane\u200bSmith"', "authors[0].name", "U+200B ZERO WIDTH SPACE"),
            ('name = "Jane\\nSmith"', "authors[0].name", "U+000A"),
            ("name = 'Ada'\nquery = 'au:\"Lovelace_A'", "authors[0].query", "never closed"),
            ("name = 'Ada'\nquery = '(au:Lovelace_A'", "authors[0].query", "never closed"),
        ],
    )
    def test_a_name_or_query_that_would_break_a_query_exits_2(
        self,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        line: str,
        key: str,
        reason: str,
    ) -> None:
        """A hostile name or a broken query stops syncd at start, naming the key and why."""
        path = _write(tmp_path, f"[[authors]]\n{line}\n")
        assert main(["--config", str(path), "authors", "list"]) == 2
        err = capsys.readouterr().err
        assert f"{key}: " in err
        assert reason in err


class TestRanges:
    # Every bounded number at its upper bound.
    MAXIMA = """
[arxiv]
request_interval = 3600
timeout = 86400
backoff_base = 3600
backoff_max = 86400
max_response_bytes = 1073741824
[sync]
removal_after = 1000
[schedule]
interval = 604800
jitter = 86400
[delivery]
lease = 86400
poll_interval = 3600
sync_wait = 86400
shutdown_grace = 3600
retry_schedule = [604800]
[[webhooks]]
url = "http://127.0.0.1:9/hook"
secret = "whsec_c2VjcmV0"
timeout = 86400
"""

    def test_upper_bounds_load_and_schedule(self, tmp_path: Path) -> None:
        """Every number at its upper bound loads, schedules and fits in a date."""
        settings = load_settings(_write(tmp_path, MINIMAL + self.MAXIMA))
        now = datetime.now(UTC)
        assert trigger_for(settings.schedule).get_next_fire_time(None, now) is not None
        assert schedule_period(settings.schedule, now) == 604800
        assert settings.ready_max_age == 2 * 604800 + 86400 + 600
        longest = max(settings.delivery.lease, *settings.delivery.retry_schedule)
        assert now + timedelta(seconds=settings.ready_max_age + longest) > now
        text = MINIMAL + f"[http]\nready_max_age = {settings.ready_max_age}\n"
        assert load_settings(_write(tmp_path, text)).ready_max_age == settings.ready_max_age


class TestHarvest:
    def test_readiness_waits_a_sweep_interval_for_a_cycle(self, tmp_path: Path) -> None:
        """Harvesting, most cycles sweep nobody: /readyz allows a sweep interval more."""
        text = MINIMAL + "[schedule]\ninterval = 3600\njitter = 60\n"
        assert load_settings(_write(tmp_path, text)).ready_max_age == 2 * 3600 + 60 + 600
        text += "[harvest]\nenabled = true\nsweep_interval = 86400\n"
        assert load_settings(_write(tmp_path, text)).ready_max_age == 86400 + 2 * 3600 + 60 + 600

    def test_defaults(self, tmp_path: Path) -> None:
        harvest = load_settings(_write(tmp_path, MINIMAL)).harvest
        assert not harvest.enabled
        assert harvest.url == "https://oaipmh.arxiv.org/oai"
        assert (harvest.sets, harvest.cron, harvest.sweep_interval) == ((), "30 4 * * *", 604800)

    def test_sets(self, tmp_path: Path) -> None:
        text = MINIMAL + '[harvest]\nsets = ["cs", "physics:hep-th", "cs:cs:AI"]\n'
        assert load_settings(_write(tmp_path, text)).harvest.sets == (
            "cs",
            "physics:hep-th",
            "cs:cs:AI",
        )

    @pytest.mark.parametrize(
        ("line", "key"),
        [
            ('sets = ["cs&verb=Identify"]', "harvest.sets"),
            ('cron = "99 * * * *"', "harvest.cron"),
            ('url = "ftp://arxiv.org/oai"', "harvest.url"),
            ("sweep_interval = 60", "harvest.sweep_interval"),
        ],
    )
    def test_refused_naming_the_key(self, tmp_path: Path, line: str, key: str) -> None:
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            load_settings(_write(tmp_path, MINIMAL + f"[harvest]\n{line}\n"))
