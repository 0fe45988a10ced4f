"""The fake arXiv server: its format against real responses, its query semantics, its faults."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from lxml import etree

from syncd.domain.record import Record, normalize_text, split_arxiv_id
from syncd.domain.tex import tex_to_utf8
from syncd.errors import FeedError
from syncd.sources.arxiv import parse_author_feed, parse_feed
from tests import fakearxiv as fa
from tests.fakearxiv import (
    AUTHOR_FEED_FORMATS,
    FakeArxiv,
    arxiv_tag,
    atom_tag,
    make_record,
    opensearch_tag,
)
from tests.feedxml import FeedFormat, author_feed_xml
from tests.recorded import as_tex, with_aliases
from tests.scenario import upstream_versions

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "arxiv-api"
SAFE_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


def _feed(body: bytes) -> etree._Element:
    return etree.fromstring(body, SAFE_PARSER)


def _entry_ids(body: bytes) -> list[str]:
    return [entry.findtext(atom_tag("id")) or "" for entry in _feed(body).iter(atom_tag("entry"))]


def _short_ids(body: bytes) -> list[str]:
    return [i.removeprefix("http://arxiv.org/abs/") for i in _entry_ids(body)]


def _total(body: bytes) -> int:
    return int(_feed(body).findtext(opensearch_tag("totalResults")) or "-1")


def _attrs(element: etree._Element) -> dict[str, str]:
    return {str(name): str(value) for name, value in element.attrib.items()}


def _shape(element: etree._Element) -> list[tuple[str, dict[str, str]]]:
    """Tags in document order with their attributes (text left out)."""
    return [(str(node.tag), _attrs(node)) for node in element.iter(etree.Element)]


def _first_entry(body: bytes) -> etree._Element:
    entry = _feed(body).find(atom_tag("entry"))
    assert entry is not None
    return entry


def _without_feed_identity(body: bytes) -> bytes:
    """The body with the feed's own id and updated blanked (they vary per query and time)."""
    body = re.sub(rb"<id>https://arxiv.org/api/[^<]*</id>", b"<id/>", body, count=1)
    return re.sub(rb"(<feed.*?<updated>)[^<]*", rb"\1", body, count=1, flags=re.DOTALL)


def _parse_fixture(path: Path) -> tuple[list[Record], dict[str, dict[str, tuple[str, ...]]]]:
    """Records and affiliations as written in a real response (a parser just for these tests)."""
    records: list[Record] = []
    affiliations: dict[str, dict[str, tuple[str, ...]]] = {}
    for entry in etree.parse(str(path)).getroot().iter(atom_tag("entry")):
        arxiv_id, version = split_arxiv_id(entry.findtext(atom_tag("id")) or "")
        authors = entry.findall(atom_tag("author"))
        affiliations[arxiv_id] = {
            author.findtext(atom_tag("name")) or "": tuple(
                a.text or "" for a in author.findall(arxiv_tag("affiliation"))
            )
            for author in authors
        }
        primary = entry.find(arxiv_tag("primary_category"))
        records.append(
            Record(
                arxiv_id=arxiv_id,
                version=version,
                title=entry.findtext(atom_tag("title")),
                abstract=entry.findtext(atom_tag("summary")),
                authors=tuple(author.findtext(atom_tag("name")) or "" for author in authors),
                authors_complete=True,
                primary_category=primary.get("term") if primary is not None else None,
                categories=tuple(c.get("term") or "" for c in entry.findall(atom_tag("category"))),
                comment=entry.findtext(arxiv_tag("comment")),
                journal_ref=entry.findtext(arxiv_tag("journal_ref")),
                doi=entry.findtext(arxiv_tag("doi")),
                published=entry.findtext(atom_tag("published")),
                updated=entry.findtext(atom_tag("updated")),
            )
        )
    return records, affiliations


@pytest.fixture
def arxiv() -> Iterator[FakeArxiv]:
    with FakeArxiv() as server:
        yield server


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=2.0) as http:
        yield http


# ---------------------------------------------------------------- format against real responses

GOULD_ABSTRACT = (
    (FIXTURES / "single_affiliations_journalref_oldstyle_id.xml")
    .read_text()
    .split("<summary>")[1]
    .split("</summary>")[0]
    .replace("&amp;", "&")
    .replace("&lt;", "<")
)
GOULD = Record(
    arxiv_id="astro-ph/0601001",
    version=1,
    title="Frequency of Hot Jupiters and Very Hot Jupiters from the OGLE-III Transit Surveys "
    "Toward the Galactic Bulge and Carina",
    abstract=GOULD_ABSTRACT,
    authors=("Andrew Gould", "Susan Dorsher", "B. Scott Gaudi", "Andrzej Udalski"),
    authors_complete=True,
    primary_category="astro-ph",
    categories=("astro-ph",),
    comment="62 pages including 16 figures and 9 tables. Submitted to Acta Astronomica. Full "
    "resolution version at http://www.astronomy.ohio-state.edu/~gould/ogle_hot_jupiters.ps.gz",
    journal_ref="ActaAstron.56:1-50,2006",
    published="2006-01-02T14:57:58Z",
    updated="2006-01-02T14:57:58Z",
)
GOULD_AFFILIATIONS = {
    "Andrew Gould": "Ohio State",
    "Susan Dorsher": "Ohio State",
    "B. Scott Gaudi": "CfA",
    "Andrzej Udalski": "Warsaw University Observatory",
}


def test_served_entry_and_header_have_the_fixture_structure(
    arxiv: FakeArxiv, client: httpx.Client
) -> None:
    """The same paper served by the fake has the real response's elements, attributes and bytes."""
    fixture_bytes = (FIXTURES / "single_affiliations_journalref_oldstyle_id.xml").read_bytes()
    arxiv.publish(GOULD, affiliations=GOULD_AFFILIATIONS)
    response = client.get(arxiv.url, params={"id_list": "astro-ph/0601001", "max_results": 100})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/atom+xml; charset=utf-8"
    assert response.content.startswith(b"<?xml version='1.0' encoding='UTF-8'?>\n")
    served, real = _feed(response.content), _feed(fixture_bytes)
    assert served.nsmap == real.nsmap
    header = [child for child in served if child.tag != atom_tag("entry")]
    real_header = [child for child in real if child.tag != atom_tag("entry")]
    assert [(c.tag, _attrs(c)) for c in header] == [(c.tag, _attrs(c)) for c in real_header]
    assert _shape(_first_entry(response.content)) == _shape(_first_entry(fixture_bytes))
    assert _without_feed_identity(response.content) == _without_feed_identity(fixture_bytes)


