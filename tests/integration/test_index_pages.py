"""The index, the status strip, subscribing and the API docs over HTTP.

What the browser tests (test_browser_index.py) see, read here as HTML, plus
the storage reads they stand on and the daemon's next sync.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lxml import etree
from lxml import html as lxml_html

from syncd.domain.vocabulary import EventType, RunStatus
from syncd.storage import HarvestProgress, Storage
from tests.fakearxiv import FakeArxiv, status
from tests.helpers import eventually
from tests.integration.conftest import (
    Site,
    Syncd,
    harvest_stopped_on_its_second_page,
    serving,
    sync_ok,
)
from tests.integration.daemons import Daemon
from tests.receiver import Receiver
from tests.scenario import AUTHOR, NESTPIPE

ATOM = "{http://www.w3.org/2005/Atom}"
OUTAGE = status(503, body=b"Service Unavailable")


def _tree(site: Site, path: str) -> lxml_html.HtmlElement:
    answer = site.get(path)
    assert answer.status_code == 200, answer.text[:300]
    return lxml_html.fromstring(answer.text)


def _titles(page: lxml_html.HtmlElement) -> list[str]:
    return [a.text_content() for a in page.xpath("//ul[@class='papers']/li/a[@class='title']")]


def test_storage_tells_each_authors_runs_and_each_papers_latest_change(
    syncd: Syncd, arxiv: FakeArxiv
) -> None:
    """tally: the good runs, the failed one after them; latest_changes: events, else
    revisions."""
    sync_ok(syncd)
    arxiv.revise(NESTPIPE, title="NestPipe, revised")
    sync_ok(syncd)
    arxiv.inject_always(OUTAGE)
    assert syncd("sync").code == 1
    storage = Storage(syncd.database_url)
    try:
        tally = storage.runs.tally()
        assert (tally.authors, tally.synced, tally.failing, tally.running) == (1, 0, 1, 0)
        assert tally.last_synced == storage.runs.last_success()
        assert tally.all_failed is None  # two good cycles came first
        (failed,) = storage.runs.recent(AUTHOR, limit=1)
        assert failed.status is RunStatus.FAILED and "503" in (failed.error or "")
        papers = storage.papers.all()
        changes = storage.papers.latest_changes([p.id for p in papers])
        assert set(changes) == {p.id for p in papers}
        by_key = {p.arxiv_id or p.key: changes[p.id] for p in papers}
        assert (by_key[NESTPIPE].event_type, by_key[NESTPIPE].kinds) == (
            EventType.REVISED,
            ("version", "title"),
        )
        unlinked = [changes[p.id] for p in papers if p.arxiv_id is None]
        assert unlinked and all(c.event_type is None for c in unlinked)
    finally:
        storage.close()


class TestIndex:
    def test_latest_change_first_with_words(self, site: Site) -> None:
        """NestPipe's v2 heads the index; each paper says when and what changed, newest first."""
        page = _tree(site, "/")
        first = page.xpath("//ul[@class='papers']/li")[0]
        assert first.findtext(".//a[@class='title']/bdi").startswith("NestPipe: Scaling")
        assert first.findtext(".//span[@class='what']") == "Version, Title, Authors, Abstract"
        stamps = [t.get("datetime") for t in page.xpath("//span[@class='when']/time")]
        assert stamps == sorted(stamps, reverse=True)
        assert page.findtext(".//p[@class='found']").startswith("9 papers, latest change first")

    def test_search_by_title_id_and_author(self, site: Site) -> None:
        """?q= finds by title words, by arXiv id (as written on arXiv), by a co-author."""
        assert len(_titles(_tree(site, "/?q=nestpipe+scaling"))) == 1
        assert _titles(_tree(site, f"/?q=arXiv:{NESTPIPE}v2"))[0].startswith("NestPipe")
        record = site.syncd.json("history", NESTPIPE)[-1]["record"]
        coauthor = next(a for a in record["authors"] if a != AUTHOR)
        assert any(t.startswith("NestPipe") for t in _titles(_tree(site, f"/?q={coauthor}")))
        assert _titles(_tree(site, "/?q=nestpipe&status=unlinked")) == []
        found = _tree(site, "/?q=zzzz")
        assert found.findtext(".//p[@class='found']").startswith("0 papers match")

    def test_a_search_goes_back_only_into_its_own_field(self, site: Site) -> None:
        """What was searched is escaped in the input's value, and nowhere else on the page."""
        hostile = '"><script>window.pwned=1</script> Send Bitcoin'
        answer = site.get("/", params={"q": hostile})
        assert answer.status_code == 200
        assert "<script>window.pwned" not in answer.text
        assert answer.text.count("Send Bitcoin") == 1
        page = lxml_html.fromstring(answer.text)
        assert page.xpath("//input[@name='q']/@value") == [hostile]
        assert "Bitcoin" not in page.findtext(".//title") + page.findtext(".//h1")

    def test_a_search_is_bounded(self, site: Site) -> None:
        """Over 100 characters, or a control character: a 400 page that repeats none of it."""
        for asked in ("x" * 101, "nest\x00pipe"):
            answer = site.get("/", params={"q": asked})
            assert answer.status_code == 400
            assert answer.headers["content-type"].startswith("text/html")
            assert "xxxxx" not in answer.text and "nest" not in answer.text
        assert site.get("/", params={"q": "x" * 100}).status_code == 200

    def test_author_links_and_feed(self, site: Site) -> None:
        """A followed author's index links their feed in <head>; an unknown name is not shown."""
        page = _tree(site, f"/?author={AUTHOR}")
        assert page.xpath("//h1")[0].text_content() == f"Papers of {AUTHOR}"
        feeds = page.xpath("//head/link[@rel='alternate'][@type='application/atom+xml']/@href")
        assert feeds == ["/feeds/events.atom", "/feeds/events.atom?author=Zhida%20Jiang"]
        unknown = _tree(site, "/?author=Send+Bitcoin+To+Me")
        assert unknown.xpath("//h1")[0].text_content() == "Papers"

    def test_a_withdrawn_paper_is_marked_in_the_index_and_the_feed(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """Withdrawn: a mark on the index's line, "[Withdrawn]" and a summary in the feed."""
        sync_ok(syncd)
        arxiv.withdraw(NESTPIPE, "An error in Lemma 2.")
        sync_ok(syncd)
        with serving(syncd) as site:
            first = _tree(site, "/").xpath("//ul[@class='papers']/li")[0]
            assert first.findtext(".//span[@class='withdrawn-mark']") == "withdrawn"
            feed = etree.fromstring(site.get("/feeds/events.atom").content)
            entry = feed.find(f"{ATOM}entry")
            assert entry.findtext(f"{ATOM}title").startswith("[Withdrawn] NestPipe")
            assert entry.findtext(f"{ATOM}summary") == (
                "This paper has been withdrawn by its authors from arXiv."
            )
            terms = [c.get("term") for c in entry.iter(f"{ATOM}category")]
            assert terms == [EventType.REVISED, "withdrawn"]
            others = feed.findall(f"{ATOM}entry")[1:]
            assert not any(e.findtext(f"{ATOM}title").startswith("[Withdrawn]") for e in others)


class TestStatusStrip:
    def test_every_page_counts_in_words_and_is_honest_about_the_next_sync(self, site: Site) -> None:
        """One line: the author counted, synced; no scheduler here: "not known"; the details
        (the author's last success) on /authors."""
        for path in ("/", "/events", f"/papers/{NESTPIPE}", "/subscribe", "/authors"):
            strip = _tree(site, path).xpath("//aside[@class='sync-status']")[0]
            text = " ".join(strip.text_content().split())
            assert text.startswith("1 author: 1 synced (last "), path
            assert text.endswith("; next sync not known here details"), path
            assert len(strip.xpath(".//p")) == 1 and not strip.xpath(".//li"), path
        assert "sync-status" not in site.get("/papers/nothing-such").text  # errors: no database
        authors = _tree(site, "/authors")
        listed = authors.xpath("//ul[contains(@class, 'authors')]")[0].text_content()
        assert "last success " in listed
        details = " ".join(authors.xpath("//section[@id='sync']")[0].text_content().split())
        assert "this web server runs without the scheduler" in details

    def test_the_harvester_has_its_word_and_its_details_when_enabled(self, syncd: Syncd) -> None:
        """Off: neither.  On: none complete yet; one that stopped on a cut page (when, why,
        the page it kept) after a complete one; one running; then complete (when, the next
        ``from``); one let go mid-way without an error.  The strip says it in a word, /authors
        in full."""

        def harvest_lines() -> tuple[str, str]:
            with serving(syncd) as site:
                strip = _tree(site, "/").xpath("//aside[@class='sync-status']")[0]
                details = _tree(site, "/authors").xpath("//section[@id='sync']")[0]
            word = strip.xpath(".//span[@class='harvest']")
            found = details.xpath(".//li[contains(@class, 'harvest')]")
            if not found:
                assert not word
                return "", ""
            return (
                " ".join(word[0].text_content().split()),
                " ".join(found[0].text_content().split()),
            )

        sync_ok(syncd)
        assert harvest_lines() == ("", "")
        syncd.sections = f'[harvest]\nenabled = true\nurl = "{syncd.arxiv.oai_url}"\n'
        assert harvest_lines() == ("harvest not run yet", "arXiv harvest no complete harvest yet")
        syncd.sections = ""  # the helper enables it
        harvest_stopped_on_its_second_page(syncd)
        word, line = harvest_lines()
        assert word.startswith("harvest failing since ")
        assert line.startswith("arXiv harvest last harvested ")
        assert "last harvest failed " in line and "(cut short?)" in line
        assert "(1 page applied, the next harvest resumes): the OAI-PMH page" in line
        other = Storage(syncd.database_url)
        try:
            assert other.harvests.claim() is not None
            word, line = harvest_lines()
            assert word == "harvest running"
            assert "harvesting now, 1 page applied" in line
            other.harvests.release()
        finally:
            other.close()
        assert syncd("harvest").code == 0
        word, line = harvest_lines()
        assert word == "harvest ok"
        assert f", next from {syncd.arxiv.oai.today.isoformat()}" in line
        assert "failed" not in line and "applied" not in line
        # One let go mid-way with no error (a daemon shut down): what it kept, no alarm.
        other = Storage(syncd.database_url)
        try:
            assert other.harvests.claim() is not None
            other.apply_harvest_page(
                [], HarvestProgress(datetime(2026, 6, 2, 12, tzinfo=UTC), 0, "next", 3)
            )
            other.harvests.release()
        finally:
            other.close()
        word, line = harvest_lines()
        assert word == "harvest stopped"
        assert line.endswith(" stopped: 1 page applied, the next harvest resumes")

    def test_a_first_run_that_failed_says_so(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """No sync ever succeeded: the index says so, with the reason, instead of bare counts."""
        arxiv.inject_always(OUTAGE)
        assert syncd("sync").code == 1
        with serving(syncd) as site:
            page = _tree(site, "/")
        message = " ".join(page.xpath("//p[@class='all-failed']")[0].text_content().split())
        assert message.startswith("No papers from arXiv yet: every sync so far failed (last: ")
        assert "HTTP 503" in page.xpath("//p[@class='all-failed']/bdi")[0].text_content()
        assert "The 9 papers below come from the seed documents" in message

    def test_the_daemon_tells_its_next_sync(
        self, syncd: Syncd, receiver: Receiver, daemons: list[Daemon]
    ) -> None:
        """Under `syncd run` the strip shows the scheduler's next cycle: an interval away."""
        daemon = Daemon(syncd, receiver, interval=3600)
        daemons.append(daemon)
        eventually(daemon.ready, 20, "ready")
        asked = datetime.now(UTC)
        page = lxml_html.fromstring(daemon.get("/").text)
        (when,) = page.xpath("//aside[@class='sync-status']//span[@class='next']/time/@datetime")
        assert asked < datetime.fromisoformat(when) <= asked + timedelta(seconds=3600)
        daemon.stop()


def test_subscribing_is_explained_with_the_feeds_addresses(site: Site) -> None:
    """/subscribe: what a feed reader is, each feed's full address (an author's: on their
    page, or by name in a form: never a list of every author); the nav links it."""
    page = _tree(site, "/subscribe")
    assert "feed reader" in page.xpath("//main/p")[0].text_content()
    feeds = page.xpath("//dl[@class='feeds']//a[@class='feed']/code/text()")
    assert feeds == [f"{site.url}/feeds/events.atom"]
    (form,) = page.xpath("//dl[@class='feeds']//form")
    assert (form.get("action"), form.xpath(".//input/@name")) == ("/feeds/events.atom", ["author"])
    feed = site.get("/feeds/events.atom", params={"author": AUTHOR})
    assert feed.status_code == 200 and "atom" in feed.headers["content-type"]
    assert AUTHOR not in page.xpath("//dl[@class='feeds']")[0].text_content()
    assert _tree(site, "/").xpath("//header//nav/a[text()='Subscribe']/@href") == ["/subscribe"]


def test_the_api_docs_load_nothing_from_elsewhere(site: Site) -> None:
    """/api/v1/docs: Swagger UI 5 from the package, scripts from this site only."""
    answer = site.get("/api/v1/docs")
    page = lxml_html.fromstring(answer.text)
    scripts = page.xpath("//script/@src")
    assert scripts == ["/static/swagger-ui/swagger-ui-bundle.js", "/static/docs.js"]
    assert all(not href.startswith("http") for href in page.xpath("//link/@href"))
    csp = dict(
        d.strip().split(" ", 1) for d in answer.headers["content-security-policy"].split(";")
    )
    assert csp["script-src"] == "'self'"
    assert "http" not in answer.headers["content-security-policy"]
    bundle = site.get(scripts[0])
    assert bundle.status_code == 200
    assert "javascript" in bundle.headers["content-type"]
    # Swagger UI 5: the one that renders OpenAPI 3.1, which FastAPI writes.
    assert 'PACKAGE_VERSION:"5.' in bundle.text
    assert site.get("/api/v1/openapi.json").json()["openapi"].startswith("3.1")
