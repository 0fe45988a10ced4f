"""Tests for syncd.sources.arxiv._parser: real arXiv bodies, both backends, and hostile input."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from syncd.domain.record import Record, normalize_text
from syncd.errors import ApiError, FeedError
from syncd.sources.arxiv import FeedPage, FeedReader, parse_feed
from syncd.sources.arxiv._parser import clean_text
from syncd.sources.arxiv._reader import _HELD

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "arxiv-api"

ATOM = "http://www.w3.org/2005/Atom"
ARXIV = "http://arxiv.org/schemas/atom"
OPENSEARCH = "http://a9.com/-/spec/opensearch/1.1/"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def entry(
    arxiv_id: str | None = "2401.00001v1",
    *,
    title: str | None = "A title",
    authors: tuple[str, ...] = ("Ada Lovelace",),
    extra: str = "",
) -> str:
    parts = ["<entry>"]
    if arxiv_id is not None:
        parts.append(f"<id>http://arxiv.org/abs/{arxiv_id}</id>")
    if title is not None:
        parts.append(f"<title>{title}</title>")
    parts.append("<summary>An abstract.</summary>")
    parts.extend(f"<author><name>{name}</name></author>" for name in authors)
    parts.append(extra)
    parts.append("</entry>")
    return "".join(parts)


def feed(*entries: str, total: int | str | None = None, start: int = 0) -> bytes:
    count = len(entries) if total is None else total
    total_xml = f"<opensearch:totalResults>{count}</opensearch:totalResults>" if count != "" else ""
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>'
        f'<feed xmlns="{ATOM}" xmlns:opensearch="{OPENSEARCH}" xmlns:arxiv="{ARXIV}">'
        f"<title>arXiv Query</title>{total_xml}"
        f"<opensearch:startIndex>{start}</opensearch:startIndex>"
        f"<opensearch:itemsPerPage>10</opensearch:itemsPerPage>"
        f"{''.join(entries)}</feed>"
    ).encode()


def _parse_unchecked(body: bytes) -> FeedPage:
    """``body`` through the reader's parser, skipping the byte check for declarations."""
    reader = FeedReader(paged=True)
    reader._parse_piece(body)
    return reader.close()


def only_record(body: bytes) -> Record:
    page = parse_feed(body)
    assert len(page.records) == 1
    return page.records[0]