@pytest.mark.parametrize(
    "name",
    [
        "empty_total0.xml",
        "query_all-testing_start0_max10.xml",
        "query_all-testing_start10_max10.xml",
        "query_all-testing_start0_max100.xml",
        "single_affiliations_journalref_oldstyle_id.xml",
        "single_title_is_0.xml",
    ],
)
def test_render_feed_reproduces_each_fixture(name: str) -> None:
    """Rendering a fixture's own papers reproduces it byte for byte, bar the feed id and time."""
    raw = (FIXTURES / name).read_bytes()
    records, affiliations = _parse_fixture(FIXTURES / name)
    title = _feed(raw).findtext(atom_tag("title")) or ""
    match = re.fullmatch(
        r"arXiv Query: search_query=(.*)&id_list=(.*)&start=(\d+)&max_results=(\d+)", title
    )
    assert match is not None
    rendered = fa.render_feed(
        records,
        total=_total(raw),
        search_query=match[1],
        id_list=match[2],
        start=int(match[3]),
        max_results=int(match[4]),
        affiliations=affiliations,
    )
    assert _without_feed_identity(rendered) == _without_feed_identity(raw)


def test_malformed_id_gets_the_real_error_feed(arxiv: FakeArxiv, client: httpx.Client) -> None:
    """A malformed id in id_list is answered 400 with exactly arXiv's error feed."""
    raw = (FIXTURES / "error_http400_bad_id.xml").read_bytes()
    response = client.get(arxiv.url, params={"id_list": "2606.03328,abc"})
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/atom+xml; charset=utf-8"
    stamps = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
    assert stamps.sub(b"T", response.content) == stamps.sub(b"T", raw)
    moment = datetime(2026, 4, 12, 22, 59, 6, tzinfo=UTC)
    assert fa.render_error_feed("incorrect id format for abc", now=moment) == raw
    assert arxiv.requests[-1].status == 400


def test_unknown_id_gets_the_real_empty_feed(arxiv: FakeArxiv, client: httpx.Client) -> None:
    """An id arXiv does not know gives the same empty feed as the real service."""
    raw = (FIXTURES / "empty_total0.xml").read_bytes()
    response = client.get(arxiv.url, params={"id_list": "0000.0000", "max_results": 100})
    assert response.status_code == 200
    assert _without_feed_identity(response.content) == _without_feed_identity(raw)


def test_feed_updated_is_the_current_time() -> None:
    """The feed's updated element is the clock's time when answering, so bodies differ per call."""
    moments = iter(
        [datetime(2026, 6, 1, 8, 0, 0, tzinfo=UTC), datetime(2026, 6, 1, 8, 0, 1, tzinfo=UTC)]
    )
    with FakeArxiv(clock=lambda: next(moments)) as arxiv, httpx.Client() as http:
        first = http.get(arxiv.url, params={"id_list": "2606.00001"}).content
        second = http.get(arxiv.url, params={"id_list": "2606.00001"}).content
    assert _feed(first).findtext(atom_tag("updated")) == "2026-06-01T08:00:00Z"
    assert _feed(second).findtext(atom_tag("updated")) == "2026-06-01T08:00:01Z"


# ---------------------------------------------------------------- query semantics


def test_author_terms_fold_case_accents_and_combine_with_or_and(
    arxiv: FakeArxiv, client: httpx.Client
) -> None:
    """au: terms match a current author exactly modulo case, accents and punctuation."""
    arxiv.publish(make_record("2606.00001", authors=("Émile Zola",)))
    arxiv.publish(make_record("2606.00002", authors=("Ada Lovelace", "Charles Babbage")))
    arxiv.publish(make_record("2606.00003", authors=("Grace Hopper",)))
    arxiv.publish(make_record("2606.00004", authors=("Ada Lovelace-Byron",)))

    def found(query: str) -> list[str]:
        return _short_ids(client.get(arxiv.url, params={"search_query": query}).content)

    assert found('au:"emile zola" OR au:"ADA LOVELACE"') == ["2606.00001v1", "2606.00002v1"]
    assert found('(au:"E. Zola") OR (au:"Émile Zola")') == ["2606.00001v1"]
    assert found("au:Ada_Lovelace") == ["2606.00002v1"]
    assert found('au:"Ada Lovelace" AND au:"charles babbage"') == ["2606.00002v1"]
    assert found('au:"Ada Lovelace" AND au:"Grace Hopper"') == []
    assert found('au:"ada lovelace byron"') == ["2606.00004v1"]
    assert found("au:Lovelace") == []
    assert found("all:analytical") == [f"2606.0000{n}v1" for n in range(1, 5)]


def test_author_terms_look_at_the_current_version_only(
    arxiv: FakeArxiv, client: httpx.Client
) -> None:
    """A name dropped in v2 no longer finds the paper; the name added does."""
    arxiv.publish(make_record("2606.00001", authors=("Ada Lovelace",)))
    arxiv.publish(make_record("2606.00001", version=2, authors=("Grace Hopper",)))
    old = client.get(arxiv.url, params={"search_query": 'au:"Ada Lovelace"'}).content
    new = client.get(arxiv.url, params={"search_query": 'au:"Grace Hopper"'}).content
    assert _short_ids(old) == []
    assert _short_ids(new) == ["2606.00001v2"]


