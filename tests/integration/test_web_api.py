"""The JSON read API under /api/v1, served by the real HttpServer over a synced database."""

from __future__ import annotations

import io
import re
from typing import Any

import httpx
import pytest

from syncd.config import load_settings
from syncd.domain.record import Record
from syncd.domain.vocabulary import EVENT_TYPES
from syncd.logs import configure_logging
from syncd.service.app import App
from syncd.web.ops import Readiness
from syncd.web.server import HttpServer
from tests.fakearxiv import FakeArxiv, make_record
from tests.integration.conftest import Site, Syncd, serving, sync_ok
from tests.integration.schemas import api_operations, check_against_its_schema
from tests.scenario import CALIBRATION_KEY, NESTPIPE

ADMIN_TOKEN = "an-operator-token-of-some-length"
HOOK_URL = "http://127.0.0.1:9/hooks/T000/B000/very-secret-path"


class TestSameAsTheCli:
    def test_papers(self, site: Site) -> None:
        """GET /api/v1/papers holds `syncd papers --json`'s rows (latest change first, where
        the CLI goes by author and key), also narrowed by author."""
        assert _by_key(site.get("/api/v1/papers").json()) == _by_key(site.syncd.json("papers"))
        mine = site.get("/api/v1/papers", params={"author": "Zhida Jiang"}).json()
        assert _by_key(mine) == _by_key(site.syncd.json("papers", "--author", "Zhida Jiang"))
        assert site.get("/api/v1/papers", params={"author": "Nobody"}).json() == []

    def test_papers_by_status(self, site: Site) -> None:
        """?status= keeps the CLI's papers of that status."""
        unlinked = site.get("/api/v1/papers", params={"status": "unlinked"}).json()
        expected = [p for p in site.syncd.json("papers") if p["status"] == "unlinked"]
        assert _by_key(unlinked) == _by_key(expected)
        assert expected

    @pytest.mark.parametrize("ref", [NESTPIPE, f"{NESTPIPE}v1", CALIBRATION_KEY])
    def test_history_by_key_or_id(self, site: Site, ref: str) -> None:
        """A paper's history, by key or arXiv id (any version), is `syncd history --json`."""
        answer = site.get(f"/api/v1/papers/{ref}/history")
        assert answer.status_code == 200
        assert answer.json() == site.syncd.json("history", ref)

    def test_one_paper(self, site: Site) -> None:
        """GET /api/v1/papers/{ref} is that paper's item of `syncd papers --json`."""
        (expected,) = [p for p in site.syncd.json("papers") if p["arxiv_id"] == NESTPIPE]
        assert site.get(f"/api/v1/papers/{NESTPIPE}").json() == expected
        assert expected["version"] == 2

    def test_events(self, site: Site) -> None:
        """GET /api/v1/events?limit=1000 is `syncd events --json`, oldest first, no Link."""
        answer = site.get("/api/v1/events", params={"limit": 1000})
        assert answer.json() == site.syncd.json("events")
        assert "link" not in answer.headers