class TestRealFixtures:
    """The bodies arXiv's current backend really sends."""

    def test_page_of_100_counts(self) -> None:
        """The 100-entry page has 100 records and arXiv's OpenSearch counters."""
        page = parse_feed(fixture("query_all-testing_start0_max100.xml"))
        assert isinstance(page, FeedPage)
        assert page.total_results == 214881
        assert page.start_index == 0
        assert page.items_per_page == 100
        assert len(page.records) == 100
        assert len({r.arxiv_id for r in page.records}) == 100

    def test_every_record_is_complete(self) -> None:
        """Every record has an id, version, title, authors, categories and dates."""
        for record in parse_feed(fixture("query_all-testing_start0_max100.xml")).records:
            assert record.arxiv_id and record.version and record.version >= 1
            assert record.title and record.abstract and record.authors
            assert record.authors_complete is True
            assert record.primary_category == record.categories[0]
            assert record.published and record.updated
            assert not record.is_seed

    def test_dois_and_journal_refs_where_the_fixture_has_them(self) -> None:
        """Exactly the entries carrying arxiv:doi / arxiv:journal_ref get a DOI / journal ref."""
        body = fixture("query_all-testing_start0_max100.xml")
        records = parse_feed(body).records
        assert sum(r.doi is not None for r in records) == body.count(b"<arxiv:doi>") == 32
        journal_refs = body.count(b"<arxiv:journal_ref>")
        assert sum(r.journal_ref is not None for r in records) == journal_refs == 18

    def test_first_entry_fields(self) -> None:
        """The first entry's fields come out as arXiv sent them."""
        record = parse_feed(fixture("query_all-testing_start0_max10.xml")).records[0]
        assert record == Record(
            arxiv_id="2202.12139",
            version=1,
            title=(
                "Testing Deep Learning Models: A First Comparative Study of Multiple"
                " Testing Techniques"
            ),
            abstract=record.abstract,
            authors=("Mohit Kumar Ahuja", "Arnaud Gotlieb", "Helge Spieker"),
            authors_complete=True,
            primary_category="cs.SE",
            categories=("cs.SE", "cs.LG"),
            comment="Artificial Intelligence in Software Testing 2022 workshop @ ICST 2022",
            journal_ref=(
                "Artificial Intelligence in Software Testing @ 2022 IEEE International"
                " Conference on Software Testing, Verification and Validation Workshops (ICSTW)"
            ),
            doi="10.1109/ICSTW55395.2022.00035",
            published="2022-02-24T15:05:19Z",
            updated="2022-02-24T15:05:19Z",
            withdrawn=False,
        )
        assert record.abstract is not None
        assert record.abstract.startswith("Deep Learning (DL) has revolutionized")

    def test_second_page_continues_the_first(self) -> None:
        """The two 10-entry pages are entries 0-9 and 10-19 of the 100-entry page."""
        first = parse_feed(fixture("query_all-testing_start0_max10.xml"))
        second = parse_feed(fixture("query_all-testing_start10_max10.xml"))
        hundred = parse_feed(fixture("query_all-testing_start0_max100.xml"))
        assert second.start_index == 10
        assert first.records + second.records == hundred.records[:20]

    def test_published_and_updated_differ_for_a_later_version(self) -> None:
        """A v2 keeps v1's published time and its own updated time, as raw ISO strings."""
        record = parse_feed(fixture("query_all-testing_start10_max10.xml")).records[0]
        assert (record.arxiv_id, record.version) == ("2403.16981", 2)
        assert record.published == "2024-03-25T17:42:32Z"
        assert record.updated == "2025-05-24T05:50:33Z"

    def test_old_style_id_with_affiliations(self) -> None:
        """An old-style id is split into id and version; affiliations do not become authors."""
        record = only_record(fixture("single_affiliations_journalref_oldstyle_id.xml"))
        assert (record.arxiv_id, record.version) == ("astro-ph/0601001", 1)
        assert record.authors == (
            "Andrew Gould",
            "Susan Dorsher",
            "B. Scott Gaudi",
            "Andrzej Udalski",
        )
        assert record.journal_ref == "ActaAstron.56:1-50,2006"
        assert record.categories == ("astro-ph",)
        assert record.abstract is not None
        assert record.abstract.startswith("We derive the frequencies")
        assert "Gould & Morgan" in record.abstract
        assert "V_max<17.5" in record.abstract

    def test_title_zero_stays_zero(self) -> None:
        """A title whose text is "0" is kept as "0", not dropped as falsy."""
        record = only_record(fixture("single_title_is_0.xml"))
        assert record.title == "0"
        assert record.arxiv_id == "2104.12255"

    def test_error_feed_raises_api_error(self) -> None:
        """arXiv's error feed becomes ApiError carrying arXiv's own message."""
        with pytest.raises(ApiError, match="incorrect id format for abc"):
            parse_feed(fixture("error_http400_bad_id.xml"))

    def test_empty_feed(self) -> None:
        """A feed without entries has total 0 and no records."""
        page = parse_feed(fixture("empty_total0.xml"))
        assert page.total_results == 0
        assert page.records == ()


class TestBackends:
    """The old backend's format (per-element namespaces, wrapped text) gives the same records."""

    def test_old_backend_single_equals_current(self) -> None:
        """The hand-made old-backend astro-ph/0601001 equals the current backend's record."""
        old = parse_feed(fixture("oldbackend_single.xml"))
        new = parse_feed(fixture("single_affiliations_journalref_oldstyle_id.xml"))
        assert old.records == new.records
        assert old.total_results == new.total_results == 1

    def test_old_backend_doi_equals_current(self) -> None:
        """The hand-made old-backend 2202.12139v1, with a DOI link, equals the current record."""
        old = only_record(fixture("oldbackend_doi.xml"))
        new = parse_feed(fixture("query_all-testing_start0_max10.xml")).records[0]
        assert old == new

    def test_old_backend_fixture_really_is_wrapped(self) -> None:
        """The old-backend fixture differs in its raw text, so the equalities mean something."""
        body = fixture("oldbackend_single.xml")
        assert b"Transit\n  Surveys" in body
        assert b'<arxiv:comment xmlns:arxiv="http://arxiv.org/schemas/atom">' in body
        assert b"xmlns:opensearch" not in body.split(b"<feed", 1)[1].split(b">", 1)[0]