def test_id_list_returns_current_or_requested_version(
    arxiv: FakeArxiv, client: httpx.Client
) -> None:
    """Bare ids give the current version, versioned ones that version, unknown ones nothing.

    Each version carries its own title, abstract, authors and ``<updated>``;
    ``<published>`` is v1's in all of them (API manual, 3.3.2.1 and 5.1.1).
    """
    first = arxiv.publish(
        make_record("2606.03328", title="First", abstract="One.", authors=("Ada Lovelace",))
    )
    second = arxiv.publish(
        make_record(
            "2606.03328",
            version=2,
            title="Second",
            abstract="Two.",
            authors=("Ada Lovelace", "Mary Somerville"),
        )
    )
    arxiv.publish(make_record("math.GT/0309136"))
    ids = "2606.03328,2606.03328v1,2606.03328v7,2606.99999,math.GT/0309136"
    body = client.get(arxiv.url, params={"id_list": ids}).content
    assert _short_ids(body) == ["2606.03328v2", "2606.03328v1", "math.GT/0309136v1"]
    entries = list(_feed(body).iter(atom_tag("entry")))
    assert [e.findtext(atom_tag("title")) for e in entries[:2]] == ["Second", "First"]
    assert [e.findtext(atom_tag("summary")) for e in entries[:2]] == ["Two.", "One."]
    names = [
        [a.findtext(atom_tag("name")) for a in e.iter(atom_tag("author"))] for e in entries[:2]
    ]
    assert names == [["Ada Lovelace", "Mary Somerville"], ["Ada Lovelace"]]
    assert entries[1].findtext(atom_tag("published")) == entries[0].findtext(atom_tag("published"))
    assert entries[1].findtext(atom_tag("updated")) == first.updated
    assert entries[0].findtext(atom_tag("updated")) == second.updated
    assert _total(body) == 3


def test_id_list_with_search_query_is_an_intersection(
    arxiv: FakeArxiv, client: httpx.Client
) -> None:
    """With both parameters, only listed papers that also match the query come back."""
    arxiv.publish(make_record("2606.00001", authors=("Ada Lovelace",)))
    arxiv.publish(make_record("2606.00002", authors=("Grace Hopper",)))
    arxiv.publish(make_record("2606.00003", authors=("Ada Lovelace",)))
    params = {"search_query": 'au:"Ada Lovelace"', "id_list": "2606.00001,2606.00002"}
    assert _short_ids(client.get(arxiv.url, params=params).content) == ["2606.00001v1"]


def test_paging_slices_results_and_reports_the_total(
    arxiv: FakeArxiv, client: httpx.Client
) -> None:
    """start and max_results slice the result set; opensearch elements report the request."""
    for n in range(25):
        arxiv.publish(make_record(f"2606.{n:05d}"))
    query = {"search_query": f'au:"{fa.DEFAULT_AUTHOR}"', "sortBy": "submittedDate"}
    pages = []
    for start in (0, 10, 20, 30):
        body = client.get(arxiv.url, params={**query, "start": start, "max_results": 10}).content
        feed = _feed(body)
        assert _total(body) == 25
        assert feed.findtext(opensearch_tag("startIndex")) == str(start)
        assert feed.findtext(opensearch_tag("itemsPerPage")) == "10"
        pages.append(_short_ids(body))
    assert [len(page) for page in pages] == [10, 10, 5, 0]
    everything = [i for page in pages for i in page]
    assert everything == [f"2606.{n:05d}v1" for n in reversed(range(25))]
    default = client.get(arxiv.url, params=query).content
    assert len(_short_ids(default)) == 10
    assert "&start=0&max_results=10" in (_feed(default).findtext(atom_tag("title")) or "")


def test_sort_orders(arxiv: FakeArxiv, client: httpx.Client) -> None:
    """submittedDate sorts by published, lastUpdatedDate by updated, relevance keeps insertion."""
    arxiv.publish(make_record("2606.00002"))
    arxiv.publish(make_record("2606.00001"))
    arxiv.publish(make_record("2606.00003"))
    arxiv.publish(make_record("2606.00002", version=2))
    query = {"search_query": f"au:{fa.DEFAULT_AUTHOR.replace(' ', '_')}"}

    def order(**params: str) -> list[str]:
        return _short_ids(client.get(arxiv.url, params={**query, **params}).content)

    assert order() == ["2606.00002v2", "2606.00001v1", "2606.00003v1"]
    assert order(sortBy="submittedDate") == ["2606.00003v1", "2606.00001v1", "2606.00002v2"]
    assert order(sortBy="submittedDate", sortOrder="ascending") == [
        "2606.00002v2",
        "2606.00001v1",
        "2606.00003v1",
    ]
    assert order(sortBy="lastUpdatedDate") == ["2606.00002v2", "2606.00003v1", "2606.00001v1"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"start": "x"}, "start must be an integer"),
        ({"start": "-1"}, "start must be >= 0"),
        ({"max_results": "-5"}, "max_results must be >= 0"),
        ({"max_results": "30001"}, "max_results must be <= 30000"),
        ({"sortBy": "date"}, "sortBy must be in: relevance, lastUpdatedDate, submittedDate"),
        ({"search_query": 'au:"unclosed'}, "unable to parse search_query"),
    ],
)
def test_bad_parameters_get_error_feeds(params: dict[str, str], message: str) -> None:
    """Invalid parameters are answered 400 with an error feed naming the problem."""
    status, body = FakeArxiv().respond(params)
    assert status == 400
    assert (_feed(body).findtext(f"{atom_tag('entry')}/{atom_tag('summary')}") or "").startswith(
        message
    )


def test_post_is_answered_like_get(arxiv: FakeArxiv, client: httpx.Client) -> None:
    """A form-encoded POST query gets the same answer as the GET."""
    arxiv.publish(make_record("2606.00001"))
    response = client.post(arxiv.url, data={"id_list": "2606.00001"})
    assert _short_ids(response.content) == ["2606.00001v1"]
    assert arxiv.requests[-1].params == {"id_list": "2606.00001"}


# ---------------------------------------------------------------- state


def test_publish_fills_increasing_times_and_checks_versions(arxiv: FakeArxiv) -> None:
    """publish numbers versions strictly, fills published/updated, and keeps v1's published."""
    v1 = arxiv.publish(make_record("2606.00001"))
    other = arxiv.publish(make_record("2606.00002", published="2026-07-01T09:30:00+02:00"))
    v2 = arxiv.publish(make_record("2606.00001", version=2))
    assert v1.published == v1.updated == "2026-06-01T12:00:00Z"
    assert other.published == other.updated == "2026-07-01T07:30:00Z"
    assert v2.published == v1.published
    assert v2.updated is not None and other.updated is not None and v2.updated > other.updated
    assert arxiv.papers["2606.00001"] == (v1, v2)
    with pytest.raises(ValueError, match="next version is 3"):
        arxiv.publish(make_record("2606.00001", version=2))
    with pytest.raises(ValueError, match="not after"):
        arxiv.publish(replace(v2, version=3))
    with pytest.raises(ValueError, match="bare id"):
        arxiv.publish(make_record("2606.00003v1"))


