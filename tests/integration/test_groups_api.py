"""``/api/v1/groups``: public reads, operators' writes behind the admin token, the CLI's JSON."""

from __future__ import annotations

from tests.integration.conftest import Syncd, serving
from tests.scenario import AUTHOR

TOKEN = "an-operator-token-of-some-length"
GOOD = {"Authorization": f"Bearer {TOKEN}"}
BASE = "/api/v1/groups"


def test_groups_are_made_changed_and_removed_by_operators(syncd: Syncd) -> None:
    syncd.sections = f'[http]\nadmin_token = "{TOKEN}"\n'
    assert syncd("authors", "add", "Ada Lovelace").code == 0
    with serving(syncd) as site:
        assert site.get(BASE).json() == []
        body = {"name": "lab", "description": "ours", "members": [AUTHOR]}
        assert site.http.post(BASE, json=body).status_code == 401
        wrong = {"Authorization": "Bearer " + "x" * len(TOKEN)}
        assert site.http.post(BASE, json=body, headers=wrong).status_code == 401
        made = site.http.post(BASE, json=body, headers=GOOD)
        assert made.status_code == 201, made.text
        assert made.json() == {
            "name": "lab",
            "description": "ours",
            "source": "runtime",
            "members": [AUTHOR],
        }
        assert site.http.post(BASE, json=body, headers=GOOD).status_code == 200
        changed = site.http.post(
            f"{BASE}/lab/members", json={"add": ["ada lovelace"], "remove": [AUTHOR]}, headers=GOOD
        )
        assert changed.status_code == 200, changed.text
        assert changed.json()["members"] == ["Ada Lovelace"]
        assert site.get(f"{BASE}/lab").json() == changed.json()
        assert site.get(BASE).json() == syncd.json("groups", "list")
        unknown = site.http.post(f"{BASE}/lab/members", json={"add": ["Nobody"]}, headers=GOOD)
        assert unknown.status_code == 404
        assert "Nobody" in unknown.json()["error"]
        bad = site.http.post(BASE, json={"name": "  "}, headers=GOOD)
        assert bad.status_code == 400
        assert site.http.delete(f"{BASE}/lab", headers=GOOD).json()["name"] == "lab"
        assert site.get(f"{BASE}/lab").status_code == 404
        assert site.http.delete(f"{BASE}/lab", headers=GOOD).status_code == 404


def test_writes_are_404_without_a_token_and_configured_groups_409(syncd: Syncd) -> None:
    syncd.sections = f'[[groups]]\nname = "lab"\nmembers = ["{AUTHOR}"]\n'
    assert syncd("groups", "list").code == 0
    with serving(syncd) as site:
        assert site.get(f"{BASE}/lab").json()["source"] == "config"
        assert site.http.delete(f"{BASE}/lab", headers=GOOD).status_code == 404
    syncd.sections += f'[http]\nadmin_token = "{TOKEN}"\n'
    with serving(syncd) as site:
        assert site.http.delete(f"{BASE}/lab", headers=GOOD).status_code == 409
        members = site.http.post(f"{BASE}/lab/members", json={"add": [AUTHOR]}, headers=GOOD)
        assert members.status_code == 409
        assert "[[groups]]" in members.json()["error"]