class TestRecordBuilding:
    """How entry fields become a Record."""

    def test_primary_category_comes_first(self) -> None:
        """The primary category leads; the others follow in document order without duplicates."""
        extra = (
            '<category term="cs.LG"/><category term="stat.ML"/><category term="cs.LG"/>'
            '<arxiv:primary_category term="stat.ML"/>'
        )
        record = only_record(feed(entry(extra=extra)))
        assert record.primary_category == "stat.ML"
        assert record.categories == ("stat.ML", "cs.LG")

    def test_primary_category_added_when_absent(self) -> None:
        """A primary category missing from the category list is added in front."""
        extra = '<category term="cs.LG"/><arxiv:primary_category term="cs.AI"/>'
        assert only_record(feed(entry(extra=extra))).categories == ("cs.AI", "cs.LG")

    def test_text_is_normalised(self) -> None:
        """Whitespace runs collapse and text is NFC."""
        decomposed = "Cafe\u0301"
        record = only_record(
            feed(entry(title=f"  A\n   {decomposed}\ttitle ", authors=(f" {decomposed}\n Crème ",)))
        )
        assert record.title == "A Caf\u00e9 title"
        assert record.authors == ("Caf\u00e9 Crème",)

    def test_withdrawal_is_detected(self) -> None:
        """A version whose comment announces a withdrawal is marked withdrawn."""
        extra = "<arxiv:comment>This paper has been withdrawn by the author</arxiv:comment>"
        withdrawn = only_record(feed(entry(extra=extra)))
        assert (withdrawn.withdrawn, withdrawn.withdrawn_by) == (True, "author")
        assert only_record(feed(entry())).withdrawn is False

    def test_withdrawn_in_a_comment_is_no_withdrawal(self) -> None:
        """A comment that only mentions a withdrawn paper marks nothing."""
        extra = "<arxiv:comment>Supersedes the withdrawn arXiv:2101.00001; 12 pages</arxiv:comment>"
        record = only_record(feed(entry(extra=extra)))
        assert (record.withdrawn, record.withdrawn_by) == (False, None)

    def test_doi_from_link_when_no_arxiv_doi(self) -> None:
        """Without arxiv:doi, the DOI is read from the link titled "doi"."""
        extra = '<link title="doi" href="http://dx.doi.org/10.1000/xyz123" rel="related"/>'
        assert only_record(feed(entry(extra=extra))).doi == "10.1000/xyz123"

    def test_optional_fields_absent(self) -> None:
        """Absent comment, journal ref and DOI are None."""
        record = only_record(feed(entry()))
        assert (record.comment, record.journal_ref, record.doi) == (None, None, None)

    def test_comments_do_not_split_text(self) -> None:
        """An XML comment inside a title does not cut the title short."""
        assert only_record(feed(entry(title="Split<!-- x --> title"))).title == "Split title"

    @pytest.mark.parametrize(
        "text",
        [
            "plain text",
            " leading",
            "trailing ",
            "double  space",
            "tab\there",
            "line\nbreak",
            "carriage\r\nreturn",
            "\ttab first",
            "  ",
            "no\u00a0break",
            "Cafe\u0301",
            "Caf\u00e9",
            "em\u2003space",
            "",
            "0",
        ],
    )
    def test_fast_path_matches_normalize_text(self, text: str) -> None:
        """The parser's fast text path gives exactly what normalize_text gives."""
        assert clean_text(text) == normalize_text(text)

    @pytest.mark.parametrize("control", ["\x0b", "\x0c", "\x1c", "\x1f"])
    @pytest.mark.parametrize("spelled", ["raw", "reference"])
    def test_ascii_whitespace_but_tab_lf_cr_never_reaches_the_text(
        self, control: str, spelled: str
    ) -> None:
        """XML 1.0 carries no other ASCII whitespace, as ``clean_text``'s ASCII path assumes."""
        text = control if spelled == "raw" else f"&#x{ord(control):x};"
        with pytest.raises(FeedError, match="not well-formed"):
            parse_feed(feed(entry(title=f"Vertical{text}tab")))


