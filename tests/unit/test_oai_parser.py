"""Tests for syncd.sources.oai's page parser: real arXivRaw answers, faults and hostile XML."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from syncd.domain.arxivraw import ArxivRawRecord, RawVersion
from syncd.errors import BadArgument, BadResumptionToken, FeedError, NoRecordsMatch
from syncd.sources.oai import parse_page
from syncd.sources.oai._parser import MAX_TOKEN_CHARS, _date
from tests.oaixml import RawPaper, RawVersionXml, error_xml, list_records_xml, record_xml

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
        assert page.response_date == datetime(2015, 1, 6, 20, 49, 59, tzinfo=UTC)

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
        assert caught.value.response_date == datetime(2015, 6, 23, 13, 28, 30, tzinfo=UTC)

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


@pytest.mark.parametrize("bangs", [0, 3, 999, 1000, 5000])
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_declarations_are_found_after_any_number_of_exclamation_marks(
    name: str, bangs: int
) -> None:
    """The declarations are looked for from each "!" of the body, then from the whole body
    past a thousand of them: wherever they are, however many "!" come before."""
    head, _, tail = HOSTILE[name].partition("?>")
    body = f"{head}?>{'<!-- ! -->' * (bangs // 2)}{'!' * (bangs % 2)}{tail}"
    with pytest.raises(FeedError, match="DOCTYPE or entities"):
        parse_page(body.encode())


@pytest.mark.parametrize("bangs", [1, 999, 1000, 5000])
def test_exclamation_marks_alone_are_no_declaration(bangs: int) -> None:
    """An abstract may exclaim: "!" in text, or "<!" in a comment, refuses nothing."""
    paper = RawPaper("2603.00001", abstract="Wow" + "!" * bangs + " <!DOCTYPE-free")
    page = parse_page(list_records_xml([paper]))
    assert page.records[0].abstract.startswith("Wow!")


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


class TestWhatAPageSaysIsBounded:
    """What a page says is checked before it is stored or logged (issue 30, items 1, 4, 7)."""

    @pytest.mark.parametrize(
        "text",
        [
            "yesterday",
            "2026-07-01",
            "2026-07-01T12:00:00",
            "2026-07-01 12:00:00Z",
            "2026-02-30T12:00:00Z",
            "\uff12\uff10\uff12\uff16-07-01T12:00:00Z"  # fullwidth digits,
            "2026-07-01T12:00:00Z" + "x" * 40,
        ],
    )
    def test_a_response_date_that_is_no_utc_time_refuses_the_page(self, text: str) -> None:
        """A page whose responseDate is not OAI-PMH's ``YYYY-MM-DDThh:mm:ssZ`` is refused."""
        body = list_records_xml([RawPaper("2603.00001")], response_date=text)
        with pytest.raises(FeedError, match="responseDate") as caught:
            parse_page(body)
        assert len(str(caught.value)) < 120

    def test_a_response_date_is_a_utc_time(self) -> None:
        """arXiv's responseDate is read as an aware UTC datetime."""
        page = parse_page(list_records_xml([], response_date="2026-07-01T23:59:59Z"))
        assert page.response_date == datetime(2026, 7, 1, 23, 59, 59, tzinfo=UTC)

    def test_no_records_match_without_a_readable_date_is_refused(self) -> None:
        """An empty answer must say when it was made: its date becomes the next ``from``."""
        with pytest.raises(FeedError, match="responseDate"):
            parse_page(error_xml("noRecordsMatch", "nothing", response_date="soon"))

    def test_a_token_longer_than_arxiv_writes_refuses_the_page(self) -> None:
        """A token past ``MAX_TOKEN_CHARS`` is never stored or sent: the page is refused."""
        longest = "t" * MAX_TOKEN_CHARS
        assert (
            parse_page(list_records_xml([RawPaper("2603.00001")], token=longest)).token == longest
        )
        body = list_records_xml([RawPaper("2603.00001")], token="t" * (1024 * 1024))
        with pytest.raises(FeedError, match="resumptionToken is 1048576 characters") as caught:
            parse_page(body)
        assert len(str(caught.value)) < 200

    @pytest.mark.parametrize(
        ("code", "error"),
        [
            ("badArgument", BadArgument),
            ("badResumptionToken", BadResumptionToken),
            ("noRecordsMatch", NoRecordsMatch),
            ("badVerb", FeedError),
            ("x" * 5000, FeedError),
        ],
    )
    def test_an_error_message_is_cut_to_a_line(self, code: str, error: type[Exception]) -> None:
        """A 5 MB error message (or code) becomes a message of at most a few hundred characters."""
        with pytest.raises(error) as caught:
            parse_page(error_xml(code, "spam " * (1024 * 1024)))
        assert 20 < len(str(caught.value)) <= 300


