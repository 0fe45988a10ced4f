"""The arxiv-real corpus: arXiv's own answers and its parsers' oracle, whole and consistent.

Not the conformance tests of syncd's readers: these pin the corpus they read,
so that a file cut short, a count the README no longer tells, or an oracle
that drifted from the pages it describes fails here first.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "arxiv-real"

_OAI = "{http://www.openarchives.org/OAI/2.0/}"
_RAW = "{http://arxiv.org/OAI/arXivRaw/}"
_ARXIV = "{http://arxiv.org/OAI/arXiv/}"
_ATOM = "{http://www.w3.org/2005/Atom}"
# A row of the README's table of files: | `path` | count | what |
_ROW_RE = re.compile(r"^\| `([^`]+)` \| (\d+) \| (.*)\|$", re.MULTILINE)
_ERROR_CODES = (
    "badArgument",
    "badResumptionToken",
    "badVerb",
    "cannotDisseminateFormat",
    "idDoesNotExist",
    "noRecordsMatch",
)
_ENTRY_ID_RE = re.compile(r"^https://arxiv\.org/abs/(.+)v\d+$")


def _rows() -> dict[str, tuple[int, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return {m[1]: (int(m[2]), m[3]) for m in _ROW_RE.finditer(text)}


ROWS = _rows()


@cache
def xml(name: str) -> etree._Element:
    return etree.fromstring((ROOT / name).read_bytes())


@cache
def oracle(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "oracle" / name).read_text(encoding="utf-8"))
    return data


def files(pattern: str) -> list[str]:
    return sorted(str(path.relative_to(ROOT)) for path in ROOT.glob(pattern))


def text(element: etree._Element, tag: str) -> str | None:
    child = element.find(tag)
    return None if child is None else child.text


def oai_metadata(name: str) -> list[etree._Element]:
    """The format's element (``<arXivRaw>`` or ``<arXiv>``) of every record of a page."""
    return [record.find(_OAI + "metadata")[0] for record in xml(name).iter(_OAI + "record")]


def page_ids(name: str) -> list[str]:
    namespace = _RAW if "arXivRaw" in name else _ARXIV
    return [text(metadata, namespace + "id") or "" for metadata in oai_metadata(name)]


def entry_ids(name: str) -> list[str]:
    ids = []
    for entry in xml(name).iter(_ATOM + "entry"):
        match = _ENTRY_ID_RE.match(text(entry, _ATOM + "id") or "")
        assert match is not None, f"{name}: an entry id is not a versioned abs URL"
        ids.append(match[1])
    return ids


def count(name: str) -> int:
    if name.endswith(".json"):
        return len(oracle(Path(name).name)["records"])
    tag = _ATOM + "entry" if name.startswith("author-feeds/") else _OAI + "record"
    return sum(1 for _ in xml(name).iter(tag))


def arxiv_names(metadata: etree._Element) -> list[str]:
    """The ``arXiv`` format's authors written as the API writes names."""
    names = []
    for author in metadata.find(_ARXIV + "authors"):
        parts = (text(author, _ARXIV + part) for part in ("forenames", "keyname", "suffix"))
        names.append(" ".join(part for part in parts if part))
    return names


ALL_FILES = files("*/*")
XML_FILES = [name for name in ALL_FILES if not name.endswith(".json")]
RAW_PAGES = files("oai/ListRecords_arXivRaw_page*.xml")
RAW_GETS = files("oai/GetRecord_arXivRaw_*.xml")
FEEDS = files("author-feeds/*.atom")


class TestFiles:
    """Every file parses and is the one the README describes."""

    def test_every_file_has_a_row_and_every_row_a_file(self) -> None:
        """The README's table names each file of the corpus, and only those."""
        assert sorted(ROWS) == ALL_FILES

    @pytest.mark.parametrize("name", XML_FILES)
    def test_xml_parses(self, name: str) -> None:
        """Each OAI-PMH answer and feed is well-formed XML of its kind."""
        kind = _ATOM + "feed" if name.startswith("author-feeds/") else _OAI + "OAI-PMH"
        assert xml(name).tag == kind

    @pytest.mark.parametrize("name", files("oracle/*.json"))
    def test_json_parses(self, name: str) -> None:
        """Each oracle file is a JSON object of records keyed by their own id."""
        records = oracle(Path(name).name)["records"]
        assert records
        assert all(record["id"] == key for key, record in records.items())

    @pytest.mark.parametrize("name", sorted(ROWS))
    def test_count_is_the_readmes(self, name: str) -> None:
        """A file holds as many records, entries or oracle records as the README says."""
        assert count(name) == ROWS[name][0]

    @pytest.mark.parametrize("name", files("oai/error_*.xml"))
    def test_error_answer_has_the_readmes_code(self, name: str) -> None:
        """An error answer carries exactly the OAI-PMH error code its README row names."""
        errors = xml(name).findall(_OAI + "error")
        named = [code for code in _ERROR_CODES if f"`{code}`" in ROWS[name][1]]
        assert [error.get("code") for error in errors] == named


