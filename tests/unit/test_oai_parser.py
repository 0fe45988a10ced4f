"""Tests for syncd.sources.oai's page parser: real arXivRaw answers, faults and hostile XML."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from syncd.domain.arxivraw import ArxivRawRecord, RawVersion
from syncd.errors import BadArgument, BadResumptionToken, FeedError, NoRecordsMatch
from syncd.sources.oai import parse_page
from syncd.sources.oai._parser import _date
from tests.oaixml import RawPaper, RawVersionXml, list_records_xml

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "arxiv-oai"
LIST = "oai_export_oai2_2015_ListRecords_arXivRaw_6_records_with_resumptionToken.xml"


def read_whole(body: bytes) -> tuple[ArxivRawRecord, ...]:
    return parse_page(body).records


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


class TestRecordedListRecords:
    """The real six-record page of 2015."""

    def test_six_records_and_the_token(self) -> None:
        page = parse_page(fixture(LIST))
        assert [r.arxiv_id for r in page.records] == [
            "0704.0471",
            "0704.0716",
            "0704.0874",
            "0704.1109",
            "0704.1114",
            "0704.1586",
        ]
        assert page.token == "726959|1001"
        assert page.response_date == "2015-01-06T20:49:59Z"

    def test_first_record_fields_unwrapped(self) -> None:
        raw = parse_page(fixture(LIST)).records[0]
        assert raw.datestamp == "2014-11-18"
        assert raw.sets == ("physics:nucl-ex", "physics:nucl-th")
        assert raw.title == (
            "Density dependence of the symmetry energy and the nuclear equation of"
            " state: A Dynamical and Statistical model perspective"
        )
        assert raw.authors == ("D. V. Shetty", "S. J. Yennello", "G. A. Souliotis")  # as the API
        assert raw.categories == ("nucl-ex", "nucl-th")
        assert raw.journal_ref == "Phys.Rev.C76:024606,2007; Erratum-ibid.C76:039902,2007"
        assert raw.doi == "10.1103/PhysRevC.76.024606 10.1103/PhysRevC.76.039902"
        assert raw.abstract is not None and "\n" not in raw.abstract
        assert 'extremely " stiff " and " soft "' in raw.abstract

    def test_versions_with_dates_and_sizes(self) -> None:
        raw = parse_page(fixture(LIST)).records[1]
        assert [v.number for v in raw.versions] == [1, 2, 3, 4]
        assert raw.versions[0].date == datetime(2007, 4, 5, 12, 45, 3, tzinfo=UTC)
        assert raw.versions[0].size_kb == 43
        assert raw.versions[0].source_type is None

    def test_as_record_reads_like_the_api(self) -> None:
        record = parse_page(fixture(LIST)).records[1].as_record()
        assert record.arxiv_id == "0704.0716"
        assert record.version == 4
        assert record.published == "2007-04-05T12:45:03Z"
        assert record.updated == "2008-11-14T09:07:25Z"
        assert record.primary_category == record.categories[0]
        assert record.authors_complete
        assert not record.withdrawn

    def test_get_record_source_types(self) -> None:
        # The recorded GetRecord answer has per-version source_type; parsed
        # as a ListRecords page would be (same record shape).
        body = fixture("oai_export_oai2_2015_GetRecord_arXivRaw.xml")
        body = body.replace(b"<GetRecord>", b"<ListRecords>").replace(
            b"</GetRecord>", b"</ListRecords>"
        )
        raw = parse_page(body).records[0]
        assert [v.source_type for v in raw.versions] == ["D", "D"]
        assert raw.authors == (
            "Joshua Berger",
            "Maxim Perelstein",
            "Michael Saelim",
            "Philip Tanedo",
        )
        assert raw.as_record().withdrawn is False


class TestRecordedErrors:
    def test_bad_resumption_token(self) -> None:
        with pytest.raises(BadResumptionToken, match="illegal"):
            parse_page(fixture("oai_export_oai2_2015_error_BadResumptionToken.xml"))

    def test_bad_argument(self) -> None:
        with pytest.raises(BadArgument, match="illegal argument"):
            parse_page(fixture("oai_export_oai2_2015_error_BadArgument.xml"))

    def test_no_records_match_keeps_the_response_date(self) -> None:
        with pytest.raises(NoRecordsMatch) as caught:
            parse_page(fixture("oai_export_oai2_2015_error_NoRecordsMatch.xml"))
        assert caught.value.response_date == "2015-06-23T13:28:30Z"

    @pytest.mark.parametrize("name", ["error_BadVerb", "error_IdDoesNotExist"])
    def test_other_errors_are_feed_errors(self, name: str) -> None:
        with pytest.raises(FeedError, match="OAI-PMH answered error"):
            parse_page(fixture(f"oai_export_oai2_2015_{name}.xml"))


class TestWithdrawalFromFlags:
    def test_source_type_i_and_zero_kb_withdraws(self) -> None:
        versions = (RawVersionXml(), RawVersionXml(size="0kb", source_type="I"))
        page = parse_page(list_records_xml([RawPaper("2603.00001", versions=versions)]))
        record = page.records[0].as_record()
        assert record.version == 2
        assert record.withdrawn
        assert record.withdrawn_by is None  # the text names no one

    def test_notice_text_says_who(self) -> None:
        versions = (RawVersionXml(), RawVersionXml(size="0kb", source_type="I"))
        paper = RawPaper(
            "2603.00001", versions=versions, abstract="This paper has been withdrawn by Ada."
        )
        record = parse_page(list_records_xml([paper])).records[0].as_record()
        assert (record.withdrawn, record.withdrawn_by) == (True, "author")

    def test_flags_overrule_a_notice_like_text(self) -> None:
        paper = RawPaper(
            "2603.00001",
            versions=(RawVersionXml(source_type="D"),),
            abstract="This paper has been withdrawn by Ada.",
        )
        assert parse_page(list_records_xml([paper])).records[0].as_record().withdrawn is False

    def test_no_flags_leave_the_text_to_decide(self) -> None:
        paper = RawPaper("2603.00001", abstract="This paper has been withdrawn by Ada.")
        assert parse_page(list_records_xml([paper])).records[0].as_record().withdrawn is True

    def test_zero_kb_without_flags_is_not_a_withdrawal(self) -> None:
        """A ``0kb`` version without flags is a tiny source, not a withdrawal, when its text
        announces none: arXiv rounds sizes down (2310.08262 in arXiv's test data is 484
        bytes, listed ``(0kb)``)."""
        versions = (RawVersionXml(), RawVersionXml(size="0kb"))
        paper = RawPaper("2603.00001", versions=versions)
        record = parse_page(list_records_xml([paper])).records[0].as_record()
        assert (record.withdrawn, record.withdrawn_by) == (False, None)

    def test_zero_kb_without_flags_and_a_notice_is_a_withdrawal(self) -> None:
        """Without flags the text decides, as for 0906.3336v2 of arXiv's ``browse.db``: stored
        as a 110-byte TeX source, so arXiv writes ``0kb`` and no ``source_type``."""
        versions = (RawVersionXml(size="8kb"), RawVersionXml(size="0kb"))
        paper = RawPaper(
            "0906.3336",
            versions=versions,
            abstract="This paper has been withdrawn since the results are not satisfied.",
            comments="This paper has been withdrawn",
        )
        record = parse_page(list_records_xml([paper])).records[0].as_record()
        assert (record.withdrawn, record.withdrawn_by) == (True, "author")

    @pytest.mark.parametrize(
        ("size_kb", "source_type", "verdict"),
        [
            pytest.param(0, "I", True, id="0kb I"),
            pytest.param(0, None, None, id="0kb no flags"),
            pytest.param(0, "H", False, id="0kb html"),
            pytest.param(617, None, None, id="no flags"),
            pytest.param(853, "D", False, id="pdftex"),
        ],
    )
    def test_only_the_flags_decide(
        self, size_kb: int, source_type: str | None, verdict: bool | None
    ) -> None:
        """A version's verdict comes from its flags alone, never from its size."""
        version = RawVersion(2, datetime(2011, 2, 2, tzinfo=UTC), size_kb, source_type)
        assert version.withdrawal_verdict is verdict