def _with_second(bad: bytes, good: RawPaper) -> bytes:
    """A page whose first record is ``bad`` (its raw XML) and whose second is ``good``."""
    page = list_records_xml([RawPaper("2603.09999"), good])
    first = page.index(b"<record>")
    return page[:first] + bad + page[page.index(b"<record>", first + 1) :]


def _raw_record(paper: RawPaper, replace: tuple[bytes, bytes] = (b"", b"")) -> bytes:
    text = record_xml(paper).encode()
    return text.replace(replace[0], replace[1], 1) if replace[0] else text


DEEP = b"<b>" * 300 + b"x" + b"</b>" * 300
# Records nobody may follow and that arXiv could still send: each is one bad record.
BAD_RECORDS = {
    "id outside arXiv's scheme": (
        _raw_record(RawPaper("2603.00002"), (b"oai:arXiv.org:2603.00002", b"oai:arXiv.org:x/y")),
        "names 'x/y'",
    ),
    "nesting past the depth limit": (
        _raw_record(RawPaper("2603.00002"), (b"An abstract.", DEEP)),
        "not well-formed XML: Excessive depth",
    ),
    "bytes that are not UTF-8": (
        _raw_record(RawPaper("2603.00002"), (b"An abstract.", b"An \xff\xfe abstract.")),
        "bytes that are not UTF-8",
    ),
    "markup in its identifier": (
        _raw_record(RawPaper("2603.00002"), (b"<identifier>", b"<identifier><b>x</b>")),
        "child elements inside <identifier>",
    ),
    "a NUL byte": (
        _raw_record(RawPaper("2603.00002"), (b"A title", b"A \x00 title")),
        "not well-formed XML",
    ),
}