class TestOaiPages:
    """The harvests in both formats are whole and describe the same papers."""

    @pytest.mark.parametrize("raw", RAW_PAGES + RAW_GETS)
    def test_arxiv_format_lists_the_same_ids(self, raw: str) -> None:
        """Each ``arXivRaw`` answer and its ``arXiv`` twin list the same papers in order."""
        assert page_ids(raw) == page_ids(raw.replace("arXivRaw", "arXiv"))

    @pytest.mark.parametrize("prefix", ["arXivRaw", "arXiv"])
    def test_tokens_chain_the_pages_to_an_empty_token(self, prefix: str) -> None:
        """Every page but the last hands on a token the next page answers; the last ends it."""
        pages = files(f"oai/ListRecords_{prefix}_page*.xml")
        tokens = [xml(page).find(f"{_OAI}ListRecords/{_OAI}resumptionToken") for page in pages]
        assert all(token is not None for token in tokens)
        assert [token.text for token in tokens][-1] is None
        for token, page in zip(tokens, pages[1:], strict=False):
            assert xml(page).find(_OAI + "request").get("resumptionToken") == token.text

    def test_no_paper_is_listed_twice(self) -> None:
        """A harvest followed to its end lists each paper once."""
        ids = [pid for page in RAW_PAGES for pid in page_ids(page)]
        assert len(ids) == len(set(ids))


class TestOracle:
    """The oracle covers every paper served and agrees with what arXiv's code served."""

    def test_oai_oracle_is_every_paper_served(self) -> None:
        """Every paper of a ListRecords or GetRecord answer has an oracle record, and no other."""
        served: dict[str, set[str]] = {}
        for page in RAW_PAGES + RAW_GETS:
            for pid in page_ids(page):
                served.setdefault(pid, set()).add(Path(page).name)
        records = oracle("oai-browse-db.json")["records"]
        assert set(records) == set(served)
        assert all(set(records[pid]["served_in"]) == served[pid] for pid in records)

    def test_abs_oracle_is_every_feed_entry(self) -> None:
        """Every paper of an author feed has an oracle record, and every record is in a feed."""
        served: dict[str, set[str]] = {}
        for feed in FEEDS + [feed + "2" for feed in FEEDS]:
            for pid in entry_ids(feed):
                served.setdefault(pid, set()).add(Path(feed).name)
        records = oracle("abs-files.json")["records"]
        assert set(records) == set(served)
        assert all(set(records[pid]["served_in"]) == served[pid] for pid in records)

    @pytest.mark.parametrize("name", FEEDS)
    def test_atom_and_atom2_list_the_same_papers(self, name: str) -> None:
        """A feed's ``.atom`` and ``.atom2`` list the same papers in the same order."""
        assert entry_ids(name) == entry_ids(name + "2")

    @pytest.mark.parametrize("raw", RAW_PAGES + RAW_GETS)
    def test_arxiv_format_is_the_converted_split(self, raw: str) -> None:
        """The ``arXiv`` format serves parse_author_affil(tex2utf(authors)) and tex2utf'd text."""
        records = oracle("oai-browse-db.json")["records"]
        for metadata in oai_metadata(raw.replace("arXivRaw", "arXiv")):
            record = records[text(metadata, _ARXIV + "id")]
            assert arxiv_names(metadata) == record["authors_names_tex2utf"]
            for tag, key in (
                ("title", "title"),
                ("abstract", "abstract"),
                ("comments", "comments"),
                ("journal-ref", "journal_ref"),
            ):
                assert text(metadata, _ARXIV + tag) == record[key + "_tex2utf"], (record["id"], tag)

    @pytest.mark.parametrize("raw", RAW_PAGES + RAW_GETS)
    def test_arxivraw_is_the_text_as_written(self, raw: str) -> None:
        """``arXivRaw`` serves the oracle's unconverted text and its version facts."""
        records = oracle("oai-browse-db.json")["records"]
        for metadata in oai_metadata(raw):
            record = records[text(metadata, _RAW + "id")]
            for tag, key in (
                ("authors", "authors"),
                ("title", "title"),
                ("abstract", "abstract"),
                ("comments", "comments"),
                ("journal-ref", "journal_ref"),
            ):
                assert text(metadata, _RAW + tag) == record[key], (record["id"], tag)
            versions = [
                (v.get("version"), text(v, _RAW + "size"), text(v, _RAW + "source_type"))
                for v in metadata.iter(_RAW + "version")
            ]
            assert versions == [
                (f"v{v['version']}", f"{v['size_kb']}kb", v["source_type"])
                for v in record["versions"]
            ]

    @pytest.mark.parametrize("name", FEEDS)
    def test_feeds_are_the_unconverted_split(self, name: str) -> None:
        """``.atom`` names each parse_author_affil(authors) author; ``.atom2`` joins them."""
        records = oracle("abs-files.json")["records"]
        for entry, entry2, pid in zip(
            xml(name).iter(_ATOM + "entry"),
            xml(name + "2").iter(_ATOM + "entry"),
            entry_ids(name),
            strict=True,
        ):
            record = records[pid]
            names = [text(author, _ATOM + "name") for author in entry.findall(_ATOM + "author")]
            names2 = [text(author, _ATOM + "name") for author in entry2.findall(_ATOM + "author")]
            assert names == record["authors_names_raw"]
            assert names2 == [", ".join(record["authors_names_raw"])]
            assert text(entry, _ATOM + "title") == record["title"]