class TestPages:
    def test_empty_token_is_the_last_page(self) -> None:
        page = parse_page(list_records_xml([RawPaper("2603.00001")]))
        assert page.token is None

    def test_deleted_record_has_only_its_header(self) -> None:
        page = parse_page(list_records_xml([RawPaper("2603.00001", deleted=True)]))
        assert page.records[0].deleted
        assert page.records[0].versions == ()

    def test_entries_say_whose_paper_it_may_be(self) -> None:
        """Id, datestamp and author names of every record, without reading the rest."""
        papers = [RawPaper(f"2603.{n:05d}") for n in range(1, 300)]
        papers.append(
            RawPaper("2603.00300", authors="Ada Lovelace (Analytical\n  Engines), and Alan Turing")
        )
        page = parse_page(list_records_xml(papers, token="t1"))
        assert len(page.entries) == 300
        last = page.entries[-1]
        assert (last.arxiv_id, last.position) == ("2603.00300", 300)
        assert last.authors == last.read().authors == ("Ada Lovelace", "Alan Turing")

    def test_a_malformed_record_is_refused_when_read(self) -> None:
        """The rest of a record is checked when it matters: a record nobody follows that
        arXiv wrote badly cannot stop every harvest after it."""
        body = list_records_xml([RawPaper("2603.00001"), RawPaper("2603.00002")])
        body = body.replace(b'version="v1"', b'version="v2"', 1)
        page = parse_page(body)
        assert page.entries[1].read().arxiv_id == "2603.00002"
        with pytest.raises(FeedError, match="out of order"):
            page.entries[0].read()


