"""The canonical record: normalisation, ids, withdrawal, hashing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from syncd.domain.record import (
    _CURRENT_ID_RE,
    _ID_RE,
    MAX_VERSION,
    ArxivIdError,
    Record,
    _id_problem,
    content_hash,
    normalize_name,
    normalize_text,
    pasted_arxiv_id,
    split_arxiv_id,
)
from syncd.domain.vocabulary import RECORD_FIELDS


class TestNormalizeText:
    def test_wrapped_and_unwrapped_are_equal(self) -> None:
        """The old backend's hard wrap normalises to the new backend's single line."""
        wrapped = "  Deep learning has\n  revolutionized the\n  capabilities  "
        assert normalize_text(wrapped) == "Deep learning has revolutionized the capabilities"

    def test_nfc(self) -> None:
        """A decomposed accent becomes the composed character."""
        assert normalize_text("Cafe\u0301") == "Caf\u00e9"

    def test_blank_is_none(self) -> None:
        """Whitespace-only text is no text."""
        assert normalize_text(" \n\t") is None

    def test_zero_stays(self) -> None:
        """The title "0" is a title, not nothing."""
        assert normalize_text("0") == "0"


class TestNormalizeName:
    def test_folds_case_and_accents(self) -> None:
        """Names compare without case, accents or punctuation."""
        assert normalize_name("Zhída  JIANG") == normalize_name("zhida jiang")

    @pytest.mark.parametrize(
        ("one", "other"),
        [
            ("A. Pl{ö}tz", "A. Plötz"),
            ("Pl{o}tz", "Plotz"),
            ("C.N. Pope", "C. N. Pope"),
            ("J.-P. Blaizot", "J. -P. Blaizot"),
        ],
        ids=["TeX braces", "TeX braces in ASCII", "spaced initials", "hyphenated initials"],
    )
    def test_same_person(self, one: str, other: str) -> None:
        """A name with TeX's braces or glued initials folds as it does without them."""
        assert normalize_name(one) == normalize_name(other)


class TestIds:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ("http://arxiv.org/abs/2202.12139v1", ("2202.12139", 1)),
            ("https://arxiv.org/abs/2212.09483v12", ("2212.09483", 12)),
            ("http://arxiv.org/abs/astro-ph/0601001v1", ("astro-ph/0601001", 1)),
            ("math.GT/0309136", ("math.GT/0309136", None)),
            ("0704.0001", ("0704.0001", None)),
        ],
    )
    def test_split(self, raw: str, expected: tuple[str, int | None]) -> None:
        """Ids split into base id and version, old and new style."""
        assert split_arxiv_id(raw) == expected

    @pytest.mark.parametrize("raw", ["abc", "", "https://arxiv.org/api/errors#x", "12.34"])
    def test_rejects(self, raw: str) -> None:
        """Text that holds no arXiv id raises ValueError."""
        with pytest.raises(ValueError, match="not an arXiv identifier"):
            split_arxiv_id(raw)

    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ("2401.00002v1000", ("2401.00002", MAX_VERSION)),
            ("1001.0001v1000", ("1001.0001", MAX_VERSION)),
            ("2401.00002v007", ("2401.00002", 7)),
            ("0704.0001v1", ("0704.0001", 1)),
            ("1412.9999", ("1412.9999", None)),
            ("1501.00001", ("1501.00001", None)),
            ("9912.99999", ("9912.99999", None)),
            ("hep-th/9108001v2", ("hep-th/9108001", 2)),
            ("quant-ph/0703999", ("quant-ph/0703999", None)),
            ("cs/9901001", ("cs/9901001", None)),
        ],
    )
    def test_accepts_the_ends_of_each_range(
        self, raw: str, expected: tuple[str, int | None]
    ) -> None:
        """The first and last dates, numbers and versions of the identifier scheme are accepted."""
        assert split_arxiv_id(raw) == expected

    def test_fast_path_accepts_only_what_the_full_check_accepts(self) -> None:
        """Every id the pattern for today's ids takes passes the full check, with the same split."""
        for yymm in range(10_000):
            for suffix in ("", "v0", "v1", "v07", "v999", "v1000", "v1001", "v10000"):
                tail = f"{yymm:04d}.00001{suffix}"
                fast = _CURRENT_ID_RE.fullmatch(tail)
                if fast is None:
                    continue
                full = _ID_RE.fullmatch(tail)
                assert full is not None and _id_problem(full) is None, tail
                assert fast.group("id", "version") == full.group("id", "version")

    @pytest.mark.parametrize(
        ("raw", "reason"),
        [
            ("2401.00002v0", "version 0 is not between 1 and 1000"),
            ("2401.00002v1001", "version 1001 is not between 1 and 1000"),
            ("2401.00002v3000000000", "version 3000000000 is not between 1 and 1000"),
            ("2401.00002v99999999999999999999", "version 99999999999999999999 is not between"),
            ("2401.00002v" + "9" * 5000, "version 999999999999999999999999 is not between"),
            ("2401.00002v" + "0" * 5000, "version 000000000000000000000000 is not between"),
            ("1001.0001v1001", "version 1001 is not between 1 and 1000"),
            ("2413.00001v1", "2413 has no month 13"),
            ("2400.00001", "2400 has no month 00"),
            ("0000.0000", "0000 has no month 00"),
            ("0703.0001", "4-digit numbers are from 0704 to 1412, not 0703"),
            ("1501.0001", "4-digit numbers are from 0704 to 1412, not 1501"),
            ("1412.00001", "5-digit numbers are from 1501 on, not 1412"),
            ("a" * 300 + "/0601001v1", f"{'a' * 40!r} is not an arXiv archive"),
            ("foo/0601001", "'foo' is not an arXiv archive of old-style ids"),
            ("stat/0601001", "'stat' is not an arXiv archive of old-style ids"),
            ("hep-th/9107001", "old-style ids are from 9108 to 0703, not 9107"),
            ("astro-ph/0704001", "old-style ids are from 9108 to 0703, not 0704"),
            ("astro-ph/0613001", "0613 has no month 13"),
        ],
    )
    def test_refuses_what_no_paper_can_have(self, raw: str, reason: str) -> None:
        """A month, width, archive or version outside arXiv's scheme is refused, saying why."""
        with pytest.raises(ArxivIdError) as caught:
            split_arxiv_id(f"http://arxiv.org/abs/{raw}")
        assert reason in caught.value.reason
        assert str(caught.value).startswith("not an arXiv identifier: ")
        assert len(str(caught.value)) < 300


