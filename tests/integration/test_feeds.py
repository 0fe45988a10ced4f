"""The Atom feeds as feed readers meet them: parsed by feedparser, checked against RFC 4287."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import feedparser
import pytest
import rnc2rng
from lxml import etree

from syncd.domain.record import Record
from syncd.web import feeds, fragments
from tests.fakearxiv import FakeArxiv, make_record
from tests.integration.conftest import (
    NESTPIPE_V2_SENTENCE,
    Site,
    Syncd,
    serving,
    sync_ok,
)
from tests.scenario import NESTPIPE

SCHEMA = Path(__file__).resolve().parents[1] / "fixtures" / "atom" / "rfc4287.rnc"
ATOM = "{http://www.w3.org/2005/Atom}"


@cache
def _atom_schema() -> etree.RelaxNG:
    """RFC 4287's RELAX NG grammar, from its compact syntax."""
    xml = rnc2rng.dumps(rnc2rng.loads(SCHEMA.read_text(encoding="utf-8")))
    # rnc2rng declares the empty namespace's prefix, which libxml2 refuses.
    return etree.RelaxNG(etree.fromstring(xml.replace(' xmlns:local=""', "").encode()))


def _valid(body: bytes) -> None:
    schema = _atom_schema()
    assert schema.validate(etree.fromstring(body)), schema.error_log


def test_the_schema_refuses_a_feed_without_id_and_updated() -> None:
    """The grammar in tests/fixtures is strict enough to refuse an incomplete feed."""
    incomplete = b'<feed xmlns="http://www.w3.org/2005/Atom"><title>x</title></feed>'
    assert not _atom_schema().validate(etree.fromstring(incomplete))


@pytest.mark.parametrize(
    "path",
    [
        "/feeds/events.atom",
        "/feeds/events.atom?author=Zhida+Jiang",
        f"/feeds/papers/{NESTPIPE}.atom",
    ],
)
def test_feeds_are_valid_atom(site: Site, path: str) -> None:
    """Each feed validates against RFC 4287's schema and parses in feedparser without bozo."""
    answer = site.get(path)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/atom+xml; charset=utf-8"
    _valid(answer.content)
    parsed = feedparser.parse(answer.content)
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    assert parsed.entries


def test_an_entry_reads_like_the_change(site: Site) -> None:
    """The revised entry: a readable title, both links, its time, and the word-level diff."""
    parsed = feedparser.parse(site.get(f"/feeds/papers/{NESTPIPE}.atom").content)
    revised, linked = parsed.entries
    assert revised.title == f"NestPipe: … ({NESTPIPE}) v2: version, title, authors, abstract"
    links = {link.rel: link.href for link in revised.links}
    assert (
        links["alternate"] == f"{site.url}/papers/nestpipe-large-scale-recommendation-training-on"
    )
    assert links["related"] == f"https://arxiv.org/abs/{NESTPIPE}v2"
    (event,) = [e for e in site.syncd.json("events") if e["type"] == "paper.revised"]
    assert revised.updated == event["created_at"].replace("+00:00", "Z")
    content = revised.content[0]
    assert content.type == "text/html"
    assert "<del>Large-Scale</del>" in content.value
    assert "<ins>Scaling</ins>" in content.value
    assert f"<ins>{NESTPIPE_V2_SENTENCE}</ins>" in content.value
    assert linked.title == f"NestPipe: … ({NESTPIPE}) v1: linked to arXiv"