def test_amend_changes_metadata_without_a_new_version(
    arxiv: FakeArxiv, client: httpx.Client
) -> None:
    """amend sets a DOI and journal ref on the current version, rendered with the doi link."""
    before = arxiv.publish(make_record("2606.00001"))
    after = arxiv.amend("2606.00001", doi="10.1000/xyz", journal_ref="J. Test 1 (2026)")
    assert (after.version, after.updated) == (1, before.updated)
    entry = _feed(client.get(arxiv.url, params={"id_list": "2606.00001"}).content)[-1]
    assert entry.findtext(arxiv_tag("doi")) == "10.1000/xyz"
    assert entry.findtext(arxiv_tag("journal_ref")) == "J. Test 1 (2026)"
    assert _attrs(entry[-1]) == {
        "rel": "related",
        "href": "https://doi.org/10.1000/xyz",
        "title": "doi",
    }
    with pytest.raises(TypeError):
        arxiv.amend("2606.00001", title="New title")


def test_revise_publishes_the_next_version_with_fields_changed(arxiv: FakeArxiv) -> None:
    """revise adds a version: the current one with the given fields changed, a later updated."""
    before = arxiv.publish(make_record("2606.00001", comment="first"))
    after = arxiv.revise("2606.00001", title="A second title")
    assert (after.version, after.title, after.comment) == (2, "A second title", "first")
    assert after.published == before.published and after.updated != before.updated
    assert [r.version for r in arxiv.papers["2606.00001"]] == [1, 2]


def test_withdraw_publishes_a_withdrawn_version(arxiv: FakeArxiv) -> None:
    """withdraw adds a version whose abstract is arXiv's notice and whose comment the reason."""
    arxiv.publish(make_record("2606.00001"))
    withdrawn = arxiv.withdraw("2606.00001", "An error in Lemma 2.")
    assert (withdrawn.version, withdrawn.withdrawn, withdrawn.withdrawn_by) == (2, True, "author")
    assert withdrawn.abstract == "This paper has been withdrawn by the authors."
    assert withdrawn.comment == "An error in Lemma 2."
    admin = "arXiv admin note: this paper has been withdrawn by arXiv administrators."
    assert arxiv.withdraw("2606.00001", notice=admin).withdrawn_by == "admin"
    with pytest.raises(ValueError, match="not a withdrawal notice"):
        arxiv.withdraw("2606.00001", notice="We withdraw nothing.")


def test_remove_hides_a_paper_from_author_queries(arxiv: FakeArxiv, client: httpx.Client) -> None:
    """A removed paper vanishes from searches, and from id_list unless asked to stay there."""
    arxiv.publish(make_record("2606.00001"))
    arxiv.publish(make_record("2606.00002"))
    arxiv.remove("2606.00001")
    arxiv.remove("2606.00002", keep_id_lookup=True)
    search = client.get(arxiv.url, params={"search_query": f'au:"{fa.DEFAULT_AUTHOR}"'})
    lookup = client.get(arxiv.url, params={"id_list": "2606.00001,2606.00002"})
    assert _short_ids(search.content) == []
    assert _short_ids(lookup.content) == ["2606.00002v1"]
    assert arxiv.papers == {}


def test_restore_brings_a_removed_paper_back_unchanged(
    arxiv: FakeArxiv, client: httpx.Client
) -> None:
    """A restored paper is found by searches again, at the version it had."""
    arxiv.publish(make_record("2606.00001"))
    arxiv.remove("2606.00001")
    arxiv.restore("2606.00001")
    search = client.get(arxiv.url, params={"search_query": f'au:"{fa.DEFAULT_AUTHOR}"'})
    assert _short_ids(search.content) == ["2606.00001v1"]


# ---------------------------------------------------------------- request log


def test_request_log_records_arrival_time_params_and_status(
    arxiv: FakeArxiv, client: httpx.Client
) -> None:
    """Each request is logged with its monotonic arrival time, its params and the status sent."""
    before = time.monotonic()
    client.get(arxiv.url, params={"search_query": "au:X", "start": 0})
    client.get(arxiv.url, params={"id_list": "abc"})
    after = time.monotonic()
    log = list(arxiv.requests)
    assert [entry.params for entry in log] == [
        {"search_query": "au:X", "start": "0"},
        {"id_list": "abc"},
    ]
    assert [entry.status for entry in log] == [200, 400]
    assert before <= log[0].time <= log[1].time <= after
    arxiv.requests.clear()
    assert arxiv.requests == []
    client.get(arxiv.base_url + "/elsewhere")
    assert arxiv.requests[0].status == 404
    arxiv.reset_log()
    assert arxiv.requests == []


# ---------------------------------------------------------------- faults


def _get(client: httpx.Client, arxiv: FakeArxiv, **params: str | int) -> httpx.Response:
    return client.get(arxiv.url, params={"id_list": "2606.00001", **params})


@pytest.fixture
def stocked(arxiv: FakeArxiv) -> FakeArxiv:
    """A fake holding one paper, 2606.00001."""
    arxiv.publish(make_record("2606.00001"))
    return arxiv


def test_status_faults(stocked: FakeArxiv, client: httpx.Client) -> None:
    """status() answers the given code, Retry-After and body, each fault for one request."""
    stocked.inject(
        fa.status(503, retry_after=1),
        fa.status(429),
        fa.status(502, body=fa.HTML_PROXY_PAGE, content_type="text/html"),
    )
    first, second, third, fourth = (_get(client, stocked) for _ in range(4))
    assert (first.status_code, first.headers["retry-after"], first.content) == (503, "1", b"")
    assert second.status_code == 429 and "retry-after" not in second.headers
    assert (third.status_code, third.headers["content-type"]) == (502, "text/html")
    assert b"502 Bad Gateway" in third.content
    assert fourth.status_code == 200
    assert [(r.status, r.fault) for r in stocked.requests] == [
        (503, "status"),
        (429, "status"),
        (502, "status"),
        (200, None),
    ]


