"""diff_records: which differences are changes, and how they are reported."""

from __future__ import annotations

from dataclasses import replace

import pytest

from syncd.domain.diff import KINDS, diff_records
from syncd.domain.record import Record

BASE = Record(
    arxiv_id="2604.06956",
    version=1,
    title="NestPipe: Large-Scale Recommendation Training",
    abstract="Modern recommendation models have increased to trillions of parameters.",
    authors=("Zhida Jiang", "Zhaolong Xing", "Huichao Chai", "Ann Other"),
    authors_complete=True,
    primary_category="cs.DC",
    categories=("cs.DC", "cs.LG"),
    published="2026-04-08T09:00:00Z",
    updated="2026-04-08T09:00:00Z",
)

SEED = Record(
    title=BASE.title,
    abstract=BASE.abstract,
    authors=("Zhida Jiang", "Zhaolong Xing", "Huichao Chai"),
    authors_complete=False,
    primary_category="cs.DC",
    categories=("cs.DC",),
)


class TestKinds:
    @pytest.mark.parametrize(
        ("changes", "kind"),
        [
            ({"version": 2, "updated": "2026-05-01T00:00:00Z"}, "version"),
            ({"title": "NestPipe: Nested Pipelining"}, "title"),
            ({"abstract": "Something else entirely."}, "abstract"),
            ({"categories": ("cs.DC", "cs.LG", "cs.AI")}, "categories"),
            ({"primary_category": "cs.LG"}, "categories"),
            ({"comment": "12 pages"}, "comment"),
            ({"journal_ref": "INFOCOM 2023"}, "journal_ref"),
            ({"doi": "10.1109/INFOCOM.2023.1"}, "doi"),
            ({"withdrawn": True}, "withdrawn"),
            ({"withdrawn": True, "withdrawn_by": "admin"}, "withdrawn"),
        ],
    )
    def test_each_field_reports_its_kind(self, changes: dict[str, object], kind: str) -> None:
        """A change of one field reports exactly that field's kind."""
        change = diff_records(BASE, replace(BASE, **changes))  # type: ignore[arg-type]
        assert change.kinds == (kind,)

    def test_identical_records_are_no_change(self) -> None:
        """Equal records give an empty, falsy change."""
        change = diff_records(BASE, replace(BASE))
        assert not change
        assert change.kinds == ()

    def test_updated_timestamp_alone_is_no_change(self) -> None:
        """published/updated follow the version; alone they change nothing."""
        assert not diff_records(BASE, replace(BASE, updated="2030-01-01T00:00:00Z"))

    def test_category_order_is_no_change(self) -> None:
        """Categories compare as a set."""
        assert not diff_records(BASE, replace(BASE, categories=("cs.LG", "cs.DC")))

    def test_kinds_follow_the_documented_order(self) -> None:
        """Several kinds are reported in KINDS order."""
        new = replace(BASE, doi="10.1/x", version=2, title="T")
        assert diff_records(BASE, new).kinds == ("version", "title", "doi")
        assert set(KINDS) >= set(diff_records(BASE, new).kinds)

    def test_withdrawal_names_who_withdrew(self) -> None:
        """A withdrawal's changes say who withdrew; a later normal version undoes both."""
        withdrawn = replace(BASE, version=2, withdrawn=True, withdrawn_by="author")
        change = diff_records(BASE, withdrawn)
        assert change.changes["withdrawn"] == {"old": False, "new": True}
        assert change.changes["withdrawn_by"] == {"old": None, "new": "author"}
        back = diff_records(withdrawn, replace(BASE, version=3))
        assert "withdrawn" in back.kinds
        assert back.changes["withdrawn_by"] == {"old": "author", "new": None}

    def test_a_jump_of_versions_names_the_skipped_ones(self) -> None:
        """v1 → v4 lists 2 and 3 as skipped; the step v1 → v2 lists nothing."""
        jump = diff_records(BASE, replace(BASE, version=4))
        assert jump.changes["version"] == {"old": 1, "new": 4, "skipped_versions": [2, 3]}
        step = diff_records(BASE, replace(BASE, version=2))
        assert step.changes["version"] == {"old": 1, "new": 2}

    def test_changes_carry_old_and_new(self) -> None:
        """Every changed field carries its old and new value."""
        change = diff_records(BASE, replace(BASE, journal_ref="INFOCOM 2023"))
        assert change.changes == {"journal_ref": {"old": None, "new": "INFOCOM 2023"}}


