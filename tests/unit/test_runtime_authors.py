"""Run-time authors as values: their checks, a CSV file of them, the status line."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from syncd.config.runtime import runtime_author
from syncd.domain.authors import Author, AuthorSummary, describe_reason, status_line
from syncd.domain.vocabulary import AuthorOrigin
from syncd.errors import ConfigError
from syncd.service.authors import arxiv_ids, read_authors_csv

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def summary(**fields: object) -> AuthorSummary:
    values: dict[str, object] = {
        "definition": Author("Ada Lovelace", AuthorOrigin.RUNTIME),
        "removed_at": None,
        "tracked": 0,
        "claimed": 0,
        "candidates": 0,
        "last_started": None,
        "last_success": None,
        "last_failure": None,
        "last_error": None,
    }
    return AuthorSummary(**(values | fields))  # type: ignore[arg-type]


class TestRuntimeAuthor:
    @pytest.mark.parametrize("orcid", ["0000-0002-1825-0097", "0000-0002-9079-593X"])
    def test_good_orcid_ids(self, orcid: str) -> None:
        assert runtime_author("Ada", orcid=orcid).orcid == orcid

    @pytest.mark.parametrize(
        "orcid", ["0000-0002-1825-0098", "0000000218250097", "0000-0002-1825-009", "x"]
    )
    def test_bad_orcid_ids_name_the_key(self, orcid: str) -> None:
        with pytest.raises(ConfigError, match=r"^orcid: .*not an ORCID iD"):
            runtime_author("Ada", orcid=orcid)

    @pytest.mark.parametrize("value", ["warner_s_1", "lovelace_a_12"])
    def test_good_arxiv_author_ids(self, value: str) -> None:
        assert runtime_author("Ada", arxiv_author_id=value).arxiv_author_id == value

    @pytest.mark.parametrize("value", ["warner s 1", "Warner_S_1", "warner", "../a_1"])
    def test_bad_arxiv_author_ids(self, value: str) -> None:
        with pytest.raises(ConfigError, match=r"^arxiv_author_id: "):
            runtime_author("Ada", arxiv_author_id=value)

    @pytest.mark.parametrize(
        "name", ["", "   ", "a\u202eb", "x" * 201, "tab\there", 'a" OR au:"b', "a\u200bb"]
    )
    def test_bad_names(self, name: str) -> None:
        with pytest.raises(ConfigError, match=r"^name: "):
            runtime_author(name)

    def test_empty_cells_mean_not_given_and_seeds_are_absolute(self) -> None:
        author = runtime_author(" Ada ", orcid="", arxiv_author_id=" ", seeds=[Path("s.txt")])
        assert (author.name, author.orcid, author.arxiv_author_id) == ("Ada", None, None)
        assert author.seeds[0].is_absolute()


class TestCsv:
    def test_rows_and_quoted_queries(self, tmp_path: Path) -> None:
        path = tmp_path / "a.csv"
        path.write_text(
            'name,orcid,arxiv_author_id,query\nAda,,,\n\nGrace,,hopper_g_1,"au:""Hopper_G"""\n'
        )
        authors = read_authors_csv(path)
        assert [(a.name, a.query) for a in authors] == [("Ada", None), ("Grace", 'au:"Hopper_G"')]

    def test_a_wrong_header_is_line_1(self, tmp_path: Path) -> None:
        path = tmp_path / "a.csv"
        path.write_text("name,query\nAda,\n")
        with pytest.raises(ConfigError, match=r"a\.csv:1: the header must be"):
            read_authors_csv(path)

    def test_configured_names_are_bad_rows(self, tmp_path: Path) -> None:
        path = tmp_path / "a.csv"
        path.write_text("name,orcid,arxiv_author_id,query\nAda,,,\nZhida,,,\n")
        with pytest.raises(ConfigError, match=r"a\.csv:3: 'Zhida' is configured"):
            read_authors_csv(path, {"Zhida"})

    def test_one_name_without_regard_to_case_is_one_row(self, tmp_path: Path) -> None:
        """A name repeated in another spelling, or a configured or known author's name spelled
        otherwise, is a bad row naming its line and the spelling it clashes with."""
        path = tmp_path / "a.csv"
        rows = ["Ada,,,", "ADA,,,", "zhida  JIANG,,,", "grace hopper,,,", "Grace Hopper ,,,"]
        path.write_text("name,orcid,arxiv_author_id,query\n" + "\n".join(rows) + "\n")
        with pytest.raises(ConfigError) as caught:
            read_authors_csv(path, ["Zhida Jiang"], ["Grace Hopper"])
        assert str(caught.value).splitlines()[1:] == [
            f"  {path}:3: 'ADA' is already on line 2 as 'Ada'",
            f"  {path}:4: 'zhida JIANG' is configured in the config file as 'Zhida Jiang'",
            f"  {path}:5: 'grace hopper' is the author 'Grace Hopper': names are compared"
            " without regard to case; use 'Grace Hopper'",
            f"  {path}:6: 'Grace Hopper' is already on line 5 as 'grace hopper'",
        ]

    def test_a_known_author_in_the_same_spelling_is_imported_again(self, tmp_path: Path) -> None:
        """A row naming a known author exactly is no clash: importing a file twice is idempotent."""
        path = tmp_path / "a.csv"
        path.write_text("name,orcid,arxiv_author_id,query\n Grace  Hopper,,,\n")
        assert [a.name for a in read_authors_csv(path, [], ["Grace Hopper"])] == ["Grace Hopper"]


def test_arxiv_ids_drop_versions_and_refuse_others() -> None:
    assert arxiv_ids(["2602.10001v2", " 2602.10002 "]) == ["2602.10001", "2602.10002"]
    with pytest.raises(ConfigError, match="not an arXiv id: 'x'"):
        arxiv_ids(["x"])


class TestStatus:
    def test_a_failure_is_shown_with_its_reason(self) -> None:
        failed = summary(
            last_success=NOW - timedelta(hours=2),
            last_failure=NOW - timedelta(hours=1),
            last_error="HTTP 503",
        )
        line = status_line(failed, NOW)
        assert line == (
            "last success 2026-12-01 10:00; last failure 2026-12-01 11:00: HTTP 503;"
            " next sync 2026-12-01 12:00"
        )

    def test_a_removed_author_says_since_when(self) -> None:
        removed = summary(removed_at=NOW)
        assert status_line(removed, None).endswith("no longer followed since 2026-12-01 12:00")

    def test_no_reason_says_so(self) -> None:
        assert describe_reason(None) == "no reason recorded"
        assert describe_reason("shares no co-author") == "shares no co-author"