def test_a_status_fault_may_set_the_date(stocked: FakeArxiv, client: httpx.Client) -> None:
    """status(date=...) sends that Date header, alone, where a response has the current time."""
    stocked.inject(fa.status(503, date="Mon, 01 Jan 99999 00:00:00 GMT"))
    dated, normal = _get(client, stocked), _get(client, stocked)
    assert dated.headers.get_list("date") == ["Mon, 01 Jan 99999 00:00:00 GMT"]
    assert len(normal.headers.get_list("date")) == 1
    assert normal.headers["date"].endswith(" GMT") and "99999" not in normal.headers["date"]


def test_timeout_fault_outlasts_the_client_then_the_server_carries_on(
    stocked: FakeArxiv,
) -> None:
    """timeout() keeps the client waiting past its read timeout; the next request is normal."""
    stocked.inject(fa.timeout(1.0))
    with httpx.Client(timeout=0.2) as http:
        started = time.monotonic()
        with pytest.raises(httpx.ReadTimeout):
            _get(http, stocked)
        assert time.monotonic() - started < 0.9
        assert _short_ids(_get(http, stocked).content) == ["2606.00001v1"]


def test_timeout_fault_then_answers_or_drops(stocked: FakeArxiv, client: httpx.Client) -> None:
    """After its wait, a timeout answers normally, or closes the connection when drop=True."""
    stocked.inject(fa.timeout(0.2), fa.timeout(0.1, drop=True))
    started = time.monotonic()
    assert _get(client, stocked).status_code == 200
    assert time.monotonic() - started >= 0.2
    with pytest.raises(httpx.RemoteProtocolError):
        _get(client, stocked)
    assert [r.status for r in stocked.requests] == [200, 0]


def test_reset_fault_closes_without_response(stocked: FakeArxiv, client: httpx.Client) -> None:
    """reset() drops the connection with no response; the server keeps serving."""
    stocked.inject(fa.reset())
    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
        _get(client, stocked)
    assert _get(client, stocked).status_code == 200
    assert [(r.status, r.fault) for r in stocked.requests] == [(0, "reset"), (200, None)]


def test_truncate_fault_cuts_the_body_with_a_matching_length(
    stocked: FakeArxiv, client: httpx.Client
) -> None:
    """truncate() sends a prefix of the normal body, by fraction or bytes, with its own length."""
    full = _get(client, stocked).content
    stocked.inject(fa.truncate(0.5), fa.truncate(100))
    half, hundred = _get(client, stocked), _get(client, stocked)
    assert int(half.headers["content-length"]) == len(half.content) == len(full) // 2
    assert len(hundred.content) == 100
    for response in (half, hundred):
        assert full.startswith(response.content[:80])
        with pytest.raises(etree.XMLSyntaxError):
            _feed(response.content)


def test_page_faults_change_entries_or_totals(stocked: FakeArxiv, client: httpx.Client) -> None:
    """empty_page keeps the total, empty_result zeroes it, total_lie shifts it."""
    stocked.inject(fa.empty_page(), fa.empty_result(), fa.total_lie(5), fa.total_lie(-1))
    empty_page, empty_result, more, less = (_get(client, stocked) for _ in range(4))
    assert (_total(empty_page.content), _short_ids(empty_page.content)) == (1, [])
    assert (_total(empty_result.content), _short_ids(empty_result.content)) == (0, [])
    assert (_total(more.content), _short_ids(more.content)) == (6, ["2606.00001v1"])
    assert _total(less.content) == 0
    assert {r.status_code for r in (empty_page, empty_result, more, less)} == {200}


def test_stale_version_sends_the_version_before(stocked: FakeArxiv, client: httpx.Client) -> None:
    """stale_version() swaps the first entry at v2 or later for its previous version."""
    stocked.publish(replace(stocked.current("2606.00001"), version=2, updated=None, title="v2"))
    stocked.publish(make_record("2606.00002"))
    stocked.inject(fa.stale_version(), fa.stale_version())
    params = {"id_list": "2606.00002,2606.00001"}
    stale = parse_feed(client.get(stocked.url, params=params).content).records
    assert [(r.arxiv_id, r.version) for r in stale] == [("2606.00002", 1), ("2606.00001", 1)]
    assert stale[1] == stocked.papers["2606.00001"][0]
    only_v1 = client.get(stocked.url, params={"id_list": "2606.00002"}).content
    assert _short_ids(only_v1) == ["2606.00002v1"]
    assert [(r.fault, r.missed) for r in stocked.requests] == [
        ("stale_version", False),
        ("stale_version", True),  # no entry at v2 or later: nothing to change
    ]


# fault -> what syncd's parser says of the page it spoils
HOSTILE_ENTRIES: dict[str, tuple[fa.Fault, str]] = {
    "markup": (fa.markup("title"), "it has child elements inside <title>"),
    "only-markup": (fa.markup("summary", lead=0), "it has child elements inside <summary>"),
    "repeated": (fa.repeated("title", "Another"), "it has more than one <title>"),
    "repeated-same": (fa.repeated("updated"), "it has more than one <updated>"),
    "version-0": (fa.entry_id("{id}v0"), "version 0 is not between 1 and 1000"),
    "month-13": (fa.entry_id("2613.00001v1"), "2613 has no month 13"),
}


@pytest.mark.parametrize("backend", ["new", "old"])
@pytest.mark.parametrize("name", HOSTILE_ENTRIES.keys())
def test_entry_faults_spoil_the_first_entry_only(
    client: httpx.Client, backend: fa.Backend, name: str
) -> None:
    """markup, repeated and entry_id change the first entry as documented, and syncd refuses it."""
    fault, reason = HOSTILE_ENTRIES[name]
    with FakeArxiv(backend=backend) as arxiv:
        arxiv.publish(make_record("2606.00001", title="Paper on engines"))
        arxiv.publish(make_record("2606.00002"))
        params = {"id_list": "2606.00001,2606.00002"}
        normal = client.get(arxiv.url, params=params).content
        arxiv.inject(fault)
        spoiled = client.get(arxiv.url, params=params).content
        assert [(r.fault, r.missed) for r in arxiv.requests] == [(None, False), (fault.kind, False)]
    first, second = _feed(spoiled).findall(atom_tag("entry"))
    assert etree.tostring(second) == etree.tostring(_feed(normal).findall(atom_tag("entry"))[1])
    if name == "markup":
        title = first.find(atom_tag("title"))
        assert title is not None and title.text == "Paper "
        assert [(c.tag, c.text) for c in title] == [(atom_tag("b"), "on engines")]
    with pytest.raises(FeedError, match=re.escape(reason)):
        parse_feed(spoiled)