class TestPastedIds:
    @pytest.mark.parametrize(
        "pasted",
        [
            "2611.01002",
            "2611.01002v2",
            " arXiv:2611.01002 ",
            "arxiv: 2611.01002v3",
            "https://arxiv.org/abs/2611.01002v2",
            "http://export.arxiv.org/abs/2611.01002",
            "https:/arxiv.org/abs/2611.01002",
            "arxiv.org/pdf/2611.01002v2.pdf",
            "https://arxiv.org/pdf/2611.01002v2",
            "https://www.arxiv.org/html/2611.01002v1/",
        ],
    )
    def test_every_form_people_paste_names_the_paper(self, pasted: str) -> None:
        """arXiv's citation form, its pages' addresses and versioned ids name the paper."""
        assert pasted_arxiv_id(pasted) == "2611.01002"

    def test_old_style_ids_in_any_form(self) -> None:
        """An old-style id keeps its archive, in the citation form and as an address."""
        assert pasted_arxiv_id("ARXIV:hep-th/9901001v1") == "hep-th/9901001"
        assert pasted_arxiv_id("https://arxiv.org/abs/hep-th/9901001") == "hep-th/9901001"

    @pytest.mark.parametrize(
        "text", ["nestpipe-large-scale", "arXiv:", "2611.01002v0", "arxiv.org/abs/", ""]
    )
    def test_anything_else_names_no_paper(self, text: str) -> None:
        """A key slug, an empty reference or an impossible version is no arXiv id."""
        assert pasted_arxiv_id(text) is None


class TestRecord:
    def test_round_trip(self) -> None:
        """to_dict and from_dict are inverse."""
        record = Record(arxiv_id="1", version=2, authors=("A", "B"), categories=("x",))
        assert Record.from_dict(record.to_dict()) == record

    def test_to_dict_is_every_field_in_table_order(self) -> None:
        """The generated to_dict holds each RECORD_FIELDS entry, in order, tuples as lists."""
        record = Record(
            arxiv_id="1", version=2, authors=("A", "B"), categories=("x",), withdrawn_by="admin"
        )
        expected = {
            f.name: list(v) if isinstance(v := getattr(record, f.name), tuple) else v
            for f in RECORD_FIELDS
        }
        assert list(record.to_dict().items()) == list(expected.items())

    def test_hash_ignores_category_order_and_timestamps(self) -> None:
        """The content hash covers what the diff compares, and nothing else."""
        record = Record(arxiv_id="1", version=1, categories=("a", "b"), updated="t1")
        same = replace(record, categories=("b", "a"), updated="t2")
        assert content_hash(record) == content_hash(same)
        assert content_hash(record) != content_hash(replace(record, doi="10.1/x"))

    def test_hash_without_withdrawn_by_is_the_stored_one(self) -> None:
        """Records without withdrawn_by hash exactly as before the field existed."""
        # Digests computed by content_hash before withdrawn_by was added.
        withdrawn = Record(
            arxiv_id="2604.06956",
            version=2,
            title="NestPipe",
            abstract="This paper has been withdrawn by the authors.",
            authors=("Zhida Jiang", "Hu Xu"),
            authors_complete=True,
            primary_category="cs.DC",
            categories=("cs.LG", "cs.DC"),
            comment="An error in Lemma 2.",
            withdrawn=True,
        )
        normal = replace(
            withdrawn, withdrawn=False, abstract="We pipeline nested models.", comment="12 pages"
        )
        assert content_hash(withdrawn) == "b8113a01d642abef67bc3d7f6e8ce939"
        assert content_hash(normal) == "3644ad48d069db4fc931445c016a866f"
        by_author = replace(withdrawn, withdrawn_by="author")
        assert content_hash(by_author) not in {
            content_hash(withdrawn),
            content_hash(replace(withdrawn, withdrawn_by="admin")),
        }

    def test_rows_without_withdrawn_by_read_as_unknown(self) -> None:
        """A record stored before withdrawn_by existed reads back with it None."""
        data = Record(arxiv_id="1", version=2, withdrawn=True).to_dict()
        del data["withdrawn_by"]
        assert Record.from_dict(data).withdrawn_by is None

    def test_merge_clears_withdrawn_by_with_withdrawn(self) -> None:
        """A newer record that is not withdrawn takes who-withdrew away with it."""
        old = Record(arxiv_id="1", version=2, withdrawn=True, withdrawn_by="admin")
        merged = old.merged_with(Record(arxiv_id="1", version=3))
        assert (merged.withdrawn, merged.withdrawn_by) == (False, None)