def test_the_events_feed_holds_the_latest_fifty(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """With more than 50 events the feed holds the newest 50, newest first."""
    for number in range(60):
        arxiv.publish(_new_paper(f"2601.{number:05d}"))
    sync_ok(syncd)
    with serving(syncd) as site:
        parsed = feedparser.parse(site.get("/feeds/events.atom").content)
    events = syncd.json("events")
    assert len(events) > 50
    newest = [f"tag:syncd,2026:event:{e['id']}" for e in reversed(events)][:50]
    assert [entry.id for entry in parsed.entries] == newest


def test_entry_ids_are_stable_across_fetches_and_restarts(site: Site) -> None:
    """Two fetches and a fetch from a restarted server give the same entry ids."""
    first = _ids(site.get("/feeds/events.atom").content)
    second = _ids(site.get("/feeds/events.atom").content)
    with serving(site.syncd) as restarted:
        third = _ids(restarted.get("/feeds/events.atom").content)
    assert first == second == third
    assert all(entry_id.startswith("tag:syncd,2026:event:evt_") for entry_id in first)


def test_a_matching_conditional_get_is_304(site: Site) -> None:
    """If-None-Match or If-Modified-Since matching the feed gets 304 with no body."""
    answer = site.get("/feeds/events.atom")
    etag, modified = answer.headers["etag"], answer.headers["last-modified"]
    again = site.get("/feeds/events.atom", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    since = site.get("/feeds/events.atom", headers={"If-Modified-Since": modified})
    assert since.status_code == 304
    other = site.get("/feeds/events.atom", headers={"If-None-Match": '"not-this-one"'})
    assert other.status_code == 200


def test_a_new_event_changes_the_etag(site: Site, arxiv: FakeArxiv) -> None:
    """After a cycle that publishes an event the old ETag no longer matches."""
    etag = site.get("/feeds/events.atom").headers["etag"]
    arxiv.publish(_new_paper("2601.00001"))
    sync_ok(site.syncd)
    fresh = site.get("/feeds/events.atom", headers={"If-None-Match": etag})
    assert fresh.status_code == 200
    assert fresh.headers["etag"] != etag
    assert "2601.00001" in fresh.text


def test_an_unchanged_feed_is_served_as_kept(
    site: Site, arxiv: FakeArxiv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Polls without a validator of a feed no event changed get the same document, rendered
    once; after a new event the next poll renders the feed anew, with it."""
    rendered: list[int] = []
    original = feeds.atom_feed

    def counting(*args: Any) -> bytes:
        rendered.append(1)
        return original(*args)

    monkeypatch.setattr(feeds, "atom_feed", counting)
    first = site.get("/feeds/events.atom")
    assert [site.get("/feeds/events.atom").content for _ in range(3)] == [first.content] * 3
    assert len(rendered) == 1
    arxiv.publish(_new_paper("2601.00001"))
    sync_ok(site.syncd)
    fresh = site.get("/feeds/events.atom")
    assert len(rendered) == 2
    assert fresh.headers["etag"] != first.headers["etag"]
    assert "2601.00001" in fresh.text


def test_an_unknown_paper_has_no_feed(site: Site) -> None:
    """The feed of a paper that is not tracked is a 404."""
    assert site.get("/feeds/papers/2699.99999.atom").status_code == 404


def _ids(body: bytes) -> list[str]:
    return [e.findtext(f"{ATOM}id") or "" for e in etree.fromstring(body).iter(f"{ATOM}entry")]


def _new_paper(arxiv_id: str) -> Record:
    return make_record(arxiv_id, authors=("Zhida Jiang", "Zhaolong Xing"))


def test_head_answers_the_headers_alone(site: Site) -> None:
    """HEAD of a feed has GET's status, type and ETag, and no body."""
    get = site.get("/feeds/events.atom")
    head = site.http.head("/feeds/events.atom")
    assert head.status_code == 200
    assert head.headers["etag"] == get.headers["etag"]
    assert head.headers["content-type"] == get.headers["content-type"]
    assert head.content == b""


def test_polls_render_each_change_once(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fetching a feed again renders no diff again: fragments are kept per event."""
    rendered: list[int] = []
    original = fragments.changes_html

    def counting(changes: Any) -> Any:
        rendered.append(1)
        return original(changes)

    monkeypatch.setattr(fragments, "changes_html", counting)
    site.get("/feeds/events.atom")
    site.get(f"/papers/{NESTPIPE}")
    before = len(rendered)
    assert before > 0
    for _ in range(3):
        assert site.get("/feeds/events.atom").status_code == 200
        assert site.get(f"/papers/{NESTPIPE}").status_code == 200
    assert len(rendered) == before


PUBLIC_URL = "https://syncd.example.org/record"
NESTPIPE_KEY = "nestpipe-large-scale-recommendation-training-on"


def _hrefs(body: bytes) -> list[str]:
    return [str(link.get("href")) for link in etree.fromstring(body).iter(f"{ATOM}link")]


class TestReflectedInput:
    def test_links_do_not_follow_the_host_header(self, site: Site) -> None:
        """A client's Host never steers the feed's links: they name the address it was served on."""
        answer = site.get("/feeds/events.atom", headers={"Host": "evil.example"})
        assert answer.status_code == 200
        assert "evil.example" not in answer.text
        own = [h for h in _hrefs(answer.content) if not h.startswith("https://arxiv.org/")]
        assert own
        assert all(href.startswith(f"{site.url}/") for href in own)

    def test_links_are_under_public_url(self, site: Site) -> None:
        """With [http] public_url every feed link to syncd starts with it, whatever Host says."""
        site.syncd.sections = f'[http]\npublic_url = "{PUBLIC_URL}/"\n'
        with serving(site.syncd) as public:
            answer = public.get(f"/feeds/papers/{NESTPIPE}.atom", headers={"Host": "evil.example"})
        own = [h for h in _hrefs(answer.content) if not h.startswith("https://arxiv.org/")]
        assert f"{PUBLIC_URL}/feeds/papers/{NESTPIPE_KEY}.atom" in own
        assert all(href.startswith(f"{PUBLIC_URL}/") for href in own)

    def test_an_author_nobody_follows_has_no_feed(self, site: Site) -> None:
        """?author= naming no known author is a 404 that does not repeat the name."""
        answer = site.get("/feeds/events.atom", params={"author": "Send Bitcoin To Me"})
        assert answer.status_code == 404
        assert "Bitcoin" not in answer.text

    def test_a_followed_authors_feed_is_titled_with_the_name(self, site: Site) -> None:
        """The feed of a followed author still says whose it is."""
        parsed = feedparser.parse(site.get("/feeds/events.atom?author=Zhida+Jiang").content)
        assert parsed.feed.title == "syncd: changes to the arXiv papers of Zhida Jiang"
        assert parsed.entries


@pytest.mark.parametrize(
    "since",
    [
        "Fri, 01 Jan 99999 00:00:00 GMT",
        "Fri, 01 Jan 9999999999999999999999 00:00:00 GMT",
        "Fri, 31 Dec 9999 23:59:59 -2359",
        "Mon, 01 Jan 0001 00:00:00 +2359",
        "garbage",
        "",
    ],
)
def test_an_unusable_if_modified_since_is_ignored(site: Site, since: str) -> None:
    """A date out of range or unparseable is ignored (RFC 9110 13.1.3): the whole feed, no 500."""
    answer = site.get("/feeds/events.atom", headers={"If-Modified-Since": since})
    assert answer.status_code == 200
    assert etree.fromstring(answer.content).find(f"{ATOM}entry") is not None