def test_entry_faults_miss_a_page_without_entries(stocked: FakeArxiv, client: httpx.Client) -> None:
    """On an empty page or an error feed an entry fault changes nothing, and the log says so."""
    stocked.inject(fa.markup(), fa.entry_id("{id}v0"))
    empty = client.get(stocked.url, params={"id_list": "2606.00001", "start": 5}).content
    assert (_total(empty), _short_ids(empty)) == (1, [])
    assert client.get(stocked.url, params={"id_list": "junk"}).status_code == 400
    assert [(r.fault, r.missed) for r in stocked.requests] == [("markup", True), ("entry_id", True)]
    with pytest.raises(ValueError, match="changes one of"):
        fa.markup("author")


def test_error_feed_fault(stocked: FakeArxiv, client: httpx.Client) -> None:
    """error_feed() answers 400 with arXiv's error feed carrying the message."""
    stocked.inject(fa.error_feed("something went wrong"))
    response = _get(client, stocked)
    assert response.status_code == 400
    summary = _feed(response.content).findtext(f"{atom_tag('entry')}/{atom_tag('summary')}")
    assert summary == "something went wrong"


@pytest.mark.parametrize(
    "payload",
    [
        fa.BILLION_LAUGHS,
        fa.QUADRATIC_BLOWUP,
        fa.EXTERNAL_ENTITY_FILE,
        fa.EXTERNAL_ENTITY_HTTP,
        b"\x00\xff junk",
    ],
)
def test_body_fault_sends_the_bytes_verbatim(
    stocked: FakeArxiv, client: httpx.Client, payload: bytes
) -> None:
    """body() sends arbitrary bytes as a 200 Atom response."""
    stocked.inject(fa.body(payload))
    response = _get(client, stocked)
    assert (response.status_code, response.content) == (200, payload)
    assert response.headers["content-type"] == fa.ATOM_CONTENT_TYPE


@pytest.mark.parametrize(
    ("payload", "marker"),
    [
        (fa.BILLION_LAUGHS, b'<!ENTITY lol9 "&lol8;'),
        (fa.QUADRATIC_BLOWUP, b"&a;&a;&a;"),
        (fa.EXTERNAL_ENTITY_FILE, b'SYSTEM "file:///etc/passwd"'),
        (fa.EXTERNAL_ENTITY_HTTP, b'SYSTEM "http://127.0.0.1:9/"'),
    ],
)
def test_hostile_bodies_are_otherwise_atom_feeds(payload: bytes, marker: bytes) -> None:
    """Each hostile body carries its DTD trick inside an otherwise normal one-entry feed."""
    assert marker in payload
    assert b"<title>&" in payload
    defused = re.sub(rb"<!DOCTYPE.*?\]>\n", b"", payload, flags=re.DOTALL)
    defused = re.sub(rb"&\w+;", b"x", defused)
    assert _feed(defused).tag == atom_tag("feed")
    assert _short_ids(defused) == ["2606.00001v1"]
    assert fa.HTML_PROXY_PAGE.startswith(b"<html>")


def test_slow_drip_sends_the_normal_body_in_delayed_chunks(
    stocked: FakeArxiv, client: httpx.Client
) -> None:
    """slow_drip() delivers the whole normal body, chunk by chunk with delays in between."""
    normal = _get(client, stocked).content
    chunk = len(normal) // 4 + 1
    stocked.inject(fa.slow_drip(0.05, chunk_size=chunk))
    started = time.monotonic()
    dripped = _get(client, stocked).content
    assert time.monotonic() - started >= 0.15
    assert _without_feed_identity(dripped) == _without_feed_identity(normal)


def test_fault_predicates_repeats_and_persistent_faults(
    stocked: FakeArxiv, client: httpx.Client
) -> None:
    """A fault waits for a request it matches, times=N repeats it, inject_always persists."""
    stocked.inject(
        fa.status(500, when=lambda params: params.get("start") == "100"),
        fa.status(503, times=2),
    )
    assert [_get(client, stocked).status_code for _ in range(3)] == [503, 503, 200]
    assert len(stocked.pending_faults) == 1
    assert _get(client, stocked, start=100).status_code == 500
    assert not stocked.pending_faults
    stocked.inject_always(fa.status(429))
    stocked.inject(fa.status(503))
    assert [_get(client, stocked).status_code for _ in range(3)] == [503, 429, 429]
    stocked.clear_faults()
    assert _get(client, stocked).status_code == 200
    with pytest.raises(ValueError, match="at least one"):
        fa.status(503, times=0)


def test_versions_ignored_fault_answers_the_current_version(
    arxiv: FakeArxiv, client: httpx.Client
) -> None:
    """The fault answers a versioned id as if its vN were not there, once."""
    arxiv.publish(make_record("2606.03328"))
    arxiv.publish(make_record("2606.03328", version=2))
    arxiv.inject(fa.versions_ignored())
    params = {"id_list": "2606.03328v1"}
    assert _short_ids(client.get(arxiv.url, params=params).content) == ["2606.03328v2"]
    assert _short_ids(client.get(arxiv.url, params=params).content) == ["2606.03328v1"]
    assert arxiv.requests[0].fault == "versions_ignored"


def test_server_survives_clients_that_disconnect(stocked: FakeArxiv, client: httpx.Client) -> None:
    """Clients vanishing before, during or instead of a request do not disturb the server."""
    port = int(stocked.base_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)):
        pass
    with socket.create_connection(("127.0.0.1", port)) as raw:
        raw.sendall(b"GET /api/query?id_list=2606.00001 HTTP/1.1\r\nHost: x\r\n")
    stocked.inject(fa.slow_drip(0.05, chunk_size=16))
    with socket.create_connection(("127.0.0.1", port)) as raw:
        raw.sendall(b"GET /api/query?id_list=2606.00001 HTTP/1.1\r\nHost: x\r\n\r\n")
        assert raw.recv(12) == b"HTTP/1.1 200"
    assert _get(client, stocked).status_code == 200
    assert stocked.errors == []


