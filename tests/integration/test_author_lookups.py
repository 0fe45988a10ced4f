"""Finding an author as people name them (issue 30, item 11): any case, any path, any iD form.

A name is one author without regard to case, so every command and URL that
takes a name finds the author in any spelling of it; a name that is a path
segment of its own (``..``) or holds a ``/`` still has a page and routes; the
operators' writes check the token before the body; and an ORCID iD may be
given as the URL ORCID prints (``https://orcid.org/0000-...``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote, urljoin

import pytest
import sqlalchemy as sa
from lxml import html as lxml_html

from syncd.storage.schema import authors_table
from tests.conftest import BOTH_DATABASES, database_for
from tests.fakearxiv import FakeArxiv, make_record
from tests.integration.ada import (
    ADA,
    ADA_PAPERS,
    ADMIN_TOKEN,
    GOOD_ORCID,
    authors,
    publish_ada,
    write_csv,
)
from tests.integration.conftest import Syncd, serving, sync_ok
from tests.scenario import AUTHOR


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: a name in any spelling finds its author by the key each dialect indexes
    (issue 30, item 11)."""
    return database_for(request)


GOOD = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
ORCID_URL = f"https://orcid.org/{GOOD_ORCID}"
SLASHED = "Ada/Lovelace"


def _with_token(syncd: Syncd) -> None:
    syncd.sections = f'[http]\nadmin_token = "{ADMIN_TOKEN}"\n'


def _insert_author(syncd: Syncd, name: str) -> None:
    """An author row as a version before names were checked left it (no key, no longer followed)."""
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.begin() as conn:
            when = datetime(2026, 11, 1, tzinfo=UTC)
            conn.execute(
                authors_table.insert().values(
                    name=name, name_key=None, created_at=when, origin="runtime", removed_at=when
                )
            )
    finally:
        engine.dispose()


