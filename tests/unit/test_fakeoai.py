"""The fake arXiv's OAI-PMH endpoint, read through syncd's own OAI client on loopback."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import httpx
import pytest
from lxml import etree

from syncd.config import ArxivSettings, HarvestSettings
from syncd.errors import BadArgument, BadResumptionToken, FeedError
from syncd.sources.arxiv import ArxivClient
from syncd.sources.oai import OaiClient, OaiPage
from tests import fakearxiv as fa
from tests.fakeoai import is_oai, paper_sets

DAY1, DAY2 = date(2026, 6, 1), date(2026, 6, 2)


@pytest.fixture
def arxiv() -> Iterator[fa.FakeArxiv]:
    with fa.FakeArxiv() as fake:
        fake.oai.today = DAY1
        for n in range(1, 8):
            fake.publish(fa.make_record(f"2606.{n:05d}"))
        fake.publish(fa.make_record("2606.00100", primary_category="hep-th", categories=["hep-th"]))
        yield fake


@pytest.fixture
def oai(arxiv: fa.FakeArxiv) -> Iterator[OaiClient]:
    settings = ArxivSettings(
        api_url=arxiv.url, request_interval=0, max_retries=2, backoff_max=2, throttle_cooldown=0.1
    )
    with ArxivClient(settings) as client:
        yield OaiClient(client, HarvestSettings(url=arxiv.oai_url))


def harvest(oai: OaiClient, since: date | None, set_spec: str | None = None) -> list[OaiPage]:
    pages = [oai.first_page(since, set_spec)]
    while pages[-1].token is not None:
        pages.append(oai.next_page(pages[-1].token or ""))
    return pages


def ids(pages: list[OaiPage]) -> list[str]:
    return [r.arxiv_id for page in pages for r in page.records]


def test_pages_of_three_with_tokens(oai: OaiClient) -> None:
    pages = harvest(oai, None)
    assert [len(p.records) for p in pages] == [3, 3, 2]
    assert len(set(ids(pages))) == 8
    assert pages[0].response_date == datetime(2026, 6, 1, 12, tzinfo=UTC)


def test_from_lists_what_changed_on_or_after(arxiv: fa.FakeArxiv, oai: OaiClient) -> None:
    arxiv.oai.today = DAY2
    arxiv.revise("2606.00002", title="A new title")
    arxiv.amend("2606.00005", journal_ref="J. Eng. 1 (2026)")
    pages = harvest(oai, DAY2)
    assert ids(pages) == ["2606.00002", "2606.00005"]
    record = pages[0].records[0].as_record()
    assert (record.version, record.title) == (2, "A new title")


def test_records_read_as_the_api_entries(arxiv: fa.FakeArxiv, oai: OaiClient) -> None:
    """Hard-wrapped text, joined authors in TeX and per-version dates read back as the API's
    record, aliases by their canonical name."""
    arxiv.withdraw("2606.00003", "a flaw in section 2")
    arxiv.publish(
        fa.make_record(
            "2606.00300",
            title="$\N{GREEK SMALL LETTER BETA}$-decay after Plötz and Weiß",
            authors=("Zoë Ørsted", "Tomáš Dvořák", "Ada Lovelace"),
            primary_category="cs.IT",
            categories=("cs.IT", "stat.ML"),
            journal_ref="Ann. Phys. (Zürich) 2 (2026)",
        )
    )
    harvested = {r.arxiv_id: r.as_record() for p in harvest(oai, None) for r in p.records}
    for arxiv_id, history in arxiv.papers.items():
        entry = history[-1]
        record = harvested[arxiv_id]
        assert record == entry, arxiv_id


def test_sets(oai: OaiClient) -> None:
    assert ids(harvest(oai, None, "physics:hep-th")) == ["2606.00100"]
    assert len(ids(harvest(oai, None, "cs"))) == 7
    assert paper_sets(["cs.LG", "stat.ML"]) == ("cs", "cs:cs:LG", "stat", "stat:stat:ML")


def test_unknown_set_is_bad_argument(oai: OaiClient) -> None:
    with pytest.raises(BadArgument, match="moo"):
        oai.first_page(None, "moo")


def test_nothing_changed_is_an_empty_last_page(oai: OaiClient) -> None:
    page = oai.first_page(DAY2, None)
    assert (page.records, page.token) == ((), None)


def test_expired_token(arxiv: fa.FakeArxiv, oai: OaiClient) -> None:
    first = oai.first_page(None, None)
    arxiv.oai.expire_tokens()
    with pytest.raises(BadResumptionToken):
        oai.next_page(first.token or "")


def test_503_then_the_page(arxiv: fa.FakeArxiv, oai: OaiClient) -> None:
    arxiv.inject(fa.status(503, retry_after=1, when=is_oai))
    assert len(oai.first_page(None, None).records) == 3
    assert [r.status for r in arxiv.requests] == [503, 200]


@pytest.mark.parametrize(
    "fault",
    [
        fa.truncate(0.6, when=is_oai),
        fa.body(b"<OAI-PMH><ListRecords><record>", when=is_oai),
        fa.body(fa.BILLION_LAUGHS, when=is_oai),
    ],
    ids=["truncated", "malformed", "hostile"],
)
def test_bad_bodies_are_refused(arxiv: fa.FakeArxiv, oai: OaiClient, fault: fa.Fault) -> None:
    arxiv.inject(fault)
    with pytest.raises(FeedError):
        oai.first_page(None, None)


REAL = Path(__file__).resolve().parents[1] / "fixtures" / "arxiv-real" / "oai"
RAW_NS = "{http://arxiv.org/OAI/arXivRaw/}"
OAI_NS = "{http://www.openarchives.org/OAI/2.0/}"
# The order of arXivRaw's elements, optional ones included (arXiv's arXivRaw.xsd).
RAW_ORDER = (
    *("id", "submitter", "version", "title", "authors", "categories", "comments", "proxy"),
    *("report-no", "acm-class", "msc-class", "journal-ref", "doi", "license", "abstract"),
)
RAW_DATE = re.compile(r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT")


def _local(element: etree._Element) -> str:
    return etree.QName(element).localname


def _structure(body: bytes) -> set[tuple[str, ...]]:
    """Each record's header children, arXivRaw children (versions once) and version
    children, as tag sequences; and the root's children."""
    root = etree.fromstring(body)
    shapes = {("root", *(_local(c) for c in root))}
    for record in root.iter(OAI_NS + "record"):
        header = record.find(OAI_NS + "header")
        assert header is not None
        shapes.add(("header", *dict.fromkeys(_local(c) for c in header)))
        for raw in record.iter(RAW_NS + "arXivRaw"):
            tags = [_local(c) for c in raw]
            assert tags == sorted(tags, key=RAW_ORDER.index), tags
            for version in raw.iter(RAW_NS + "version"):
                shapes.add(("version", *(_local(c) for c in version)))
                assert RAW_DATE.fullmatch(version.findtext(RAW_NS + "date") or "")
    return shapes


