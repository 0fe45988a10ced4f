"""A group's faces: its pages, feed, read API, report (page, CSV, command) and the filters.

Over a department of twelve written through storage (tests/integration/
department.py) and two run-time groups that share two members.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote, urlencode

import feedparser
import pytest
from lxml import html as lxml_html

from syncd.domain.reports import REPORT_COLUMNS, TOTAL
from syncd.domain.vocabulary import AuthorOrigin, EventType
from syncd.storage import Storage
from tests.integration.conftest import Site, Syncd, serving
from tests.integration.department import Department, build

THEORY = "Theory lab"
SYSTEMS = "Systems & <Data>"
# The story's days 0 to 200: every change of it.
WHOLE = {"since": "2026-03-01", "until": "2026-09-30"}


@dataclass
class Groups:
    site: Site
    dept: Department
    theory: list[str]
    systems: list[str]

    def papers_of(self, members: list[str]) -> set[str]:
        return {a for a, owners in self.dept.papers.items() if set(owners) & set(members)}


@pytest.fixture
def groups(syncd: Syncd) -> Iterator[Groups]:
    syncd.author_table = False
    storage = Storage(syncd.database_url)
    try:
        dept = build(storage, 12)
        theory, systems = dept.authors[:6], dept.authors[4:]
        for name, members in ((THEORY, theory), (SYSTEMS, systems)):
            storage.groups.put(name, f"The {name.lower()}.", AuthorOrigin.RUNTIME)
            storage.groups.add_members(name, members)
    finally:
        storage.close()
    with serving(syncd) as site:
        yield Groups(site, dept, theory, systems)


def _path(name: str) -> str:
    return "/groups/" + quote(name, safe="")


def _expected_rows(groups: Groups, members: list[str]) -> list[list[str]]:
    """The report's CSV rows, counted from the story as written."""
    rows = []
    for person in sorted(members):
        mine = [c for c in groups.dept.story if c.author == person]
        added = sum(c.type == EventType.ADDED for c in mine)
        versions = sum(c.type == EventType.REVISED and not c.withdrawn for c in mine)
        rows.append([person, str(added), str(versions), str(sum(c.withdrawn for c in mine))])
    return rows


def test_the_groups_page_lists_each_group(groups: Groups) -> None:
    answer = groups.site.get("/groups")
    assert answer.status_code == 200
    assert "Theory lab" in answer.text
    assert "Systems &amp; &lt;Data&gt;" in answer.text  # escaped
    assert "<Data>" not in answer.text
    assert "6 members" in answer.text and "8 members" in answer.text
    assert f"{len(groups.papers_of(groups.theory))} papers" in answer.text


def test_a_groups_page_lists_members_and_papers_once(groups: Groups) -> None:
    answer = groups.site.get(_path(SYSTEMS))
    assert answer.status_code == 200, answer.text[:300]
    for name in groups.systems:
        assert f'href="/authors/{quote(name, safe="")}"' in answer.text
    expected = groups.papers_of(groups.systems)
    for arxiv_id in expected:
        assert answer.text.count(f'<span class="arxiv">{arxiv_id}</span>') == 1
    assert answer.text.count('<span class="arxiv">') == len(expected)
    assert f'href="/feeds/groups/{quote(SYSTEMS, safe="")}.atom"' in answer.text
    # Its exports, linked from the page, answer in their formats.
    for suffix, kind in ((".bib", "bibtex"), (".json", "csl+json"), (".ris", "research-info")):
        link = f"/groups/{quote(SYSTEMS, safe='')}/papers{suffix}"
        assert f'href="{link}"' in answer.text
        exported = groups.site.get(link)
        assert exported.status_code == 200 and kind in exported.headers["content-type"]
    # The strip counts the members, not the whole department, and names nobody.
    strip = answer.text[answer.text.index('class="sync-status"') : answer.text.index("<main>")]
    line = " ".join(lxml_html.fromstring(strip[strip.index("<p") :]).text_content().split())
    assert line.startswith(f"{len(groups.systems)} authors: ")
    assert f'href="/authors?{urlencode({"group": SYSTEMS})}"' in strip
    assert not any(name in strip for name in groups.dept.authors)
    listed = groups.site.get("/authors", params={"group": SYSTEMS}).text
    assert all(f'href="/authors/{quote(name, safe="")}"' in listed for name in groups.systems)
    assert not any(f'/authors/{quote(n, safe="")}"' in listed for n in groups.dept.authors[:4])


def test_an_unknown_group_is_a_404_everywhere(groups: Groups, syncd: Syncd) -> None:
    for path in (
        "/groups/nobody",
        "/groups/nobody/report",
        "/groups/nobody/report.csv",
        "/feeds/groups/nobody.atom",
        "/?group=nobody",
        "/events?group=nobody",
    ):
        answer = groups.site.get(path)
        assert answer.status_code == 404, path
        assert "no group named" in answer.text and "nobody" in answer.text
    for path in ("/api/v1/groups/nobody/papers", "/api/v1/groups/nobody/report"):
        answer = groups.site.get(path)
        assert answer.status_code == 404
        assert answer.json() == {"error": "no group named 'nobody'"}
    for command in (("papers",), ("events",), ("report",)):
        outcome = syncd(*command, "--group", "nobody")
        assert outcome.code == 2, command
        assert "no group named 'nobody'" in outcome.err


