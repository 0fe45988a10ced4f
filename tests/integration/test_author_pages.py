"""The authors' pages over HTTP (issue 22, item 6): identifiers, status, papers, feed, escaping."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from lxml import html as lxml_html

from tests.fakearxiv import FakeArxiv, status
from tests.integration.ada import (
    ADA,
    ADA_PAPERS,
    ARXIV_ID,
    GOOD_ORCID,
    HOSTILE_NAME,
    HOSTILE_REASON,
    follow_ada,
    page_of,
)
from tests.integration.conftest import Site, Syncd, serving
from tests.scenario import AUTHOR


@pytest.fixture
def authors_site(syncd: Syncd, arxiv: FakeArxiv) -> Iterator[Site]:
    follow_ada(syncd, arxiv)
    with serving(syncd) as running:
        yield running


def _tree(site: Site, path: str) -> lxml_html.HtmlElement:
    answer = site.get(path)
    assert answer.status_code == 200, answer.text[:300]
    return lxml_html.fromstring(answer.text)


class TestAuthorPages:
    def test_the_authors_page_links_every_author(self, authors_site: Site) -> None:
        page = _tree(authors_site, "/authors")
        links = {
            a.text_content(): a.get("href")
            for a in page.xpath("//ul[contains(@class, 'authors')]/li/a[@class='title']")
        }
        assert links == {name: page_of(name) for name in (AUTHOR, ADA, HOSTILE_NAME)}
        assert page.xpath("//header//nav/a[@href='/authors']")
        assert f"https://orcid.org/{GOOD_ORCID}" in page.xpath("//a/@href")

    def test_the_index_links_each_author(self, authors_site: Site) -> None:
        index = _tree(authors_site, "/")
        hrefs = index.xpath("//p[contains(@class, 'authors')]/a[@class='author-page']/@href")
        assert sorted(hrefs) == sorted(page_of(n) for n in (AUTHOR, ADA, HOSTILE_NAME))
        for href in hrefs:
            assert authors_site.get(href).status_code == 200

    def test_an_author_page(self, authors_site: Site) -> None:
        """Identifiers linked, a status line, the feed announced, candidates with reasons."""
        page = _tree(authors_site, page_of(ADA))
        assert page.xpath("//h1/bdi")[0].text_content() == ADA
        hrefs = page.xpath("//a/@href")
        assert f"https://orcid.org/{GOOD_ORCID}" in hrefs
        assert f"https://arxiv.org/a/{ARXIV_ID}" in hrefs
        (feed,) = page.xpath("//link[@rel='alternate' and @type='application/atom+xml']/@href")[1:]
        assert feed == "/feeds/events.atom?author=Ada+Lovelace"
        assert authors_site.get(feed).status_code == 200
        exports = [h for h in hrefs if "/papers." in h]
        assert exports == [f"{page_of(ADA)}/papers.{s}" for s in ("bib", "json", "ris")]
        assert all(authors_site.get(link).status_code == 200 for link in exports)
        line = page.xpath("//p[@class='status-line']")[0].text_content()
        assert "last success 20" in line and "next sync 20" in line
        candidates = page.xpath("//h2[.='Candidates']/following-sibling::ul[1]/li")
        reasons = {
            li.xpath(".//span[@class='arxiv']")[0].text: li.xpath(
                ".//*[contains(@class, 'reason')]/bdi"
            )[0].text_content()
            for li in candidates
        }
        assert set(reasons) == set(ADA_PAPERS)
        assert reasons["2602.10001"] == HOSTILE_REASON  # shown as text, not markup
        assert reasons["2602.10002"] == "no reason recorded"
        assert page.xpath("//h2[.='Tracked papers']/following-sibling::p[1]")[0].text == "None yet."

    def test_user_strings_are_escaped_and_isolated(self, authors_site: Site) -> None:
        answer = authors_site.get(page_of(HOSTILE_NAME))
        assert answer.status_code == 200
        assert "<b>Eve</b>" not in answer.text and "<i>nothing</i>" not in answer.text
        assert "&lt;b&gt;Eve&lt;/b&gt; &amp; &#39;Mallory&#39;" in answer.text
        page = lxml_html.fromstring(answer.text)
        assert page.xpath("//h1/bdi")[0].text_content() == HOSTILE_NAME
        ada = authors_site.get(page_of(ADA)).text
        assert "shares &lt;i&gt;nothing&lt;/i&gt; &amp; more" in ada
        csp = answer.headers["content-security-policy"]
        assert "script-src" not in csp and "default-src 'none'" in csp
        assert "<script" not in answer.text

    def test_an_unknown_author_is_a_404_page(self, authors_site: Site) -> None:
        answer = authors_site.get("/authors/Nobody%20Here")
        assert answer.status_code == 404
        assert answer.headers["content-type"].startswith("text/html")
        assert "Nobody Here" not in answer.text


def test_a_failed_cycle_shows_with_its_reason(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """An author whose cycle failed says so, and why, on its page and in `authors list`."""
    follow_ada(syncd, arxiv)
    arxiv.inject(status(503, times=9, when=lambda p: ADA in p.get("search_query", "")))
    assert syncd("sync").code == 1
    listed = {a["name"]: a for a in syncd.json("authors", "list")}
    assert listed[ADA]["last_failure"] is not None
    assert "503" in listed[ADA]["last_error"]
    with serving(syncd) as site:
        line = _tree(site, page_of(ADA)).xpath("//p[@class='status-line']")[0].text_content()
    assert "last failure 20" in line and "503" in line


def test_a_removed_author_is_no_longer_followed_on_its_pages(
    syncd: Syncd, arxiv: FakeArxiv
) -> None:
    follow_ada(syncd, arxiv)
    assert syncd("authors", "remove", ADA).code == 0
    with serving(syncd) as site:
        author = _tree(site, page_of(ADA))
        assert "no longer followed" in author.xpath("//p[@class='status-line']")[0].text_content()
        paper = _tree(site, "/papers/2602.10003")
        notice = paper.xpath("//p[contains(@class, 'notice')]")[0].text_content()
        assert "is no longer followed" in notice
        nestpipe_notice = _tree(site, "/").xpath("//p[contains(@class, 'notice')]")
        assert nestpipe_notice == []