def _page(body: str) -> bytes:
    return list_records_xml([RawPaper("2603.00001")]).replace(
        b"<ListRecords>", b"<ListRecords>" + body.encode()
    )


class TestBadPages:
    """A page cut short or malformed anywhere yields nothing: the whole page is refused."""

    def test_truncated_fixture(self) -> None:
        body = fixture(LIST)
        with pytest.raises(FeedError, match="not well-formed"):
            parse_page(body[: len(body) // 2])

    def test_truncated_after_every_record(self) -> None:
        body = list_records_xml([RawPaper(f"2603.{n:05d}") for n in range(1, 4)], token="t")
        cut = body.index(b"<resumptionToken>")
        with pytest.raises(FeedError):
            parse_page(body[:cut])

    @pytest.mark.parametrize(
        ("paper", "message"),
        [
            (RawPaper("2603.00001", title=""), "no title"),
            (RawPaper("2603.00001", authors=""), "no title or no author"),
            (RawPaper("2603.00001", versions=()), "no <version>"),
            (RawPaper("9999.99999x"), "9999.99999x"),
        ],
    )
    def test_bad_records(self, paper: RawPaper, message: str) -> None:
        with pytest.raises(FeedError, match=message):
            read_whole(list_records_xml([paper]))

    def test_repeated_title_is_refused(self) -> None:
        body = list_records_xml([RawPaper("2603.00001")]).replace(
            b"<title>", b"<title>Other</title><title>", 1
        )
        with pytest.raises(FeedError, match="more than one <title>"):
            read_whole(body)

    def test_markup_inside_title_is_refused(self) -> None:
        body = list_records_xml([RawPaper("2603.00001")]).replace(
            b"<title>A title", b"<title>A <b>bold</b> title", 1
        )
        with pytest.raises(FeedError, match="child elements inside <title>"):
            read_whole(body)

    def test_not_oai(self) -> None:
        with pytest.raises(FeedError, match="no <ListRecords>"):
            parse_page(b"<html><body>Service unavailable</body></html>")

    def test_empty(self) -> None:
        with pytest.raises(FeedError, match="empty"):
            parse_page(b"")

    def test_version_gap(self) -> None:
        body = list_records_xml([RawPaper("2603.00001")]).replace(b'version="v1"', b'version="v2"')
        with pytest.raises(FeedError, match="out of order"):
            read_whole(body)


HOSTILE = {
    "billion_laughs": (
        '<?xml version="1.0"?><!DOCTYPE OAI-PMH [<!ENTITY a "aaaaaaaaaa">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>&b;</responseDate>'
        "</OAI-PMH>"
    ),
    "external_file": (
        '<?xml version="1.0"?><!DOCTYPE OAI-PMH [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>&x;</responseDate>'
        "</OAI-PMH>"
    ),
    "external_dtd": (
        '<?xml version="1.0"?><!DOCTYPE OAI-PMH SYSTEM "http://127.0.0.1:9/x.dtd">'
        '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"/>'
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_xml_is_refused_before_parsing(name: str) -> None:
    with pytest.raises(FeedError, match="DOCTYPE or entities") as caught:
        parse_page(HOSTILE[name].encode())
    assert "root:" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("Fri, 8 Feb 2013 21:00:01 GMT", datetime(2013, 2, 8, 21, 0, 1, tzinfo=UTC)),
        ("Tue, 29 Feb 2028 00:00:00 GMT", datetime(2028, 2, 29, tzinfo=UTC)),
        ("8 Feb 2013 21:00:01 +0100", datetime(2013, 2, 8, 20, 0, 1, tzinfo=UTC)),
        ("Fri, 31 Feb 2013 21:00:01 GMT", None),
        ("yesterday", None),
    ],
)
def test_version_dates(text: str, moment: datetime | None) -> None:
    """arXiv's shape is read by hand, any other through email.utils; impossible dates refused."""
    assert _date(text) == moment