def test_the_report_csv_reads_back_as_counted(groups: Groups, syncd: Syncd) -> None:
    answer = groups.site.get(_path(THEORY) + "/report.csv", params=WHOLE)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/csv")
    assert "attachment" in answer.headers["content-disposition"]
    rows = list(csv.reader(io.StringIO(answer.text, newline="")))
    assert rows[0] == list(REPORT_COLUMNS)
    assert rows[1:-1] == _expected_rows(groups, groups.theory)
    total = rows[-1]
    assert total[0] == TOTAL
    assert int(total[1]) == len(groups.papers_of(groups.theory))
    # The command prints the same bytes.
    outcome = syncd(
        "report", "--group", THEORY, "--since", WHOLE["since"], "--until", "2026-09-30", "--csv"
    )
    assert outcome.code == 0, outcome.err
    assert outcome.out == answer.text
    table = syncd("report", "--group", THEORY, "--since", WHOLE["since"], "--until", "2026-09-30")
    assert TOTAL in table.out and groups.theory[0] in table.out


def test_the_report_page_and_its_period(groups: Groups) -> None:
    answer = groups.site.get(_path(THEORY) + "/report", params=WHOLE)
    assert answer.status_code == 200
    assert answer.text.count("<tr") == 1 + len(groups.theory) + 1
    assert 'value="2026-03-01"' in answer.text
    # A period with nothing in it: every count zero, every member still listed.
    quiet = groups.site.get(
        _path(THEORY) + "/report", params={"since": "2025-01-01", "until": "2025-01-31"}
    )
    assert quiet.text.count('class="quiet"') == len(groups.theory)
    for bad, says in (
        ({"since": "2026-04-01", "until": "2026-03-01"}, "is before since"),
        ({"since": "2026-02-30"}, "not a day"),
    ):
        refused = groups.site.get(_path(THEORY) + "/report", params=bad)
        assert refused.status_code == 400
        assert says in refused.text


def test_the_report_command_refuses_a_bad_period(groups: Groups, syncd: Syncd) -> None:
    outcome = syncd("report", "--group", THEORY, "--since", "2026-13-01")
    assert outcome.code == 2
    assert "since is not a day" in outcome.err


def test_the_read_api(groups: Groups) -> None:
    listed = groups.site.get("/api/v1/groups").json()
    assert [g["name"] for g in listed] == [SYSTEMS, THEORY]
    assert listed[1]["members"] == sorted(groups.theory)
    one = groups.site.get("/api/v1/groups/" + quote(SYSTEMS, safe="") + "/papers").json()
    assert one["members"] == sorted(groups.systems)
    ids = [p["arxiv_id"] for p in one["papers"]]
    assert sorted(ids) == sorted(groups.papers_of(groups.systems))  # each once
    report = groups.site.get("/api/v1/groups/" + quote(THEORY, safe="") + "/report", params=WHOLE)
    body = report.json()
    assert body["since"] == "2026-03-01" and body["until"] == "2026-09-30"
    assert [
        [r["person"], str(r["new_papers"]), str(r["new_versions"]), str(r["withdrawals"])]
        for r in body["people"]
    ] == _expected_rows(groups, groups.theory)


def test_the_group_feed_holds_its_members_events(groups: Groups) -> None:
    answer = groups.site.get(f"/feeds/groups/{quote(THEORY, safe='')}.atom")
    assert answer.status_code == 200
    feed = feedparser.parse(answer.content)
    assert not feed.bozo
    assert feed.feed.title == f"syncd: changes to the arXiv papers of {THEORY}"
    ids = groups.papers_of(groups.theory)
    assert feed.entries and all(any(i in e.link or i in e.title for i in ids) for e in feed.entries)
    again = groups.site.get(
        f"/feeds/groups/{quote(THEORY, safe='')}.atom",
        headers={"If-None-Match": answer.headers["ETag"]},
    )
    assert again.status_code == 304
    # /subscribe lists it with the others.
    assert (
        f"/feeds/groups/{quote(THEORY, safe='')}.atom</code>" in groups.site.get("/subscribe").text
    )


def test_the_index_and_events_filter_by_group(groups: Groups, syncd: Syncd) -> None:
    index = groups.site.get("/", params={"group": THEORY})
    expected = groups.papers_of(groups.theory)
    assert index.text.count('<span class="arxiv">') == len(expected)
    assert all(f'<span class="arxiv">{i}</span>' in index.text for i in expected)
    assert f"<option selected>{THEORY}</option>" in index.text
    one = groups.site.get("/", params={"group": THEORY, "author": groups.theory[0]})
    assert one.text.count('<span class="arxiv">') == len(groups.papers_of(groups.theory[:1]))
    events = groups.site.get("/events", params={"group": THEORY})
    assert events.status_code == 200 and "Events in" in events.text
    papers = syncd.json("papers", "--group", THEORY)
    assert sorted(p["arxiv_id"] for p in papers) == sorted(expected)
    listed = syncd.json("events", "--group", THEORY)
    theory, dept = set(groups.theory), groups.dept
    # One event per change of a paper a member holds, whoever's sync found it.
    assert all(set(dept.papers[e["paper"]["arxiv_id"]]) & theory for e in listed)
    changes = {
        (c.arxiv_id, c.type, c.version, c.day)
        for c in dept.story
        if set(dept.papers[c.arxiv_id]) & theory
    }
    assert len(listed) == len(changes)


def test_a_group_named_like_a_dot_segment_is_reached_by_query(syncd: Syncd) -> None:
    """A browser would resolve /groups/.. away: its link asks by query, and it answers."""
    syncd.author_table = False
    storage = Storage(syncd.database_url)
    try:
        build(storage, 2)
        storage.groups.put("..", "", AuthorOrigin.RUNTIME)
        storage.groups.add_members("..", storage.authors.followed_names()[:1])
    finally:
        storage.close()
    with serving(syncd) as site:
        listing = site.get("/groups")
        assert 'href="/groups?name=.."' in listing.text
        answer = site.get("/groups?name=..")
        assert answer.status_code == 200
        assert "<h1><bdi>..</bdi></h1>" in answer.text