class TestEventPaging:
    def test_pages_follow_the_link_header_to_the_end(self, site: Site) -> None:
        """Pages of 3 linked by rel="next" add up to the whole log, in order, once each."""
        seen: list[dict[str, Any]] = []
        url: str | None = "/api/v1/events?limit=3"
        while url is not None:
            answer = site.get(url)
            seen += answer.json()
            match = re.fullmatch(r'<([^>]+)>; rel="next"', answer.headers.get("link", ""))
            url = match.group(1) if match else None
        assert seen == site.syncd.json("events")
        assert len(seen) > 3

    def test_after_type_and_paper_narrow(self, site: Site) -> None:
        """?after= starts past a seq; ?type= and ?paper= keep only matching events."""
        every = site.syncd.json("events")
        after = site.get("/api/v1/events", params={"after": every[1]["seq"]}).json()
        assert after == every[2:]
        revised = site.get("/api/v1/events", params={"type": "paper.revised"}).json()
        assert [e["paper"]["arxiv_id"] for e in revised] == [NESTPIPE]
        of_paper = site.get("/api/v1/events", params={"paper": NESTPIPE}).json()
        assert [e["type"] for e in of_paper] == ["paper.linked", "paper.revised"]

    def test_the_default_limit_is_100(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """Without ?limit= a page holds 100 events and links to the rest."""
        for number in range(105):
            arxiv.publish(_paper(f"2601.{number:05d}"))
        sync_ok(syncd)
        with serving(syncd) as site:
            answer = site.get("/api/v1/events")
            assert len(answer.json()) == 100
            assert 'rel="next"' in answer.headers["link"]


class TestErrors:
    @pytest.mark.parametrize(
        ("query", "parameter"),
        [
            ("limit=0", "limit"),
            ("limit=1001", "limit"),
            ("limit=ten", "limit"),
            ("after=-1", "after"),
            ("after=99999999999999999999", "after"),
            ("type=paper.eaten", "type"),
            ("paper=%00", "paper"),
        ],
    )
    def test_bad_event_parameters_are_400_naming_them(
        self, site: Site, query: str, parameter: str
    ) -> None:
        """A bad parameter is a JSON 400 whose message names it."""
        answer = site.get(f"/api/v1/events?{query}")
        assert answer.status_code == 400
        assert answer.headers["content-type"] == "application/json"
        assert f"'{parameter}'" in answer.json()["error"]

    def test_bad_status_is_400(self, site: Site) -> None:
        """An unknown ?status= is a 400 naming status."""
        answer = site.get("/api/v1/papers", params={"status": "lost"})
        assert answer.status_code == 400
        assert "'status'" in answer.json()["error"]

    @pytest.mark.parametrize(
        "path",
        [
            "/api/v1/papers/no-such-paper",
            "/api/v1/papers/2699.99999/history",
            "/api/v1/papers/astro-ph/0601001",
            "/api/v1/events?paper=no-such-paper",
        ],
    )
    def test_unknown_paper_is_404(self, site: Site, path: str) -> None:
        """An unknown paper, by key or arXiv id, is a JSON 404 naming it."""
        answer = site.get(path)
        assert answer.status_code == 404
        assert list(answer.json()) == ["error"]
        assert "no paper" in answer.json()["error"]

    def test_unknown_api_path_and_writes(self, site: Site) -> None:
        """Unknown API paths are JSON 404s; writing methods are 405 with Allow."""
        assert site.get("/api/v1/nothing").json() == {"error": "not found"}
        answer = site.http.post("/api/v1/papers", json={})
        assert answer.status_code == 405
        assert answer.headers["allow"] == "GET, HEAD"

    def test_a_database_that_does_not_answer_is_503_without_details(self, syncd: Syncd) -> None:
        """With the database unreachable, the API answers 503 and names nothing of it."""
        # The server logs the database's error with its traceback: as JSON, as syncd run
        # does, not through structlog's default console renderer, which drew it with rich
        # for about 15 s a request.
        configure_logging("warning", "json", io.StringIO())
        settings = load_settings(syncd.config)
        unreachable = "postgresql+psycopg://syncd:hunter2@127.0.0.1:1/record"
        database = settings.database.model_copy(update={"url": unreachable})
        app = App.open(settings.model_copy(update={"database": database}))
        ready = Readiness(True, {})
        try:
            with HttpServer("127.0.0.1", 0, ready=lambda: ready, app=app) as server:
                base = f"http://127.0.0.1:{server.port}"
                answer = httpx.get(f"{base}/api/v1/papers", timeout=30)
                page = httpx.get(f"{base}/", timeout=30)
        finally:
            app.close()
        assert answer.status_code == 503
        assert answer.json() == {"error": "the database is unavailable"}
        assert page.status_code == 503
        for response in (answer, page):
            assert "hunter2" not in response.text
            assert "Traceback" not in response.text


class TestOperatorView:
    def test_webhooks_is_404_without_a_token(self, site: Site) -> None:
        """With no admin_token configured, /api/v1/webhooks does not exist."""
        answer = site.get("/api/v1/webhooks", headers={"Authorization": "Bearer anything-at-all"})
        assert answer.status_code == 404

    @pytest.mark.slow
    def test_webhooks_needs_the_token(self, syncd: Syncd) -> None:
        """With a token: 401 without it or with a wrong one, the CLI's JSON with it, no URL path."""
        syncd.sections = (
            f'[http]\nadmin_token = "{ADMIN_TOKEN}"\n'
            f'[[webhooks]]\nname = "lab-chat"\nurl = "{HOOK_URL}"\n'
            'secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"\n'
        )
        sync_ok(syncd)
        with serving(syncd) as site:
            assert site.get("/api/v1/webhooks").status_code == 401
            wrong = site.get("/api/v1/webhooks", headers={"Authorization": "Bearer wrong-token"})
            assert wrong.status_code == 401
            assert wrong.headers["www-authenticate"] == "Bearer"
            good = site.get("/api/v1/webhooks", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
            assert good.status_code == 200
            assert good.json() == syncd.json("webhooks", "list")
            assert good.json()[0]["name"] == "lab-chat"
            assert "very-secret-path" not in good.text
            assert "whsec_" not in good.text


class TestSchema:
    def test_openapi_lists_every_route(self, site: Site) -> None:
        """/api/v1/openapi.json documents the API routes and nothing else."""
        schema = site.get("/api/v1/openapi.json").json()
        assert set(schema["paths"]) == {
            "/api/v1/papers",
            "/api/v1/papers/{ref}",
            "/api/v1/papers/{ref}/history",
            "/api/v1/events",
            "/api/v1/webhooks",
            "/api/v1/authors",
            "/api/v1/authors/{name}",
            "/api/v1/authors/{name}/confirm",
            "/api/v1/authors/{name}/reject",
            "/api/v1/groups",
            "/api/v1/groups/{name}",
            "/api/v1/groups/{name}/members",
            "/api/v1/groups/{name}/papers",
            "/api/v1/groups/{name}/report",
            "/api/v1/publications/review",
            "/api/v1/publications/{paper}/confirm",
            "/api/v1/publications/{paper}/reject",
        }
        event_types = schema["components"]["schemas"]["EventType"]["enum"]
        assert event_types == list(EVENT_TYPES)

    def test_docs_page_runs_no_inline_script(self, site: Site) -> None:
        """/api/v1/docs points at the schema, and its CSP allows no inline script."""
        answer = site.get("/api/v1/docs")
        assert answer.status_code == 200
        assert "/api/v1/openapi.json" in answer.text
        csp = answer.headers["content-security-policy"]
        script_src = next(d for d in csp.split(";") if d.strip().startswith("script-src"))
        assert "unsafe-inline" not in script_src
        assert "<script>" not in answer.text


@pytest.mark.slow
def test_every_route_keeps_its_schema(site: Site) -> None:
    """For generated input every route answers without a 5xx and as its schema says."""
    operations = api_operations(site)
    # 5 of papers, events, webhooks; 6 of authors; 5 of groups, 2 more reads of them;
    # 3 of publications' review
    assert len(operations) == 21
    for operation in operations:
        check_against_its_schema(operation, examples=30)


def _paper(arxiv_id: str) -> Record:
    return make_record(arxiv_id, authors=("Zhida Jiang", "Zhaolong Xing"))


def _by_key(papers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(papers, key=lambda paper: paper["key"])
