"""The web pages over HTTP: what they show, what they refuse, and what they never carry."""

from __future__ import annotations

import re

import pytest
from lxml import html as lxml_html

from tests.fakearxiv import FakeArxiv, make_record
from tests.integration.conftest import (
    HOSTILE_ABSTRACT,
    HOSTILE_ID,
    Site,
    Syncd,
    hostile_paper,
    serving,
    sync_ok,
)
from tests.scenario import CALIBRATION_KEY, NESTPIPE

BIDI_ID = "2601.00667"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
HOOK_URL = "http://127.0.0.1:9/services/T000/B000/token-in-the-path"
ADMIN_TOKEN = "operator-token-never-shown-anywhere"


def _tree(site: Site, path: str) -> lxml_html.HtmlElement:
    answer = site.get(path)
    assert answer.status_code == 200, answer.text[:300]
    return lxml_html.fromstring(answer.text)


class TestWhatPagesShow:
    def test_papers_with_status_counts_and_filters(self, site: Site) -> None:
        """/ lists every paper with counts per status; ?status= and ?author= narrow it."""
        page = _tree(site, "/")
        titles = page.xpath("//ul[@class='papers']/li/a[@class='title']")
        assert len(titles) == len(site.syncd.json("papers"))
        counts = {
            a.text.strip(): int(a.findtext("b")) for a in page.xpath("//p[@class='counts']/a")
        }
        assert counts["tracked"] == sum(p["status"] == "tracked" for p in site.syncd.json("papers"))
        tracked = _tree(site, "/?status=tracked").xpath("//ul[@class='papers']/li")
        assert len(tracked) == counts["tracked"]
        assert _tree(site, "/?author=Nobody").xpath("//ul[@class='papers']/li") == []

    def test_a_paper_page_shows_the_title_diff_and_every_revision(self, site: Site) -> None:
        """NestPipe's page: every revision in its submission history, each change against the
        one before it (newest first), and v2's title as <del>/<ins> words."""
        page = _tree(site, f"/papers/{NESTPIPE}")
        labels = page.xpath("//ol[@class='history']/li/span[@class='label']")
        assert [s.text_content() for s in labels] == ["seed", "v1", "v2"]
        headings = page.xpath("//ol[@class='timeline']//*[@class='source']")
        assert [s.text_content() for s in headings] == ["v2 against v1", "v1 against seed"]
        sources = page.xpath("//ol[@class='timeline']//*[@class='from']")
        assert [s.text_content() for s in sources] == [
            "arXiv v2, seen by a sync",
            "arXiv v1, seen by a sync",
        ]
        title_change = page.xpath("//dd[@class='change-title']")[0]
        assert [d.text_content() for d in title_change.iter("del")] == ["Large-Scale", "on", "via"]
        assert [i.text_content() for i in title_change.iter("ins")] == ["Scaling", "to", "with"]
        authors = page.xpath("//dd[@class='change-authors']")[0].text_content()
        assert "moved: Zhaolong Xing (#2 → #1), Zhida Jiang (#1 → #2)" in authors

    def test_the_calibration_papers_seed_abstracts_show_as_a_diff(self, site: Site) -> None:
        """The two seed documents' abstracts of the calibration paper read as a word diff."""
        page = _tree(site, f"/papers/{CALIBRATION_KEY}")
        (abstract,) = page.xpath("//dd[@class='change-abstract']")[:1]
        assert abstract.xpath(".//del") and abstract.xpath(".//ins")
        history = site.syncd.json("history", CALIBRATION_KEY)
        assert history[1]["source"] == "seed:001_486f742ac3512806.txt"
        assert "abstract" in history[1]["kinds"]

    def test_a_removed_paper_says_so_and_names_itself(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """A removed paper's page says since when it left the author's results, its removal is
        announced with its title, and /events says so in those words."""
        syncd.sections = "[sync]\nremoval_after = 1\n"
        sync_ok(syncd)
        arxiv.remove(NESTPIPE)
        sync_ok(syncd)
        with serving(syncd) as site:
            page = _tree(site, f"/papers/{NESTPIPE}")
            events = _tree(site, "/events")
        banner = page.xpath("//p[@class='banner removed']")[0].text_content()
        assert banner.startswith("No longer in the author's arXiv results since 20")
        summary = page.xpath("//ol[@class='announced']/li/span[@class='summary']")[0]
        assert summary.text_content() == "No longer in the author's arXiv results, v1"
        headline = events.xpath("//ol[@class='events']/li//a[@class='headline']")[0]
        assert headline.text_content() == (
            f"NestPipe: … ({NESTPIPE}) v1: no longer in the author's arXiv results"
        )
        removal = events.xpath("//p[@class='removal']")[0].text_content()
        assert removal.startswith("No longer in the author's arXiv results. Last known: NestPipe")

    def test_events_page_pages_back(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """/events shows 50 newest first and links to the older ones, which follow on."""
        for number in range(55):
            arxiv.publish(make_record(f"2601.{number:05d}", authors=("Zhida Jiang",)))
        sync_ok(syncd)
        with serving(syncd) as site:
            first = _tree(site, "/events")
            older = first.xpath("//p[@class='pager']/a/@href")
            assert len(first.xpath("//ol[@class='events']/li")) == 50
            rest = _tree(site, older[0]).xpath("//ol[@class='events']/li")
        assert len(rest) == len(syncd.json("events")) - 50

    @pytest.mark.parametrize(
        "pasted",
        [
            f"arXiv:{NESTPIPE}",
            f"{NESTPIPE}v1",
            f"https://arxiv.org/abs/{NESTPIPE}v2",
            f"arxiv.org/pdf/{NESTPIPE}v1.pdf",
        ],
    )
    def test_a_paper_is_found_as_people_paste_it(self, site: Site, pasted: str) -> None:
        """The citation form, a versioned id and arxiv.org addresses reach the paper on its
        page, its feed, the API and `syncd history`."""
        assert (
            _tree(site, f"/papers/{pasted}").findtext(".//h1/bdi")
            == site.get(f"/api/v1/papers/{NESTPIPE}").json()["title"]
        )
        assert site.get(f"/api/v1/papers/{pasted}").json()["arxiv_id"] == NESTPIPE
        assert site.get(f"/api/v1/papers/{pasted}/history").status_code == 200
        assert site.get(f"/feeds/papers/{pasted}.atom").status_code == 200
        history = site.syncd("history", pasted)
        assert history.code == 0, history.err
        assert NESTPIPE in history.out.splitlines()[0]

    def test_unknown_paper_and_bad_parameter_are_pages(self, site: Site) -> None:
        """A 404 and a 400 on the pages are HTML a person can read."""
        missing = site.get("/papers/no-such-paper")
        assert missing.status_code == 404
        message = lxml_html.fromstring(missing.text).findtext(".//p[@class='error']")
        assert message == "no paper with key or arXiv id 'no-such-paper'"
        bad = site.get("/?status=lost")
        assert bad.status_code == 400
        assert bad.headers["content-type"].startswith("text/html")


class TestSafety:
    @pytest.fixture
    def hostile(self, syncd: Syncd, arxiv: FakeArxiv) -> Site:
        """The record holds a paper whose title and abstract carry script."""
        arxiv.publish(hostile_paper())
        sync_ok(syncd)
        with serving(syncd) as site:
            yield site

    @pytest.mark.parametrize(
        "path", ["/", f"/papers/{HOSTILE_ID}", "/events", "/feeds/events.atom"]
    )
    def test_arxiv_markup_is_escaped_everywhere(self, hostile: Site, path: str) -> None:
        """No page or feed carries the hostile markup as markup; pages keep it as text."""
        answer = hostile.get(path)
        assert answer.status_code == 200
        assert "<script>window.pwned" not in answer.text
        assert "<img src=x" not in answer.text
        assert "<b>Xing" not in answer.text
        if path in ("/", f"/papers/{HOSTILE_ID}", "/events"):
            assert "&lt;script&gt;window.pwned" in answer.text
            tree = lxml_html.fromstring(answer.text)
            assert tree.xpath("//script") == []
            assert tree.xpath("//main//img") == []

    @pytest.mark.parametrize("path", ["/", f"/papers/{BIDI_ID}", "/events"])
    def test_each_arxiv_string_is_isolated(self, syncd: Syncd, arxiv: FakeArxiv, path: str) -> None:
        """An unclosed U+202E or U+2067 stays inside its own <bdi>: syncd's words keep
        their order (a headline drops the controls, <title> isolates with FSI…PDI)."""
        arxiv.publish(
            make_record(
                BIDI_ID,
                title="Evil \u202ereversed: \u2067title",
                abstract="An \u202eabstract",
                authors=("Zhida Jiang", "Eve \u2067Mallory"),
            )
        )
        sync_ok(syncd)
        with serving(syncd) as site:
            answer = site.get(path)
        tree = lxml_html.fromstring(answer.text)
        held = [t for t in tree.xpath("//body//text()") if re.search("[\u202e\u2067]", t)]
        assert held, answer.text  # the controls are shown, not dropped, in the page body
        for text in held:
            assert text.getparent().tag == "bdi" and not text.is_tail, text
        if path == f"/papers/{BIDI_ID}":
            assert tree.findtext("head/title") == (
                "\u2068Evil \u202ereversed: \u2067title\u2069 · syncd"
            )

    def test_the_api_is_data_a_browser_will_not_render(self, hostile: Site) -> None:
        """The API returns arXiv's text as JSON strings, typed so no browser sniffs it as HTML."""
        answer = hostile.get("/api/v1/events")
        assert answer.headers["content-type"] == "application/json"
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["content-security-policy"].startswith("default-src 'none'")
        assert HOSTILE_ABSTRACT in [e["record"]["abstract"] for e in answer.json()]

    @pytest.mark.parametrize("path", ["/", f"/papers/{NESTPIPE}", "/events", "/papers/nothing"])
    def test_pages_allow_no_inline_script(self, site: Site, path: str) -> None:
        """Every page's CSP allows no script at all (so none inline) and only our styles."""
        csp = site.get(path).headers["content-security-policy"]
        directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
        assert directives["default-src"] == "'none'"
        assert "script-src" not in directives
        assert "unsafe-inline" not in csp
        assert directives["style-src"] == "'self'"

    def test_the_csp_is_pinned(self, site: Site) -> None:
        """Pages may load our styles and images only, and never be framed or rebased."""
        csp = site.get("/events").headers["content-security-policy"]
        assert _directives(csp) == {
            "default-src": "'none'",
            "style-src": "'self'",
            "img-src": "'self'",
            "form-action": "'self'",
            "base-uri": "'none'",
            "frame-ancestors": "'none'",
        }
        docs = _directives(site.get("/api/v1/docs").headers["content-security-policy"])
        assert (docs["base-uri"], docs["frame-ancestors"]) == ("'none'", "'none'")

    @pytest.mark.slow
    def test_no_response_carries_a_secret_url_or_database(self, syncd: Syncd) -> None:
        """A crawl of every page, feed and API answer finds no secret, hook URL or database URL."""
        syncd.sections = (
            f'[http]\nadmin_token = "{ADMIN_TOKEN}"\n'
            f'[[webhooks]]\nname = "lab-chat"\nurl = "{HOOK_URL}"\nsecret = "{SECRET}"\n'
        )
        sync_ok(syncd)
        with serving(syncd) as site:
            bodies = [site.get(path) for path in _crawl(site)]
            bodies.append(site.get("/api/v1/webhooks", headers={"Authorization": "Bearer x" * 3}))
        assert len(bodies) > 10
        forbidden = [SECRET, HOOK_URL, "token-in-the-path", ADMIN_TOKEN, syncd.database_url]
        forbidden.append(str(syncd.workdir))
        for answer in bodies:
            text = answer.text + str(answer.headers)
            for secret in forbidden:
                assert secret not in text, answer.url
            assert "Traceback" not in text


class TestReflectedInput:
    @pytest.mark.parametrize(
        ("asked", "path"), [("/events/", "/events"), ("/healthz/", "/healthz")]
    )
    def test_a_slash_redirect_names_no_host_a_client_sent(
        self, site: Site, asked: str, path: str
    ) -> None:
        """The trailing-slash redirect is relative: a forged Host cannot send a reader elsewhere."""
        answer = site.get(asked, headers={"Host": "evil.example"})
        assert answer.status_code == 307
        assert answer.headers["location"] == path

    def test_a_slash_redirect_is_under_public_url(self, site: Site) -> None:
        """With [http] public_url the redirect goes there."""
        site.syncd.sections = '[http]\npublic_url = "https://syncd.example.org/record"\n'
        with serving(site.syncd) as public:
            answer = public.get("/events/?before=9", headers={"Host": "evil.example"})
        assert answer.headers["location"] == "https://syncd.example.org/record/events?before=9"

    def test_an_author_nobody_follows_gets_no_page(self, site: Site) -> None:
        """/events?author= naming no known author is a 404 page that does not repeat the name."""
        answer = site.get("/events", params={"author": "Send Bitcoin To Me"})
        assert answer.status_code == 404
        assert answer.headers["content-type"].startswith("text/html")
        assert "Bitcoin" not in answer.text
        everyone = _tree(site, "/events?author=")  # "all", as the papers' filter sends it
        assert everyone.findtext(".//h1") == "Events"

    def test_a_followed_authors_events_say_whose(self, site: Site) -> None:
        """The events of a followed author are headed with the name, as before."""
        page = _tree(site, "/events?author=Zhida+Jiang")
        assert page.findtext(".//h1") == "Events of Zhida Jiang"
        assert page.xpath("//ol[@class='events']/li")


def _directives(csp: str) -> dict[str, str]:
    return dict(d.strip().split(" ", 1) for d in csp.split(";"))


def _crawl(site: Site) -> list[str]:
    """Every same-site link reachable from / (two hops), and the API and feed roots."""
    seen = {"/", "/api/v1/openapi.json", "/api/v1/papers", "/api/v1/events", "/nope", "/api/v1/x"}
    frontier = ["/"]
    for _ in range(2):
        found: list[str] = []
        for path in frontier:
            answer = site.get(path)
            if answer.headers.get("content-type", "").startswith("text/html"):
                found += re.findall(r'href="(/[^"]*)"', answer.text)
        frontier = [p.replace("&amp;", "&") for p in found if p not in seen]
        seen |= set(frontier)
    return sorted(seen)