class TestOneBadRecord:
    """A record that cannot be read stops nothing by itself (issue 30, item 5): the
    harvest decides, by whose it may be, whether it skips it or stops on it."""

    @pytest.mark.parametrize("kind", sorted(BAD_RECORDS))
    def test_the_record_beside_it_reads(self, kind: str) -> None:
        """The good record after a bad one is read whole; the bad one is an entry with its
        problem, which ``read`` raises."""
        bad, problem = BAD_RECORDS[kind]
        good = RawPaper("2603.00003", authors="Grace Hopper")
        page = parse_page(_with_second(bad, good))
        assert [e.position for e in page.entries] == [1, 2]
        assert page.entries[1].read().authors == ("Grace Hopper",)
        assert page.entries[0].problem is not None and problem in page.entries[0].problem
        with pytest.raises(FeedError, match="record 1"):
            page.entries[0].read()
        assert page.token is None and page.response_date.year == 2026

    @pytest.mark.parametrize(
        "damage", [(b"An abstract.", DEEP), (b"An abstract.", b"An \xff abstract.")]
    )
    def test_what_comes_before_the_fault_still_says_whose_it_is(
        self, damage: tuple[bytes, bytes]
    ) -> None:
        """The header and author names come before the abstract in arXivRaw: a fault in the
        abstract leaves them readable, so a followed record can still be recognised."""
        bad = _raw_record(RawPaper("2603.00002", authors="Ada Lovelace"), damage)
        page = parse_page(_with_second(bad, RawPaper("2603.00003")))
        entry = page.entries[0]
        assert (entry.arxiv_id, entry.authors) == ("2603.00002", ("Ada Lovelace",))

    def test_a_page_cut_short_is_still_refused_whole(self) -> None:
        """Parsing record by record never takes a cut page for a last page."""
        bad, _ = BAD_RECORDS["bytes that are not UTF-8"]
        body = _with_second(bad, RawPaper("2603.00003"))
        for cut in (body.index(b"<resumptionToken"), body.rindex(b"</record>") - 5):
            with pytest.raises(FeedError, match="not well-formed"):
                parse_page(body[:cut])

    def test_a_bad_envelope_is_refused_whole(self) -> None:
        """A fault outside every record (here in the responseDate) refuses the page."""
        body = list_records_xml([RawPaper("2603.00001")], response_date="2026-07-01T\xff")
        body = body.replace("\xff".encode(), b"\xff")
        with pytest.raises(FeedError, match="not well-formed"):
            parse_page(body)

    @pytest.mark.parametrize(
        "hiding",
        [b"<![CDATA[</record><record>]]>", b"<!-- </record><record> -->", b"<?x </record> ?>"],
    )
    def test_a_split_that_could_lie_refuses_the_page(self, hiding: bytes) -> None:
        """Tags hidden in CDATA, a comment or a processing instruction (arXiv writes none)
        could make the record-by-record reading see other records than the page holds: a
        page that needs that reading and has any of them is refused."""
        hidden = _raw_record(RawPaper("2603.00002"), (b"An abstract.", hiding))
        bad, _ = BAD_RECORDS["bytes that are not UTF-8"]
        page = list_records_xml([])
        at = page.index(b"<resumptionToken")
        with pytest.raises(FeedError, match="not well-formed"):
            parse_page(page[:at] + hidden + bad + page[at:])
        assert parse_page(page[:at] + hidden + page[at:]).entries[0].problem is None

    def test_declarations_are_refused_before_any_record_is_read(self) -> None:
        """An entity declared inside a bad page is refused up front, record by record or not."""
        bad, _ = BAD_RECORDS["bytes that are not UTF-8"]
        entity = _raw_record(RawPaper("2603.00004"), (b"A title", b'<!ENTITY x "y">'))
        with pytest.raises(FeedError, match="DOCTYPE or entities"):
            parse_page(_with_second(bad + entity, RawPaper("2603.00003")))


class TestStrictFields:
    """A followed record's numbers and dates are read strictly (issue 30, item 6, and the
    id check of item 14): each is a ``FeedError`` naming the record, never a crash."""

    def test_a_version_in_superscript_digits_is_refused(self) -> None:
        """``v²`` passes ``str.isdigit`` but is no version arXiv writes."""
        body = list_records_xml([RawPaper("2603.00001")]).replace(
            b'version="v1"', 'version="v²"'.encode()
        )
        with pytest.raises(FeedError, match="labelled 'v²'"):
            read_whole(body)

    def test_a_size_in_superscript_digits_is_no_size(self) -> None:
        """``²kb`` is an unknown size, as any size arXiv does not write."""
        paper = RawPaper("2603.00001", versions=(RawVersionXml(size="²kb"),))
        assert read_whole(list_records_xml([paper]))[0].versions[0].size_kb is None

    @pytest.mark.parametrize(
        "when",
        ["Fri, 31 Dec 9999 23:59:59 -2359", "Fri, 8 Feb \uff12\uff10\uff11\uff13 21:00:01 GMT"],
    )
    def test_a_date_utc_cannot_hold_is_refused(self, when: str) -> None:
        """A date whose zone pushes it past year 9999, or written in other digits, is no
        readable date."""
        paper = RawPaper("2603.00001", versions=(RawVersionXml(date=when),))
        with pytest.raises(FeedError, match="no readable <date>"):
            read_whole(list_records_xml([paper]))

    def test_an_id_that_differs_from_its_header_is_refused(self) -> None:
        """arXivRaw's ``<id>`` must name the paper its header names: else it is neither's."""
        body = list_records_xml([RawPaper("2603.00001")]).replace(
            b"<id>2603.00001</id>", b"<id>2603.00002</id>"
        )
        page = parse_page(body)
        assert page.entries[0].arxiv_id == "2603.00001"
        with pytest.raises(FeedError, match=r"has <id> '2603\.00002', not its identifier"):
            page.entries[0].read()