class TestAuthors:
    def test_added_author(self) -> None:
        """An added author is listed under added."""
        new = replace(BASE, authors=(*BASE.authors, "New Person"))
        change = diff_records(BASE, new)
        assert change.kinds == ("authors",)
        assert change.changes["authors"]["added"] == ["New Person"]
        assert change.changes["authors"]["removed"] == []

    def test_removed_author(self) -> None:
        """A removed author is listed under removed."""
        new = replace(BASE, authors=BASE.authors[:-1])
        change = diff_records(BASE, new)
        assert change.changes["authors"]["removed"] == ["Ann Other"]

    def test_reordered_authors(self) -> None:
        """A new order is an authors change with nobody added or removed."""
        new = replace(BASE, authors=tuple(reversed(BASE.authors)))
        change = diff_records(BASE, new)
        assert change.kinds == ("authors",)
        assert change.changes["authors"]["added"] == []
        assert change.changes["authors"]["removed"] == []
        assert change.changes["authors"]["new"] == list(reversed(BASE.authors))

    def test_truncated_prefix_is_no_change(self) -> None:
        """'A, B, C et al.' against a full list starting A, B, C is no author change."""
        assert "authors" not in diff_records(SEED, BASE).kinds

    def test_truncated_list_as_long_as_the_full_one_is_no_change(self) -> None:
        """'A, B, C, D et al.' against A, B, C, D spelt another way: the prefix is the whole
        list (exactly at the length boundary), compared as loosely as a shorter one."""
        seed = replace(SEED, authors=("ZHIDA JIANG", "Zhaolong Xíng", "Huichao Chai", "Ann Other"))
        assert "authors" not in diff_records(seed, BASE).kinds
        assert "authors" not in diff_records(BASE, seed).kinds

    def test_truncated_list_that_disagrees_is_a_change(self) -> None:
        """A truncated list whose names are not the full list's head is a change."""
        seed = replace(SEED, authors=("Zhida Jiang", "Huichao Chai"))
        assert "authors" in diff_records(seed, BASE).kinds

    def test_the_same_names_read_another_way_are_no_change(self) -> None:
        """A list stored as an older syncd read it (TeX, arXivRaw split otherwise, one joined
        ``.atom2`` name) against today's reading of the same version is no authors change;
        an accent the submitter added is one."""
        today = replace(BASE, authors=("Zhida Jiang", "C. N. Pope", "Patrick Plötz"))
        for stored in [
            ("Zhida Jiang", "C.N. Pope", 'Patrick Pl\\"otz'),
            ("Zhida Jiang, C. N. Pope, Patrick Plötz",),
        ]:
            assert diff_records(replace(BASE, authors=stored), today).kinds == ()
        accented = replace(today, authors=("Zhida Jiang", "C. N. Pope", "Pätrick Plötz"))
        assert diff_records(today, accented).kinds == ("authors",)

    def test_prefix_compares_names_loosely(self) -> None:
        """Case and accents of a truncated seed list do not make a change."""
        seed = replace(SEED, authors=("ZHIDA JIANG", "Zhaolong Xíng"))
        assert "authors" not in diff_records(seed, BASE).kinds


class TestCategories:
    def test_cross_list_added_and_removed(self) -> None:
        """A categories change names the categories added and removed."""
        change = diff_records(BASE, replace(BASE, categories=("cs.DC", "cs.AI")))
        assert change.changes["categories"]["added"] == ["cs.AI"]
        assert change.changes["categories"]["removed"] == ["cs.LG"]


class TestSeedRecords:
    def test_fields_a_seed_cannot_carry_are_unknown(self) -> None:
        """Version, comment, journal ref, DOI and cross-lists are no change after a seed."""
        full = replace(BASE, version=3, comment="c", journal_ref="j", doi="10.1/x")
        assert not diff_records(SEED, full)

    def test_seed_title_differs(self) -> None:
        """A title that differs from the seed's is reported."""
        assert diff_records(SEED, replace(BASE, title="Other")).kinds == ("title",)

    def test_seed_primary_category_differs(self) -> None:
        """A primary category that differs from the seed's is a categories change."""
        assert diff_records(SEED, replace(BASE, primary_category="cs.LG")).kinds == ("categories",)

    def test_unknown_seed_title_is_no_change(self) -> None:
        """A seed record without a title does not compare titles."""
        assert not diff_records(replace(SEED, title=None), BASE)