class TestAnySpelling:
    def test_commands_find_an_author_in_any_case(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """review, confirm, reject, papers --author and sync --author take "ada lovelace"
        for Ada Lovelace, and what they write is hers."""
        publish_ada(arxiv)
        assert syncd("authors", "add", ADA).code == 0
        synced = syncd("sync", "--author", "ada LOVELACE")
        assert synced.code == 0, synced.err
        review = syncd("authors", "review", "ada lovelace")
        assert review.code == 0, review.err
        assert all(arxiv_id in review.out for arxiv_id in ADA_PAPERS)
        papers = syncd.json("papers", "--author", "ADA LOVELACE")
        assert {p["arxiv_id"] for p in papers} == set(ADA_PAPERS)
        assert {p["author"] for p in papers} == {ADA}
        confirmed = syncd("authors", "confirm", "ada lovelace", "2602.10001")
        assert confirmed.code == 0, confirmed.err
        assert syncd("authors", "reject", "ADA lovelace", "2602.10002").code == 0
        added = [e for e in syncd.json("events") if e["type"] == "paper.added"]
        assert [e["author"] for e in added] == [ADA]
        assert syncd("authors", "remove", "ada lovelace").code == 0
        assert authors(syncd)[ADA]["followed"] is False

    def test_the_api_and_pages_find_an_author_in_any_case(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """/api/v1/authors/{name}, its confirm route, /authors/{name} and ?author= take the
        name in any case and answer with the author as syncd spells it."""
        publish_ada(arxiv)
        assert syncd("authors", "add", ADA).code == 0
        sync_ok(syncd)
        _with_token(syncd)
        lower = quote("ada lovelace")
        with serving(syncd) as site:
            detail = site.get(f"/api/v1/authors/{lower}")
            assert detail.status_code == 200, detail.text
            assert detail.json()["name"] == ADA
            assert len(detail.json()["candidate_papers"]) == len(ADA_PAPERS)
            page = site.get(f"/authors/{lower}")
            assert page.status_code == 200
            assert f"<h1><bdi>{ADA}</bdi></h1>" in page.text
            assert site.get("/api/v1/papers", params={"author": "ADA LOVELACE"}).json()
            assert site.get("/events", params={"author": "ada lovelace"}).status_code == 200
            feed = site.get("/feeds/events.atom", params={"author": "ada lovelace"})
            assert feed.status_code == 200
            confirm = site.http.post(
                f"/api/v1/authors/{lower}/confirm", json={"ids": ["2602.10001"]}, headers=GOOD
            )
            assert confirm.status_code == 200, confirm.text
            assert confirm.json()["name"] == ADA
            assert len(confirm.json()["events"]) == 1


class TestNamesAsPaths:
    def test_an_author_named_dot_dot_has_a_page_a_browser_reaches(self, syncd: Syncd) -> None:
        """The link to the author ".." (a name from before names were checked), resolved as a
        browser resolves it, is that author's page, not the index."""
        assert syncd("db", "upgrade").code == 0
        _insert_author(syncd, "..")
        with serving(syncd) as site:
            listing = lxml_html.fromstring(site.get("/authors").text)
            hrefs = [
                a.get("href")
                for a in listing.iter("a")
                if a.text_content().strip() == ".." and a.get("href")
            ]
            assert hrefs, "no link to the author '..'"
            for href in hrefs:
                reached = urljoin(f"{site.url}/authors", href)
                page = site.http.get(reached)
                assert page.status_code == 200, (href, reached)
                assert "<h1><bdi>..</bdi></h1>" in page.text, reached

    def test_names_holding_a_slash_are_decided_through_the_api(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """GET, confirm, reject and DELETE of "Ada/Lovelace" route to her, not to a 405."""
        for number, coauthor in enumerate(("Charles Babbage", "Mary Somerville", "Alan Turing")):
            arxiv.publish(
                make_record(f"2602.2000{number}", authors=(SLASHED, coauthor), title=coauthor)
            )
        assert syncd("authors", "add", SLASHED).code == 0
        sync_ok(syncd)
        _with_token(syncd)
        base = f"/api/v1/authors/{quote(SLASHED, safe='')}"
        with serving(syncd) as site:
            assert site.get(base).json()["candidates"] == 3
            confirm = site.http.post(f"{base}/confirm", json={"ids": ["2602.20000"]}, headers=GOOD)
            assert confirm.status_code == 200, confirm.text
            reject = site.http.post(f"{base}/reject", json={"ids": ["2602.20001"]}, headers=GOOD)
            assert reject.status_code == 200, reject.text
            assert site.get(base).json()["candidates"] == 1
            assert site.get(f"/authors/{quote(SLASHED, safe='')}").status_code == 200
            gone = site.http.delete(base, headers=GOOD)
            assert gone.status_code == 200 and gone.json()["followed"] is False


class TestTokenFirst:
    @pytest.mark.parametrize("body", [b"{not json", b'{"name": 1', b"\xff\xfe"])
    def test_a_malformed_body_without_the_token_is_401(self, syncd: Syncd, body: bytes) -> None:
        """Who asks is checked before what they sent: no token, 401 whatever the body;
        with the token, a malformed body is a 400."""
        _with_token(syncd)
        assert syncd("db", "upgrade").code == 0
        json_type = {"Content-Type": "application/json"}
        with serving(syncd) as site:
            for path in ("/api/v1/authors", f"/api/v1/authors/{quote(AUTHOR)}/confirm"):
                anonymous = site.http.post(path, content=body, headers=json_type)
                assert anonymous.status_code == 401, (path, anonymous.text)
                wrong = {**json_type, "Authorization": "Bearer wrong"}
                assert site.http.post(path, content=body, headers=wrong).status_code == 401
                admitted = site.http.post(path, content=body, headers={**json_type, **GOOD})
                assert admitted.status_code == 400, (path, admitted.text)


class TestOrcidUrls:
    def test_an_orcid_url_is_taken_as_its_bare_id_everywhere(
        self, syncd: Syncd, tmp_path: Path
    ) -> None:
        """https://orcid.org/<iD> in a CSV row, on the command line, in the API and in the
        config file is stored as the bare iD."""
        rows = [f"{ADA},{ORCID_URL},,", "Grace Hopper,http://orcid.org/0000-0002-9079-593X/,,"]
        imported = syncd("authors", "import", str(write_csv(tmp_path / "a.csv", rows)))
        assert imported.code == 0, imported.err
        listed = authors(syncd)
        assert listed[ADA]["orcid"] == GOOD_ORCID
        assert listed["Grace Hopper"]["orcid"] == "0000-0002-9079-593X"
        added = syncd("authors", "add", "Emmy Noether", "--orcid", f"orcid.org/{GOOD_ORCID}")
        assert added.code == 0, added.err
        assert authors(syncd)["Emmy Noether"]["orcid"] == GOOD_ORCID
        _with_token(syncd)
        with serving(syncd) as site:
            body = {"name": "Mary Somerville", "orcid": f"https://orcid.org/{GOOD_ORCID}"}
            answer = site.http.post("/api/v1/authors", json=body, headers=GOOD)
            assert answer.status_code == 201, answer.text
            assert answer.json()["orcid"] == GOOD_ORCID
            bad = {"name": "Alan Turing", "orcid": "https://example.org/0000-0002-1825-0097"}
            refused = site.http.post("/api/v1/authors", json=bad, headers=GOOD)
            assert refused.status_code == 400 and "orcid" in refused.json()["error"]
        syncd.sections += f'\n[[authors]]\nname = "Alan Turing"\norcid = "{ORCID_URL}"\n'
        assert authors(syncd)["Alan Turing"]["orcid"] == GOOD_ORCID