REAL_2025 = Path(__file__).resolve().parent.parent / "fixtures" / "arxiv-real" / "oai"


class TestArxivsOwn2025Answer:
    """The page arXiv's own 2025 OAI-PMH code writes (``tests/fixtures/arxiv-real``): what
    the checks of issue 30 accept, and what the record-by-record reading gives."""

    @pytest.fixture
    def body(self) -> bytes:
        return (REAL_2025 / "ListRecords_arXivRaw_page1.xml").read_bytes()

    def test_every_record_reads_and_nothing_is_refused(self, body: bytes) -> None:
        """Its 200 records read whole; its responseDate and token pass the bounds."""
        page = parse_page(body)
        assert len(page.records) == 200
        assert all(entry.problem is None for entry in page.entries)
        assert page.response_date == datetime(2026, 12, 3, 13, 31, 37, tzinfo=UTC)
        assert page.token is not None and len(page.token) <= MAX_TOKEN_CHARS

    def test_record_by_record_reads_as_the_whole_page(self, body: bytes) -> None:
        """One byte that is not UTF-8 in the fifth record: the other 199 entries, read whole,
        are what the page parsed whole gives; the token and the date too."""
        whole = parse_page(body)
        fifth = body.index(b"<record>")
        for _ in range(4):
            fifth = body.index(b"<record>", fifth + 1)
        abstract = body.index(b"</abstract>", fifth)
        isolated = parse_page(body[:abstract] + b"\xff" + body[abstract:])
        assert isolated.entries[4].problem == "holds bytes that are not UTF-8"
        assert isolated.entries[4].authors == whole.entries[4].authors
        others = [e for e in isolated.entries if e.position != 5]
        assert [e.read() for e in others] == [e.read() for e in whole.entries if e.position != 5]
        assert (isolated.token, isolated.response_date) == (whole.token, whole.response_date)


class TestTokenCounts:
    """``cursor`` and ``completeListSize``: read when both are counts, for the progress bar."""

    def test_the_2015_page_counts_its_list(self) -> None:
        page = parse_page(fixture(LIST))
        assert (page.cursor, page.list_size) == (0, 58011)

    def test_a_last_page_counts_too(self) -> None:
        body = list_records_xml([RawPaper("2603.00001")], cursor=10, complete_list_size=11)
        page = parse_page(body)
        assert (page.token, page.cursor, page.list_size) == (None, 10, 11)

    def test_the_2025_token_counts_nothing(self) -> None:
        page = parse_page(list_records_xml([RawPaper("2603.00001")], token="skip%3D1"))
        assert (page.cursor, page.list_size) == (None, None)

    @pytest.mark.parametrize(
        ("cursor", "size"),
        [("5", "-1"), ("x", "10"), ("11", "10"), ("²", "10"), ("5", ""), ("1" * 40, "1" * 41)],
    )
    def test_counts_that_are_not_counts_are_left_out(self, cursor: str, size: str) -> None:
        """Malformed, contradictory or huge counts are no count, and refuse nothing."""
        body = list_records_xml([RawPaper("2603.00001")], token="t").replace(
            b"<resumptionToken>",
            f'<resumptionToken cursor="{cursor}" completeListSize="{size}">'.encode(),
        )
        page = parse_page(body)
        assert (page.token, page.cursor, page.list_size) == ("t", None, None)
