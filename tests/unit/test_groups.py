"""Groups as values and routing by person and group: the pure decisions, and the
``[[groups]]`` and targets' ``authors`` / ``groups`` keys as the configuration reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from syncd.config import Settings, load_settings
from syncd.domain.groups import Group, check_group_name, group_json
from syncd.domain.routing import Audience
from syncd.domain.vocabulary import AuthorOrigin
from syncd.errors import ConfigError
from syncd.service.app import endpoints_from

MEMBERS = {"lab a": ["Ada Lovelace", "Bob Kahn"], "lab b": ["Bob Kahn", "Cy Young"]}


class TestAudience:
    def test_no_route_takes_everyone(self) -> None:
        audience = Audience.of((), (), MEMBERS)
        assert audience.takes(["Anyone"])
        assert audience.takes([])

    def test_a_group_takes_its_members_and_an_author_takes_them(self) -> None:
        lab_a = Audience.of((), ["lab a"], MEMBERS)
        assert lab_a.takes(["Bob Kahn"])
        assert not lab_a.takes(["Cy Young"])
        both = Audience.of(["Cy Young"], ["lab a"], MEMBERS)
        assert [both.takes([n]) for n in ("Ada Lovelace", "Cy Young", "Dan")] == [1, 1, 0]

    def test_one_of_an_events_authors_is_enough(self) -> None:
        """An event of several followed authors goes when any one is taken."""
        assert Audience.of((), ["lab b"], MEMBERS).takes(["Ada Lovelace", "Cy Young"])
        assert not Audience.of((), ["lab b"], MEMBERS).takes(["Ada Lovelace"])

    def test_names_match_in_any_spelling(self) -> None:
        assert Audience.of(["cy young"], (), {}).takes(["Cy Young"])

    def test_a_group_without_members_takes_nobody(self) -> None:
        """Routed by a group emptied since: nothing, never everything."""
        assert not Audience.of((), ["empty"], MEMBERS).takes(["Ada Lovelace"])


class TestGroupNames:
    @pytest.mark.parametrize(("raw", "name"), [(" lab  a ", "lab a"), ("Å-team", "Å-team")])
    def test_normal_form(self, raw: str, name: str) -> None:
        assert check_group_name(raw) == name

    @pytest.mark.parametrize(
        ("raw", "reason"),
        [("", "empty"), ("a/b", "'/'"), ("x" * 101, "at most 100"), ("a\x07b", r"U\+0007")],
    )
    def test_refused(self, raw: str, reason: str) -> None:
        with pytest.raises(ValueError, match=reason):
            check_group_name(raw)

    def test_json(self) -> None:
        group = Group("lab", "ours", ("Ada", "Bob"), AuthorOrigin.RUNTIME)
        assert group_json(group) == {
            "name": "lab",
            "description": "ours",
            "source": "runtime",
            "members": ["Ada", "Bob"],
        }


def _load(tmp_path: Path, text: str) -> Settings:
    path = tmp_path / "syncd.toml"
    path.write_text('[[authors]]\nname = "Ada Lovelace"\n' + text, encoding="utf-8")
    return load_settings(path)


class TestConfig:
    def test_groups_and_routes_load(self, tmp_path: Path) -> None:
        settings = _load(
            tmp_path,
            '[[groups]]\nname = "lab"\nmembers = ["Ada Lovelace"]\ndescription = "ours"\n'
            '[[webhooks]]\nurl = "https://chat.example/x"\nformat = "slack"\n'
            'groups = ["lab"]\nauthors = ["Ada Lovelace"]\n',
        )
        (table,) = settings.groups
        assert table.group() == Group("lab", "ours", ("Ada Lovelace",), AuthorOrigin.CONFIG)
        (hook,) = settings.webhooks
        assert (hook.authors, hook.groups) == (("Ada Lovelace",), ("lab",))

    def test_every_target_carries_its_routes_to_its_endpoints(self, tmp_path: Path) -> None:
        """A [[notify]] table routes each of its URLs as a [[webhooks]] table routes itself."""
        settings = _load(
            tmp_path,
            '[[notify]]\nname = "mail"\nurls = ["json://127.0.0.1:9/a", "json://127.0.0.1:9/b"]\n'
            'authors = ["Ada Lovelace"]\ngroups = ["lab"]\n'
            '[[webhooks]]\nname = "chat"\nurl = "https://chat.example/x"\nformat = "slack"\n'
            'groups = ["lab"]\n',
        )
        endpoints = endpoints_from(settings, lambda: b"k" * 32)
        routes = {name: (e.spec.authors, e.spec.groups) for name, e in endpoints.items()}
        assert routes == {
            "chat": ((), ("lab",)),
            "mail#1": (("Ada Lovelace",), ("lab",)),
            "mail#2": (("Ada Lovelace",), ("lab",)),
        }

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ('[[groups]]\nname = "a"\n[[groups]]\nname = "a"\n', "group defined twice: 'a'"),
            ('[[groups]]\nname = "a/b"\n', r"groups\[0\]\.name"),
            ('[[groups]]\nname = "a"\nmembers = ["Ada", "ada"]\n', "listed twice"),
            ('[[groups]]\nname = "a"\nmember = ["Ada"]\n', "member"),
            (
                '[[webhooks]]\nurl = "https://chat.example/x"\nformat = "slack"\ngroups = [""]\n',
                r"webhooks\[0\]\.groups\[0\]",
            ),
        ],
    )
    def test_bad_tables_are_config_errors(self, tmp_path: Path, text: str, message: str) -> None:
        with pytest.raises(ConfigError, match=message):
            _load(tmp_path, text)
