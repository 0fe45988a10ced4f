"""syncd.domain.history: a history in version order, each revision against the one before."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from syncd.domain.history import (
    RevisionRefError,
    find_revision,
    history_steps,
    in_version_order,
    revision_refs,
    withdrawal_mark,
)
from syncd.domain.model import Revision
from syncd.domain.record import Record

WHEN = datetime(2026, 3, 1, tzinfo=UTC)
SEED = Record(title="FlexMARL: Graph-Driven Co-Design", authors=("Ada",))
V1 = Record(
    arxiv_id="2602.09578",
    version=1,
    title="Co-Design for Efficient Learning",
    authors=("Ada",),
    authors_complete=True,
)
V2 = replace(V1, version=2, title="FlexMARL: Graph-Driven Co-Design")


def _revision(seq: int, record: Record, source: str = "arxiv", **stored: object) -> Revision:
    kinds = stored.get("kinds", ())
    changes = stored.get("changes", {})
    return Revision(seq, WHEN, source, record.version, None, kinds, changes, record)  # type: ignore[arg-type]


# As stored after a link at v2 and a backfill of v1: the link's revision says
# "version" against the seed, the backfilled v1 says nothing.
STORED = [
    _revision(1, SEED, "seed:a.txt"),
    _revision(2, V2, kinds=("version",), changes={"version": {"old": None, "new": 2}}),
    _revision(3, V1, "arxiv:v1"),
]


def test_the_order_is_seed_then_versions_then_later_observations() -> None:
    """Seeds first, versions ascending, a version's observations in the order stored."""
    later = _revision(4, replace(V2, doi="10.1/x"))
    ordered = in_version_order([later, *reversed(STORED)])
    assert [r.seq for r in ordered] == [1, 3, 2, 4]


def test_each_revision_is_diffed_against_the_one_before() -> None:
    """v1 against the seed, v2 against v1: the title changes twice, whatever was stored."""
    steps = history_steps(STORED)
    assert [s.revision.seq for s in steps] == [1, 3, 2]
    assert [s.previous.seq if s.previous else None for s in steps] == [None, 1, 3]
    first, v1, v2 = (s.revision for s in steps)
    assert (first.kinds, first.changes) == ((), {})
    assert v1.kinds == ("title",)
    assert v2.kinds == ("version", "title")
    assert v2.changes["title"] == {"old": V1.title, "new": V2.title}
    assert steps[0].first and not steps[1].first


def test_the_stored_revisions_are_left_as_they_were() -> None:
    """Retelling changes nothing stored: events and revisions keep what was announced."""
    history_steps(STORED)
    assert STORED[1].kinds == ("version",) and STORED[2].kinds == ()


def test_an_empty_history_has_no_steps() -> None:
    assert history_steps([]) == []
    assert withdrawal_mark([]) is None


@pytest.mark.parametrize(("ref", "seq"), [("seed", 1), ("v1", 3), ("v2", 4), ("r2", 2), ("r1", 1)])
def test_revisions_are_found_by_reference(ref: str, seq: int) -> None:
    """vN is the latest observation of version N; rN a revision by its seq."""
    history = [*STORED, _revision(4, replace(V2, doi="10.1/x"))]
    assert find_revision(history, ref).seq == seq


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("v9", "this paper has no revision v9; it has seed, v1, v2 (or r<seq>"),
        ("r99", "this paper has no revision r99"),
        ("latest", "'latest' is not vN, seed or rN"),
        ("v-1", "'v-1' is not vN, seed or rN"),
    ],
)
def test_a_bad_reference_says_what_the_history_holds(ref: str, message: str) -> None:
    with pytest.raises(RevisionRefError, match=message.replace("(", r"\(")):
        find_revision(STORED, ref)


def test_each_revision_has_the_shortest_reference_back_to_it() -> None:
    """The latest observation of a version is vN, earlier ones rN."""
    history = [*STORED, _revision(4, replace(V2, doi="10.1/x"))]
    refs = revision_refs(history)
    assert refs == {1: "seed", 3: "v1", 2: "r2", 4: "v2"}
    assert all(find_revision(history, ref).seq == seq for seq, ref in refs.items())


def test_a_withdrawal_is_marked_since_its_first_withdrawn_version() -> None:
    """v3 and v4 withdrawn: since v3, by the authors, with the current notice."""
    notice = "This paper has been withdrawn by the authors."
    withdrawn = replace(V2, version=3, abstract=notice, withdrawn=True, withdrawn_by="author")
    history = [*STORED, _revision(4, withdrawn), _revision(5, replace(withdrawn, version=4))]
    mark = withdrawal_mark(history)
    assert mark is not None
    assert (mark.version, mark.by, mark.notice) == (3, "author", notice)


def test_an_admin_note_in_the_comment_is_the_notice() -> None:
    note = "arXiv admin note: this paper has been withdrawn by arXiv administrators."
    withdrawn = replace(V2, version=3, comment=note, withdrawn=True, withdrawn_by="admin")
    mark = withdrawal_mark([*STORED, _revision(4, withdrawn)])
    assert mark is not None and mark.notice == note


def test_a_paper_back_from_a_withdrawal_is_not_marked() -> None:
    withdrawn = replace(V2, version=3, withdrawn=True)
    history = [*STORED, _revision(4, withdrawn), _revision(5, replace(V2, version=4))]
    assert withdrawal_mark(history) is None