class TestInvalidFeeds:
    """Bodies that are not trustworthy arXiv feeds raise FeedError naming the problem."""

    @pytest.mark.parametrize(
        ("body", "message"),
        [
            (b"", "empty"),
            (b"  \n ", "empty"),
            (b"<feed xmlns='http://www.w3.org/2005/Atom'><entry>", "not well-formed"),
            (b"<html><body><h1>502 Bad Gateway</h1></body></html>", "not an Atom <feed>"),
            (b"<html><body><p>Bad Gateway<br></body></html>", "not well-formed"),
            (b"<feed><title>no namespace</title></feed>", "not an Atom <feed>"),
            (b"\x89PNG\r\n\x1a\n", "not well-formed"),
        ],
    )
    def test_not_a_feed(self, body: bytes, message: str) -> None:
        """Empty bodies, broken XML, HTML pages and foreign roots are refused."""
        with pytest.raises(FeedError, match=re.escape(message)):
            parse_feed(body)

    def test_html_page_with_doctype(self) -> None:
        """A proxy's HTML error page with a DOCTYPE is refused and recognised as HTML."""
        body = (
            b"<!DOCTYPE html>\n<html><head><title>502</title></head><body>Bad Gateway</body></html>"
        )
        with pytest.raises(FeedError, match="looks like an HTML page"):
            parse_feed(body)

    def test_truncated_fixture(self) -> None:
        """A real page cut in half is refused as not well-formed."""
        body = fixture("query_all-testing_start0_max100.xml")
        with pytest.raises(FeedError, match="not well-formed"):
            parse_feed(body[: len(body) // 2])

    def test_invalid_utf8(self) -> None:
        """Bytes that are not UTF-8 are refused."""
        body = feed(entry(title="TITLE")).replace(b"TITLE", b"caf\xe9 \xff\xfe")
        with pytest.raises(FeedError, match="not well-formed"):
            parse_feed(body)

    def test_other_encoding_declared(self) -> None:
        """A UTF-16 body is refused: the parser only reads UTF-8, as arXiv sends."""
        body = feed(entry()).decode().replace("UTF-8", "UTF-16").encode("utf-16")
        with pytest.raises(FeedError):
            parse_feed(body)

    @pytest.mark.parametrize(
        ("total", "message"),
        [
            ("", "totalResults"),
            ("many", "not a non-negative integer"),
            ("-1", "not a non-negative"),
        ],
    )
    def test_bad_total_results(self, total: str, message: str) -> None:
        """A missing or non-integer totalResults is refused."""
        with pytest.raises(FeedError, match=message):
            parse_feed(feed(entry(), total=total))

    def test_missing_start_index(self) -> None:
        """A feed without startIndex is refused."""
        body = feed(entry()).replace(b"<opensearch:startIndex>0</opensearch:startIndex>", b"")
        with pytest.raises(FeedError, match="startIndex"):
            parse_feed(body)

    @pytest.mark.parametrize(
        ("bad_entry", "message"),
        [
            (entry(None), "has no <id>"),
            (entry(title=None), "has no title"),
            (entry(title="   "), "has no title"),
            (entry(authors=()), "has no author"),
            (entry(authors=("Ada", "")), "without a name"),
            (entry(extra="").replace("<name>Ada Lovelace</name>", ""), "without a name"),
            (entry("2401.00001"), "no version"),
            (entry("not-an-id"), "not an arXiv id"),
            (entry("2401.00001v1junk"), "not an arXiv id"),
            (entry("2401.00001v0"), "not an arXiv id: version 0 is not between 1 and 1000"),
            (entry("2401.00001v3000000000"), "not an arXiv id: version 3000000000 is not"),
            (entry("2401.00001v99999999999999999999"), "not an arXiv id: version 9999"),
            (entry("a" * 300 + "/0601001v1"), "is not an arXiv archive of old-style ids"),
            (entry("2413.00001v1"), "not an arXiv id: 2413 has no month 13"),
        ],
    )
    def test_bad_entries(self, bad_entry: str, message: str) -> None:
        """An entry without id, version, title or author name is refused, naming the entry."""
        with pytest.raises(FeedError, match=message):
            parse_feed(feed(entry("2401.00002v1"), bad_entry))

    def test_bad_entry_names_its_position(self) -> None:
        """The error names which entry was bad."""
        with pytest.raises(FeedError, match=r"entry 2 \(2401\.00002v1\)"):
            parse_feed(feed(entry("2401.00001v1"), entry("2401.00002v1", title=None)))


SUMMARY = "<summary>An abstract.</summary>"
# Entries whose text would be cut short or replaced: (entry, what the error names).
MALFORMED_ENTRIES = {
    "markup-in-title": (
        entry(title="Paper <b>bold</b> 2401.00002"),
        "child elements inside <title>",
    ),
    "markup-only-summary": (
        entry().replace(SUMMARY, "<summary><p>An abstract.</p></summary>"),
        "child elements inside <summary>",
    ),
    "markup-in-id": (
        entry(None, extra="<id>http://arxiv.org/abs/<b>2401.00001v1</b></id>"),
        "child elements inside <id>",
    ),
    "two-titles": (entry(extra="<title>Another title</title>"), "more than one <title>"),
    "two-ids": (entry(extra="<id>http://arxiv.org/abs/2401.00009v1</id>"), "more than one <id>"),
    "two-summaries": (entry(extra=SUMMARY), "more than one <summary>"),
    "empty-title-then-title": (
        entry(title="", extra="<title>The real title</title>"),
        "more than one <title>",
    ),
    "two-published": (
        entry(extra="<published>2024-01-01T00:00:00Z</published><published/>"),
        "more than one <published>",
    ),
    "two-updated": (
        entry(extra="<updated>2024-01-01T00:00:00Z</updated>" * 2),
        "more than one <updated>",
    ),
    "markup-in-updated": (
        entry(extra="<updated><em>2024-01-01T00:00:00Z</em></updated>"),
        "child elements inside <updated>",
    ),
    "two-comments": (
        entry(extra="<arxiv:comment>12 pages</arxiv:comment><arxiv:comment>x</arxiv:comment>"),
        "more than one <arxiv:comment>",
    ),
    "markup-in-journal-ref": (
        entry(extra="<arxiv:journal_ref>J. <i>Phys</i> 1</arxiv:journal_ref>"),
        "child elements inside <arxiv:journal_ref>",
    ),
    "two-dois": (
        entry(extra="<arxiv:doi>10.1/a</arxiv:doi><arxiv:doi>10.1/b</arxiv:doi>"),
        "more than one <arxiv:doi>",
    ),
    "two-primary-categories": (
        entry(extra='<arxiv:primary_category term="cs.LG"/>' * 2),
        "more than one <arxiv:primary_category>",
    ),
    "markup-in-primary-category": (
        entry(extra='<arxiv:primary_category term="cs.LG"><b/></arxiv:primary_category>'),
        "child elements inside <arxiv:primary_category>",
    ),
    "markup-in-a-name": (
        entry(authors=("Ada <b>Lovelace</b>",)),
        "child elements inside an author's <name>",
    ),
    "markup-in-a-name-with-affiliation": (
        entry(
            authors=(),
            extra="<author><name>Ada <b>Lovelace</b></name>"
            "<arxiv:affiliation>Cambridge</arxiv:affiliation></author>",
        ),
        "child elements inside an author's <name>",
    ),
    "two-names": (
        entry(authors=("Ada Lovelace</name><name>Charles Babbage",)),
        "an <author> with more than one <name>",
    ),
}


class TestMalformedEntries:
    """Child elements in a text field, or a single-valued element twice, refuse the page."""

    @pytest.mark.parametrize("case", MALFORMED_ENTRIES.keys())
    def test_refused_naming_entry_and_element(self, case: str) -> None:
        """The page is refused with the entry's position, its id and the element at fault."""
        bad_entry, problem = MALFORMED_ENTRIES[case]
        with pytest.raises(FeedError) as caught:
            parse_feed(feed(entry("2401.00002v1"), bad_entry))
        message = str(caught.value)
        assert message.startswith("entry 2 ")
        assert "is malformed: it has " in message
        assert problem in message

    def test_message_names_the_id_read_so_far(self) -> None:
        """When the id came before the fault, the message names it."""
        with pytest.raises(FeedError, match=r"^entry 1 \(2401\.00001v1\) is malformed"):
            parse_feed(feed(entry(title="Paper <b>bold</b>")))

    def test_comment_and_processing_instruction_are_not_markup(self) -> None:
        """XML comments and processing instructions are removed, so they never count as children."""
        record = only_record(feed(entry(title="A <!-- c --> ti<?pi x?>tle")))
        assert record.title == "A title"

    def test_affiliation_before_the_name_is_fine(self) -> None:
        """An author's one <name> is found after an affiliation too."""
        author = "<author><arxiv:affiliation>MIT</arxiv:affiliation><name>Ada</name></author>"
        assert only_record(feed(entry(authors=(), extra=author))).authors == ("Ada",)

    @pytest.mark.parametrize(
        ("counter", "message"),
        [
            ("<opensearch:totalResults>1</opensearch:totalResults>", "more than one"),
            ("<opensearch:startIndex>0</opensearch:startIndex>", "more than one"),
            ("<opensearch:itemsPerPage>10</opensearch:itemsPerPage>", "more than one"),
        ],
        ids=["totalResults", "startIndex", "itemsPerPage"],
    )
    def test_repeated_counter_is_refused(self, counter: str, message: str) -> None:
        """A second OpenSearch counter would replace the first; the page is refused."""
        body = feed(entry()).replace(b"</feed>", counter.encode() + b"</feed>")
        with pytest.raises(FeedError, match=message):
            parse_feed(body)

    def test_markup_in_a_counter_is_refused(self) -> None:
        """A counter whose digits are split by an element is refused rather than read as 1."""
        body = feed(entry()).replace(
            b"<opensearch:totalResults>1<", b"<opensearch:totalResults>1<b/>0<"
        )
        with pytest.raises(FeedError, match="totalResults> holds child elements"):
            parse_feed(body)


PASSWD_MARKER = "root:"
ATTACKS = {
    "billion_laughs": (
        '<?xml version="1.0"?><!DOCTYPE feed ['
        '<!ENTITY lol "lol">'
        + "".join(
            f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
            for i in range(1, 10)
        )
        + f']><feed xmlns="{ATOM}"><title>&lol9;</title></feed>'
    ),
    "quadratic_blowup": (
        f'<?xml version="1.0"?><!DOCTYPE feed [<!ENTITY a "{"x" * 50_000}">]>'
        f'<feed xmlns="{ATOM}"><title>{"&a;" * 50_000}</title></feed>'
    ),
    "external_file": (
        '<?xml version="1.0"?><!DOCTYPE feed [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
        f'<feed xmlns="{ATOM}"><opensearch:totalResults xmlns:opensearch="{OPENSEARCH}">'
        "1</opensearch:totalResults><title>&xxe;</title></feed>"
    ),
    "external_http": (
        '<?xml version="1.0"?><!DOCTYPE feed [<!ENTITY xxe SYSTEM "http://127.0.0.1:9/x">]>'
        f'<feed xmlns="{ATOM}"><title>&xxe;</title></feed>'
    ),
    "external_dtd_file": (
        '<?xml version="1.0"?><!DOCTYPE feed SYSTEM "file:///etc/passwd">'
        f'<feed xmlns="{ATOM}"><title>t</title></feed>'
    ),
    "parameter_entity_file": (
        '<?xml version="1.0"?><!DOCTYPE feed [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]>'
        f'<feed xmlns="{ATOM}"><title>t</title></feed>'
    ),
    "doctype_alone": f'<?xml version="1.0"?><!DOCTYPE feed><feed xmlns="{ATOM}"/>',
}


class TestHostileInput:
    """Entity bombs and external entities are refused quickly and never expanded or fetched."""

    @pytest.mark.parametrize("name", sorted(ATTACKS))
    def test_refused_before_parsing(self, name: str) -> None:
        """Every DOCTYPE/entity attack is refused fast, and no expansion reaches the message."""
        started = time.perf_counter()
        with pytest.raises(FeedError, match="DOCTYPE or entities") as caught:
            parse_feed(ATTACKS[name].encode())
        assert time.perf_counter() - started < 1.0
        message = str(caught.value)
        assert PASSWD_MARKER not in message
        assert "lollol" not in message
        assert len(message) < 500

    def test_entity_declaration_inside_document(self) -> None:
        """A stray entity declaration anywhere in the bytes is refused too."""
        body = feed(entry()).replace(b"<title>A title</title>", b'<title><!ENTITY a "b"></title>')
        with pytest.raises(FeedError, match="DOCTYPE or entities"):
            parse_feed(body)

    @pytest.mark.parametrize("name", sorted(ATTACKS))
    def test_parser_alone_is_safe(self, name: str) -> None:
        """Without the byte check, the hardened parser still refuses each attack unexpanded."""
        started = time.perf_counter()
        with pytest.raises(FeedError) as caught:
            _parse_unchecked(ATTACKS[name].encode())
        assert time.perf_counter() - started < 1.0
        message = str(caught.value)
        cause = str(caught.value.__cause__ or "")
        for text in (message, cause):
            assert PASSWD_MARKER not in text
            assert "lollol" not in text
            assert "xxxxxxxxxx" not in text

    @pytest.mark.parametrize(
        "name", ["external_dtd_file", "parameter_entity_file", "external_file"]
    )
    def test_local_files_are_not_read(self, name: str) -> None:
        """External subsets and entities on the file system are never read.

        Were /etc/passwd read as a DTD, libxml2 would fail with "Content error"
        naming the file; instead the structural check refuses the DOCTYPE.
        """
        with pytest.raises(FeedError, match="DOCTYPE or entities") as caught:
            _parse_unchecked(ATTACKS[name].encode())
        assert "passwd" not in str(caught.value.__cause__ or "")

    def test_deep_nesting_is_refused(self) -> None:
        """Absurdly deep nesting hits libxml2's depth limit (huge_tree is off)."""
        depth = 100_000
        body = f'<feed xmlns="{ATOM}">'.encode() + b"<a>" * depth + b"</a>" * depth + b"</feed>"
        with pytest.raises(FeedError, match="not well-formed"):
            parse_feed(body)


class TestFeedReader:
    """A body read piece by piece, as the connection hands it over (issue 34)."""

    def test_pieces_of_any_size_read_as_the_whole(self) -> None:
        """The 100-entry page fed 7 bytes at a time gives the same page as fed whole."""
        body = fixture("query_all-testing_start0_max100.xml")
        reader = FeedReader(paged=True)
        for at in range(0, len(body), 7):
            reader.feed(body[at : at + 7])
        assert reader.close() == parse_feed(body)

    def test_keep_reads_the_first_entries_and_counts_the_rest(self) -> None:
        """With ``keep=2``, entries 3 to 5 are counted, not read: one that is malformed
        there does not fail the read."""
        broken = entry("2401.00005v1", title=None)
        body = feed(*(entry(f"2401.0000{n}v1") for n in range(1, 5)), broken)
        reader = FeedReader(paged=True, keep=2)
        reader.feed(body)
        page = reader.close()
        assert [r.arxiv_id for r in page.records] == ["2401.00001", "2401.00002"]
        assert (page.dropped, page.entries, page.total_results) == (3, 5, 5)
        with pytest.raises(FeedError, match="entry 5"):
            parse_feed(body)

    @pytest.mark.parametrize("cut", [1, 4, 8])
    def test_a_declaration_split_between_pieces_is_refused(self, cut: int) -> None:
        """``<!DOCTYPE`` cut anywhere between two pieces is still seen before parsing."""
        body = ATTACKS["billion_laughs"].encode()
        at = body.index(b"<!DOCTYPE") + cut
        reader = FeedReader(paged=True)
        reader.feed(body[:at])
        with pytest.raises(FeedError, match="DOCTYPE or entities"):
            reader.feed(body[at:])

    def test_a_byte_that_is_not_utf8_is_placed_in_the_whole_body(self) -> None:
        """A bad byte past the first piece is named at its offset in the body."""
        good = feed(*(entry(f"2401.{n:05d}v1") for n in range(1, 800)))
        at = good.rindex(b"<title>") + len(b"<title>")
        body = good[:at] + b"\xc3\x28" + good[at:]
        assert at > 64 * 1024
        with pytest.raises(FeedError, match=f"not UTF-8: byte 0xc3 at offset {at}\\)"):
            parse_feed(body)

    def test_entries_read_are_dropped_from_the_tree(self) -> None:
        """Of 5,000 entries the tree holds at most ``_HELD`` at any time: memory stays that
        of a few hundred entries, however long the feed."""
        reader = FeedReader(paged=True, keep=10)
        reader.feed(feed(*(entry(f"2401.{n:05d}v1") for n in range(1, 5001))))
        root = reader._parser.close()
        assert 0 < len(root) <= _HELD