# ---------------------------------------------------------------- old backend and wrapping


def _entry_texts(body: bytes, tag: str) -> list[str]:
    """The whitespace-normalised text of ``tag`` in each entry."""
    return [normalize_text(e.findtext(tag)) or "" for e in _feed(body).iter(atom_tag("entry"))]


LONG_TITLE = (
    "A remarkably long title about analytical engines, difference engines, Bernoulli numbers "
    "and the poetical science of computation"
)
LONG_ABSTRACT = " ".join(["The engine weaves algebraic patterns as the loom weaves flowers."] * 8)


def test_old_backend_declares_namespaces_per_element_and_wraps_text() -> None:
    """The old backend declares namespaces per element and hard-wraps text, keeping the words."""
    paper = make_record("2606.00001", title=LONG_TITLE, abstract=LONG_ABSTRACT, comment="5 pages")
    with FakeArxiv(backend="old") as old, FakeArxiv() as new, httpx.Client() as http:
        old.publish(paper, affiliations={fa.DEFAULT_AUTHOR: "London"})
        new.publish(paper)
        old_body = http.get(old.url, params={"id_list": "2606.00001"}).content
        new_body = http.get(new.url, params={"id_list": "2606.00001"}).content
    assert old_body.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n')
    assert b'<feed xmlns="http://www.w3.org/2005/Atom">' in old_body
    for element in ("opensearch:totalResults", "opensearch:startIndex", "arxiv:comment"):
        assert f'<{element} xmlns:{element.split(":")[0]}="'.encode() in old_body
    assert b'<arxiv:affiliation xmlns:arxiv="http://arxiv.org/schemas/atom">London<' in old_body
    feed = _feed(old_body)
    assert (feed.findtext(atom_tag("id")) or "").startswith("http://arxiv.org/api/")
    entry = _first_entry(old_body)
    title, summary = entry.findtext(atom_tag("title")), entry.findtext(atom_tag("summary"))
    assert title is not None and summary is not None
    assert "\n  " in title and summary.startswith("  ") and summary.endswith("\n")
    assert max(len(line) for line in summary.splitlines()) <= 80
    for tag in (atom_tag("title"), atom_tag("summary")):
        assert _entry_texts(old_body, tag) == _entry_texts(new_body, tag)
    assert _entry_texts(new_body, atom_tag("summary"))[-1] == LONG_ABSTRACT


def test_wrap_alone_wraps_the_new_format() -> None:
    """wrap=True wraps titles and abstracts but keeps the new format's namespaces on the root."""
    paper = make_record("2606.00001", title=LONG_TITLE, abstract=LONG_ABSTRACT)
    with FakeArxiv(wrap=True) as arxiv, httpx.Client() as http:
        arxiv.publish(paper)
        body = http.get(arxiv.url, params={"id_list": "2606.00001"}).content
    assert body.startswith(b"<?xml version='1.0' encoding='UTF-8'?>\n<feed xmlns:opensearch=")
    entry = _first_entry(body)
    assert "\n" in (entry.findtext(atom_tag("title")) or "")
    assert normalize_text(entry.findtext(atom_tag("summary"))) == LONG_ABSTRACT
    assert normalize_text(entry.findtext(atom_tag("title"))) == LONG_TITLE


def test_make_record_defaults() -> None:
    """make_record gives a complete cs.LG record by the default author."""
    record = make_record("2606.00001", version=2, doi="10.1/x")
    assert (record.arxiv_id, record.version, record.doi) == ("2606.00001", 2, "10.1/x")
    assert record.primary_category == "cs.LG" and record.categories[0] == "cs.LG"
    assert record.authors[0] == fa.DEFAULT_AUTHOR and record.authors_complete
    assert record.published is None and record.updated is None
    assert FakeArxiv().respond({"id_list": "2606.00001"})[0] == 200


@pytest.mark.parametrize(("backend", "wrap"), [("new", False), ("new", True), ("old", None)])
def test_syncd_parser_reads_back_the_published_records(
    backend: fa.Backend, wrap: bool | None
) -> None:
    """syncd's feed parser turns what the fake serves back into the records it stores."""
    with FakeArxiv(backend=backend, wrap=wrap) as arxiv, httpx.Client() as http:
        first = arxiv.publish(
            make_record("2606.00001", title=LONG_TITLE, abstract=LONG_ABSTRACT, doi="10.1/x")
        )
        other = arxiv.publish(
            make_record(
                "math.GT/0309136",
                title="Knots & <links> in “curly” spaces",
                authors=("Émile Zola", "Grace Hopper"),
                primary_category="math.GT",
                categories=("math.GT", "math.AT"),
                comment="12 pages",
                journal_ref="Ann. Math. 1 (2026) 1-12",
            )
        )
        withdrawn = arxiv.withdraw("2606.00001")
        body = http.get(
            arxiv.url, params={"id_list": "2606.00001v1,math.GT/0309136,2606.00001"}
        ).content
    page = parse_feed(body)
    assert page.records == (first, other, withdrawn)
    assert (page.total_results, page.start_index, page.items_per_page) == (3, 0, 10)


# ---------------------------------------------------------------- author feeds against arXiv's own

REAL_FEEDS = FIXTURES.parent / "arxiv-real" / "author-feeds"
_FEED_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")


def _real_feed(name: str, feed_format: FeedFormat) -> bytes:
    return (REAL_FEEDS / f"{name}.{feed_format}").read_bytes()


def _feed_affiliations(body: bytes) -> dict[str, dict[str, tuple[str, ...]]]:
    """``{arXiv id: {name as read: affiliations}}`` of a real ``.atom`` feed."""
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    records = parse_author_feed(body, "atom").records
    for record, entry in zip(records, _feed(body).iter(atom_tag("entry")), strict=True):
        found[record.arxiv_id or ""] = {
            name: tuple(a.text or "" for a in author.findall(arxiv_tag("affiliation")))
            for name, author in zip(record.authors, entry.findall(atom_tag("author")), strict=True)
        }
    return found


