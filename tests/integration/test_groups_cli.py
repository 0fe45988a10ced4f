"""``syncd groups``: run-time groups made, listed and changed; what is refused, and why."""

from __future__ import annotations

from tests import scenario
from tests.integration.conftest import Syncd

ME = scenario.AUTHOR
ADA = "Ada Lovelace"


def _ok(syncd: Syncd, *args: str) -> str:
    outcome = syncd(*args)
    assert outcome.code == 0, outcome.err
    return outcome.out


def test_a_group_is_made_listed_changed_and_removed(syncd: Syncd) -> None:
    _ok(syncd, "authors", "add", ADA)
    out = _ok(syncd, "groups", "add", "lab", ME, "--description", "the lab")
    assert out == f"lab: added; 1 member: {ME}\n"
    out = _ok(syncd, "groups", "members", "lab", "--add", "ada lovelace")
    assert out == f"lab: 1 added, 0 removed; 2 members: {ADA}, {ME}\n"
    assert _ok(syncd, "groups", "members", "lab") == f"{ADA}\n{ME}\n"
    assert syncd.json("groups", "list") == [
        {"name": "lab", "description": "the lab", "source": "runtime", "members": [ADA, ME]}
    ]
    table = _ok(syncd, "groups", "list")
    assert table.splitlines()[0].split()[:4] == ["NAME", "SOURCE", "MEMBERS", "WHO"]
    assert "the lab" in table
    out = _ok(syncd, "groups", "members", "lab", "--remove", ME)
    assert out == f"lab: 0 added, 1 removed; 1 member: {ADA}\n"
    assert _ok(syncd, "groups", "remove", "lab") == "lab: removed; its authors stay followed\n"
    assert syncd.json("groups", "list") == []
    assert ADA in _ok(syncd, "authors", "list")


def test_unknown_names_are_usage_errors(syncd: Syncd) -> None:
    """Exit 2 and a message naming what is unknown; nothing written."""
    outcome = syncd("groups", "add", "lab", ME, "Nobody Known")
    assert outcome.code == 2
    assert "no followed author named 'Nobody Known'" in outcome.err
    assert syncd.json("groups", "list") == []
    for args in (("remove", "lab"), ("members", "lab"), ("members", "lab", "--add", ME)):
        outcome = syncd("groups", *args)
        assert (outcome.code, outcome.err) == (2, "syncd: error: no group named 'lab'\n")
    outcome = syncd("groups", "add", "a/b")
    assert outcome.code == 2
    assert "'/'" in outcome.err


def test_configured_groups_are_changed_in_the_file(syncd: Syncd) -> None:
    syncd.sections = f'[[groups]]\nname = "lab"\nmembers = ["{ME}"]\n'
    assert syncd.json("groups", "list") == [
        {"name": "lab", "description": "", "source": "config", "members": [ME]}
    ]
    for args in (("add", "lab"), ("remove", "lab"), ("members", "lab", "--remove", ME)):
        outcome = syncd("groups", *args)
        assert outcome.code == 2
        assert "configured in the config file ([[groups]])" in outcome.err
    syncd.sections = ""
    assert syncd.json("groups", "list") == []  # gone from the file, gone


def test_a_configured_member_who_is_not_followed_is_a_config_error(syncd: Syncd) -> None:
    syncd.sections = '[[groups]]\nname = "lab"\nmembers = ["Nobody Known"]\n'
    outcome = syncd("groups", "list")
    assert outcome.code == 2
    assert "[[groups]] 'lab': no followed author named 'Nobody Known'" in outcome.err


def test_targets_route_by_known_authors_and_groups(syncd: Syncd) -> None:
    """A delivering command refuses a target routing by an unknown name (exit 2), names it;
    a group a target routes by cannot be removed."""
    hook = '[[webhooks]]\nname = "chat"\nurl = "https://chat.example/x"\nformat = "slack"\n'
    syncd.sections = hook + 'groups = ["lab"]\nauthors = ["Nobody Known"]\n'
    outcome = syncd("sync", "--no-deliver")
    assert outcome.code == 2
    assert "webhooks[0].authors: 'Nobody Known' is no author syncd follows" in outcome.err
    assert "webhooks[0].groups: no group named 'lab'" in outcome.err
    assert syncd.counts()["runs"] == 0
    syncd.sections = hook + 'groups = ["lab"]\n'
    _ok(syncd, "groups", "add", "lab", ME)
    _ok(syncd, "sync", "--no-deliver")
    outcome = syncd("groups", "remove", "lab")
    assert outcome.code == 2
    assert "group 'lab' routes webhooks[0] in the config file" in outcome.err