def test_arxivraw_has_arxivs_structure(arxiv: fa.FakeArxiv) -> None:
    """The fake's ListRecords page has the elements of arXiv's own, in arXiv's order, and
    arXiv's date form; the text is typed as submitters type it, accents in TeX."""
    arxiv.withdraw("2606.00003", "a flaw in section 2")
    arxiv.publish(
        fa.make_record(
            "2606.00200",
            authors=("Zoë Ørsted", "José Núñez"),
            comment="Über 12 pages",
            doi="10.1/x",
        )
    )
    params = {"verb": "ListRecords", "metadataPrefix": "arXivRaw", "from": DAY1.isoformat()}
    pages = [httpx.get(arxiv.oai_url, params=params).content]
    while token := etree.fromstring(pages[-1]).findtext(
        f"{{*}}ListRecords/{OAI_NS}resumptionToken"
    ):
        params = {"verb": "ListRecords", "resumptionToken": token}
        pages.append(httpx.get(arxiv.oai_url, params=params).content)
    real = _structure((REAL / "ListRecords_arXivRaw_page1.xml").read_bytes())
    assert set().union(*map(_structure, pages)) <= real
    (typed,) = [
        raw
        for page in pages
        for raw in etree.fromstring(page).iter(RAW_NS + "arXivRaw")
        if raw.findtext(RAW_NS + "id") == "2606.00200"
    ]
    assert typed.findtext(RAW_NS + "authors") == "Zo\\\"e {\\O}rsted and Jos\\'e N\\'u\\~nez"
    assert typed.findtext(RAW_NS + "comments") == '\\"Uber 12 pages'