def _skeleton(body: bytes) -> bytes:
    """The body with every text and attribute value blanked: its lines, indentation,
    elements, attributes and their order, and how empty elements are spelled."""
    blanked = re.sub(rb'="[^"]*"', b'=""', body)
    return re.sub(rb">[^<]*</", b"></", blanked)


def _render_real(name: str, feed_format: FeedFormat) -> bytes:
    """arXiv's own feed ``name`` written again by the fake, from the records syncd reads in it."""
    body = _real_feed(name, "atom")
    records = [
        # The categories as arXiv lists them in its feeds: aliases too.
        replace(
            record, categories=tuple(c.get("term") or "" for c in entry.iter(atom_tag("category")))
        )
        for record, entry in zip(
            parse_author_feed(body, "atom").records,
            _feed(body).iter(atom_tag("entry")),
            strict=True,
        )
    ]
    return author_feed_xml(
        name,
        records,
        feed_format,
        affiliations=_feed_affiliations(body),
        now=datetime(2026, 12, 3, 15, 30, tzinfo=UTC),
    )


@pytest.mark.parametrize("feed_format", AUTHOR_FEED_FORMATS)
@pytest.mark.parametrize("name", ["hard-cases", "arxiv-browse-test-33510"])
def test_author_feeds_have_arxivs_structure(name: str, feed_format: FeedFormat) -> None:
    """The fake's feed of arXiv's own papers has the real feed's declaration, namespaces,
    elements in order, attributes in order and time forms, entry by entry."""
    real, fake = _real_feed(name, feed_format), _render_real(name, feed_format)
    assert _skeleton(fake) == _skeleton(real)
    assert fake.startswith(b"<?xml version='1.0' encoding='utf-8'?>\n<feed xmlns=")
    for body in (real, fake):
        times = [
            node.text or "" for node in _feed(body).iter(atom_tag("updated"), atom_tag("published"))
        ]
        assert times and all(_FEED_TIME.fullmatch(t) for t in times)


@pytest.mark.parametrize("feed_format", AUTHOR_FEED_FORMATS)
def test_author_feeds_carry_tex_and_read_back_as_arxivs_own(feed_format: FeedFormat) -> None:
    """Written by the fake in TeX, arXiv's papers read back as syncd reads arXiv's own feed."""
    fake = _render_real("hard-cases", feed_format)
    assert b"M. Csan\\'ad" in fake and b"M. Csan\xc3\xa1d" not in fake
    real = parse_author_feed(_real_feed("hard-cases", feed_format), feed_format).records
    assert parse_author_feed(fake, feed_format).records == real


def test_atom2_joins_every_name_in_one(arxiv: FakeArxiv, client: httpx.Client) -> None:
    """``.atom2`` has one <author> per entry, ``.atom`` one per person with affiliations."""
    arxiv.publish(
        make_record("2606.00001", authors=("Zoë Ørsted", "José Núñez", "Ada Lovelace")),
        affiliations={"José Núñez": ("CERN", "MIT")},
    )
    arxiv.claim("warner_s_1", "2606.00001")
    separate = _first_entry(client.get(arxiv.author_feed_url + "warner_s_1.atom").content)
    joined = _first_entry(client.get(arxiv.author_feed_url + "warner_s_1.atom2").content)
    assert [a.findtext(atom_tag("name")) for a in joined.iter(atom_tag("author"))] == [
        "Zo\\\"e {\\O}rsted, Jos\\'e N\\'u\\~nez, Ada Lovelace"
    ]
    assert [a.findtext(atom_tag("name")) for a in separate.iter(atom_tag("author"))] == [
        'Zo\\"e {\\O}rsted',
        "Jos\\'e N\\'u\\~nez",
        "Ada Lovelace",
    ]
    assert [a.text for a in separate.iter(arxiv_tag("affiliation"))] == ["CERN", "MIT"]
    assert client.get(arxiv.author_feed_url + "warner_s_1.json").status_code == 404


def test_one_version_reads_alike_from_the_api_and_both_feeds(
    arxiv: FakeArxiv, client: httpx.Client
) -> None:
    """The API's entry, ``.atom`` and ``.atom2`` of one version are one record in syncd."""
    tex = make_record(
        "2606.00001",
        title="$\N{GREEK SMALL LETTER ALPHA}$-stable laws after Plötz",
        authors=("The ATLAS Collaboration", "Łukasz Wróbel", "Robert W. Heath Jr."),
        primary_category="cs.IT",
        categories=("cs.IT", "math.ST"),
        comment="12 pages, © 2026",
        journal_ref="Ann. Phys. (Leipzig) 1 (2026)",
        doi="10.1/x",
    )
    arxiv.publish(tex)
    arxiv.claim("0000-0002-7970-7855", "2606.00001")
    api = parse_feed(client.get(arxiv.url, params={"id_list": "2606.00001"}).content).records
    feeds = [
        parse_author_feed(
            client.get(f"{arxiv.author_feed_url}0000-0002-7970-7855.{f}").content, f
        ).records
        for f in AUTHOR_FEED_FORMATS
    ]
    assert feeds == [api, api] and api == (arxiv.current("2606.00001"),)


def test_text_typed_in_tex_reads_back_as_the_api_wrote_it() -> None:
    """What the fakes write as a submitter types it, arXiv's conversion reads back unchanged;
    the scenario's accented names and Greek do meet TeX on the way."""
    texts = {
        text
        for record in upstream_versions()
        for text in (record.title, record.abstract, record.comment, *record.authors)
        if text
    }
    written = {text: as_tex(text) for text in texts}
    assert all(tex_to_utf8(tex or "") == text for text, tex in written.items())
    assert sum(tex != text for text, tex in written.items()) >= 30
    assert as_tex("Zoë Ørsted, $\N{GREEK SMALL LETTER ALPHA}$ and Weiß e") == (
        'Zo\\"e {\\O}rsted, $\\alpha$ and Wei{\\ss} e'
    )
    assert with_aliases(("cs.IT", "stat.ML", "math.ST")) == (
        "cs.IT",
        "math.IT",
        "stat.ML",
        "math.ST",
        "stat.TH",
    )
