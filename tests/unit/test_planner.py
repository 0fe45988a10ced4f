"""The cycle planner: what a trusted answer means for the record, decided from plain values."""

from __future__ import annotations

from dataclasses import replace

import pytest

from syncd.domain.attribution import NameIndex
from syncd.domain.baselines import announcement
from syncd.domain.model import Paper, PaperState, PaperWrite
from syncd.domain.planner import (
    Observed,
    Snapshot,
    check_trust,
    needs_identity_basis,
    plan_cycle,
    review,
)
from syncd.domain.record import Record, content_hash
from syncd.domain.vocabulary import Decision, EventType, Origin, PaperStatus
from syncd.errors import FeedError, NotFoundError

AUTHOR = "Zhida Jiang"
ENTRY = Record(
    arxiv_id="2401.00001",
    version=1,
    title="A paper",
    abstract="Words about scheduling.",
    authors=(AUTHOR, "Yang Xu"),
    authors_complete=True,
    primary_category="cs.DC",
    categories=("cs.DC",),
)


def _paper(record: Record, status: PaperStatus = PaperStatus.TRACKED, **fields: object) -> Paper:
    values: dict[str, object] = {
        "id": 7,
        "author": AUTHOR,
        "key": record.arxiv_id or "seed-key",
        "arxiv_id": record.arxiv_id,
        "status": status,
        "origin": Origin.ARXIV,
        "record": record,
        "record_hash": content_hash(record),
        "absent_syncs": 0,
    } | fields
    return Paper(**values)  # type: ignore[arg-type]


def _state(paper: Paper) -> PaperState:
    return PaperState(
        paper.id,
        paper.key,
        paper.arxiv_id,
        paper.status,
        paper.origin,
        paper.record_hash,
        paper.absent_syncs,
    )


def _snapshot(**fields: object) -> Snapshot:
    values: dict[str, object] = {"author": AUTHOR, "include_ids": (), "removal_after": 3} | fields
    return Snapshot(**values)  # type: ignore[arg-type]


class TestObserved:
    def test_unchanged_tracked_entries_are_only_seen(self) -> None:
        """An entry whose hash matches a tracked paper is noted as seen and nothing more."""
        observed = Observed()
        observed.take([ENTRY], {"2401.00001": _state(_paper(ENTRY))})
        assert (observed.seen, observed.changed, observed.new) == ({"2401.00001"}, {}, {})

    def test_changed_and_new_entries_are_kept(self) -> None:
        """A changed entry and an unknown one are kept for the plan."""
        v2 = Record(**{**ENTRY.to_dict(), "version": 2, "authors": ENTRY.authors})
        other = Record(arxiv_id="2401.00002", version=1, title="Other")
        observed = Observed()
        observed.take([v2, other], {"2401.00001": _state(_paper(ENTRY))})
        assert observed.changed == {"2401.00001": v2}
        assert observed.new == {"2401.00002": other}

    def test_a_candidate_wants_a_look_even_unchanged(self) -> None:
        """An unchanged entry of a held candidate is kept: it may be promoted."""
        observed = Observed()
        state = _state(_paper(ENTRY, PaperStatus.CANDIDATE))
        observed.take([ENTRY], {"2401.00001": state})
        assert observed.changed == {"2401.00001": ENTRY}

    def test_an_unchanged_entry_of_a_paper_missed_before_is_kept(self) -> None:
        """A tracked paper absent from earlier answers and back unchanged is kept, so the
        plan resets its absence count instead of letting it run on to a removal."""
        observed = Observed()
        state = _state(_paper(ENTRY, absent_syncs=2))
        observed.take([ENTRY], {"2401.00001": state})
        assert observed.changed == {"2401.00001": ENTRY}

    def test_a_deferred_entry_is_seen_but_not_decided(self) -> None:
        """A deferred new entry stays seen (never absent) and gets no write this cycle."""
        observed = Observed()
        observed.take([ENTRY], {})
        observed.defer("2401.00001")
        assert (observed.seen, observed.new) == ({"2401.00001"}, {})
        assert plan_cycle(_snapshot(), observed, {}).writes == ()


class TestCheckTrust:
    def test_an_empty_answer_for_an_author_with_papers_is_refused(self) -> None:
        """No entries at all while papers are tracked is a glitch, not removals."""
        with pytest.raises(FeedError, match="no papers for an author who had 3"):
            check_trust(Observed(), tracked=3, known=[])

    def test_a_lower_version_is_refused(self) -> None:
        """An entry older than the stored version makes the answer untrusted, naming both."""
        stored = _paper(Record(**{**ENTRY.to_dict(), "version": 3, "authors": ENTRY.authors}))
        observed = Observed(seen={"2401.00001"}, changed={"2401.00001": ENTRY})
        with pytest.raises(FeedError, match=r"2401\.00001v1 for a paper stored at v3"):
            check_trust(observed, tracked=1, known=[stored])

    def test_one_version_lower_is_refused(self) -> None:
        """v2 answered for a paper stored at v3: one step down is as impossible as two."""
        stored = _paper(_at(3))
        observed = Observed(seen={"2401.00001"}, changed={"2401.00001": _at(2)})
        with pytest.raises(FeedError, match=r"2401\.00001v2 for a paper stored at v3"):
            check_trust(observed, tracked=1, known=[stored])

    def test_the_same_version_changed_is_trusted(self) -> None:
        """v3 with new metadata (a DOI, a journal reference) for a paper stored at v3."""
        observed = Observed(seen={"2401.00001"}, changed={"2401.00001": _at(3, doi="10.1/x")})
        check_trust(observed, tracked=1, known=[_paper(_at(3))])

    def test_a_higher_version_is_trusted(self) -> None:
        """A newer version is what arXiv does every day."""
        v2 = Record(**{**ENTRY.to_dict(), "version": 2, "authors": ENTRY.authors})
        observed = Observed(seen={"2401.00001"}, changed={"2401.00001": v2})
        check_trust(observed, tracked=1, known=[_paper(ENTRY)])


class TestPlan:
    def test_a_quiet_cycle_writes_nothing(self) -> None:
        """Nothing changed, nothing new, nothing absent: no writes, no notes."""
        plan = plan_cycle(_snapshot(), Observed(seen={"2401.00001"}), {})
        assert (plan.writes, plan.notes) == ((), ())

    def test_a_new_version_is_a_revision_and_an_event(self) -> None:
        """A tracked paper's new version appends a revision and publishes paper.revised."""
        v2 = Record(**{**ENTRY.to_dict(), "version": 2, "title": "B", "authors": ENTRY.authors})
        paper = _paper(ENTRY)
        observed = Observed(seen={"2401.00001"}, changed={"2401.00001": v2})
        (write,) = plan_cycle(_snapshot(changed=[paper]), observed, {}).writes
        assert write.event_type == EventType.REVISED
        assert write.event_kinds == ("version", "title")
        assert [r.record for r in write.revisions] == [v2]

    def test_a_new_reading_of_the_same_version_is_stored_quietly(self) -> None:
        """The same names stored as an older syncd read them: the entry becomes the record,
        as a revision without kinds, and nothing is announced."""
        stored = replace(ENTRY, authors=("Zhida Jiang, Yang Xu",))
        paper = _paper(stored)
        observed = Observed(seen={"2401.00001"}, changed={"2401.00001": ENTRY})
        (write,) = plan_cycle(_snapshot(changed=[paper]), observed, {}).writes
        assert write.event_type is None and write.event_kinds == ()
        assert [(r.record, r.kinds) for r in write.revisions] == [(ENTRY, ())]

    def test_a_plausible_new_entry_is_added(self) -> None:
        """A new entry sharing a co-author with the known papers is announced as added."""
        snapshot = _snapshot(identity_names={"Yang Xu"})
        plan = plan_cycle(snapshot, Observed(seen={"2401.00001"}, new={"2401.00001": ENTRY}), {})
        (write,) = plan.writes
        assert (write.status, write.event_type) == (PaperStatus.TRACKED, EventType.ADDED)

    def test_an_implausible_new_entry_is_held_with_a_note(self) -> None:
        """A new entry sharing nothing becomes a candidate, and the plan says why."""
        plan = plan_cycle(_snapshot(), Observed(seen={"2401.00001"}, new={"2401.00001": ENTRY}), {})
        (write,) = plan.writes
        assert write.status == PaperStatus.CANDIDATE
        assert write.candidate_reason == "shares no co-author or category with the known papers"
        assert [n.event for n in plan.notes] == ["candidate_held"]

    def test_an_included_id_is_always_the_authors(self) -> None:
        """``include_ids`` skips the identity check."""
        snapshot = _snapshot(include_ids={"2401.00001"})
        plan = plan_cycle(snapshot, Observed(seen={"2401.00001"}, new={"2401.00001": ENTRY}), {})
        assert plan.writes[0].event_type == EventType.ADDED

    def test_a_candidate_is_promoted_once_plausible(self) -> None:
        """A held candidate that now shares a category with the known papers is added."""
        paper = _paper(ENTRY, PaperStatus.CANDIDATE)
        snapshot = _snapshot(changed=[paper], identity_categories={"cs.DC"})
        observed = Observed(seen={"2401.00001"}, changed={"2401.00001": ENTRY})
        (write,) = plan_cycle(snapshot, observed, {}).writes
        assert (write.status, write.event_type) == (PaperStatus.TRACKED, EventType.ADDED)

    def test_a_removed_paper_seen_again_is_added_again(self) -> None:
        """A paper reported removed that reappears is announced as added."""
        paper = _paper(ENTRY, PaperStatus.REMOVED)
        observed = Observed(seen={"2401.00001"}, changed={"2401.00001": ENTRY})
        (write,) = plan_cycle(_snapshot(changed=[paper]), observed, {}).writes
        assert (write.status, write.event_type, write.revisions) == (
            PaperStatus.TRACKED,
            EventType.ADDED,
            (),
        )

    @pytest.mark.parametrize(("before", "removed"), [(0, False), (1, False), (2, True)])
    def test_absence_counts_up_to_removal(self, before: int, removed: bool) -> None:
        """A tracked paper missing from the answer is removed on its third absence."""
        state = _state(_paper(ENTRY, absent_syncs=before))
        (write,) = plan_cycle(_snapshot(absent=[state]), Observed(seen={"x"}), {}).writes
        assert write.absent_syncs == before + 1
        assert (write.event_type == EventType.REMOVED) is removed

    def test_a_linked_seed_paper_is_announced_with_its_diff(self) -> None:
        """A seed paper linked to an entry becomes tracked and publishes paper.linked."""
        seed = _paper(Record(title="A paper", abstract="Old words."), PaperStatus.UNLINKED)
        observed = Observed(seen={"2401.00001"}, new={"2401.00001": ENTRY})
        (write,) = plan_cycle(_snapshot(unlinked=[seed]), observed, {seed.id: "2401.00001"}).writes
        assert (write.paper_id, write.arxiv_id) == (seed.id, "2401.00001")
        assert (write.event_type, write.event_kinds) == (EventType.LINKED, ("abstract",))

    def test_the_identity_basis_is_wanted_only_for_identity_questions(self) -> None:
        """Only a discovered entry or a held candidate needs the names and categories."""
        new = Observed(new={"2401.00001": ENTRY})
        assert needs_identity_basis(new, set(), [])
        assert not needs_identity_basis(new, {"2401.00001"}, [])
        assert needs_identity_basis(Observed(), set(), [_paper(ENTRY, PaperStatus.CANDIDATE)])
        assert not needs_identity_basis(Observed(), set(), [_paper(ENTRY)])


def _at(version: int, **fields: object) -> Record:
    return replace(ENTRY, version=version, **fields)  # type: ignore[arg-type]


def _entry(number: int, *coauthors: str, category: str = "cs.DC") -> Record:
    return replace(
        ENTRY,
        arxiv_id=f"2401.{number:05d}",
        authors=(AUTHOR, *coauthors),
        primary_category=category,
        categories=(category,),
    )


def _new(*records: Record) -> Observed:
    return Observed(
        seen={r.arxiv_id or "" for r in records}, new={r.arxiv_id or "": r for r in records}
    )


class TestReviewNeeded:
    """Papers held for the first time are news: one ``author.review_needed`` a cycle (issue 30)."""

    def _known(self, **fields: object) -> Snapshot:
        """An author whose known papers list Yang Xu, in cs.DC."""
        return _snapshot(
            identity_names={AUTHOR, "Yang Xu"}, identity_categories={"cs.DC"}, **fields
        )

    def test_new_candidates_are_announced_once_with_how_many_and_which(self) -> None:
        """Two papers held for the first time: one event after the cycle's new papers, filed
        under the first held by id, naming both and how many wait in all."""
        held = [
            _entry(3, "Emmy Noether", category="math.AG"),
            _entry(2, "Alan Turing", category="math.LO"),
        ]
        plan = plan_cycle(self._known(candidates=5), _new(*held, _entry(4, "Yang Xu")), {})
        announced = [(w.arxiv_id, w.status, w.event_type) for w in plan.writes if w.event_type]
        assert announced == [
            ("2401.00004", PaperStatus.TRACKED, EventType.ADDED),
            ("2401.00002", PaperStatus.CANDIDATE, EventType.REVIEW_NEEDED),
        ]
        (notice,) = [w for w in plan.writes if w.event_type == EventType.REVIEW_NEEDED]
        assert notice.event_changes == {
            "author": {
                "name": AUTHOR,
                "candidates": 2,
                "candidate_ids": ["2401.00002", "2401.00003"],
                "waiting": 7,
            }
        }

    def test_a_candidate_seen_again_is_not_news(self) -> None:
        """A candidate held before and held still announces nothing; one promoted leaves the
        count of those waiting."""
        stranger = _entry(2, "Emmy Noether", category="math.AG")
        again = _paper(stranger, PaperStatus.CANDIDATE)
        mate = _entry(5, "Yang Xu")
        promoted = _paper(mate, PaperStatus.CANDIDATE, id=8)
        observed = Observed(
            seen={"2401.00002", "2401.00005"},
            changed={"2401.00002": stranger, "2401.00005": mate},
        )
        plan = plan_cycle(self._known(changed=[again, promoted], candidates=2), observed, {})
        assert [w.event_type for w in plan.writes] == [EventType.ADDED]
        newcomer = _entry(6, "Alan Turing", category="math.LO")
        observed.take([newcomer], {})
        plan = plan_cycle(self._known(changed=[again, promoted], candidates=2), observed, {})
        (notice,) = [w for w in plan.writes if w.event_type == EventType.REVIEW_NEEDED]
        assert notice.arxiv_id == "2401.00006"
        assert notice.event_changes["author"]["waiting"] == 2  # 2 before, 1 promoted, 1 new

    def test_a_baseline_names_its_candidates_in_author_added_instead(self) -> None:
        """The first sync's candidates are in its author.added: no review_needed beside it."""
        plan = plan_cycle(
            self._known(baseline=True), _new(_entry(2, "Emmy Noether", category="math.AG")), {}
        )
        assert all(w.event_type is None for w in plan.writes)
        assert plan.baseline is not None and plan.baseline.candidates == ("2401.00002",)


class TestNothingKnownYet:
    """An author whose first sync took nothing is judged by the co-author basis until it does."""

    def test_the_first_paper_naming_them_in_full_is_theirs(self) -> None:
        """No paper known (a first sync that found none): a new paper naming the author written
        out, and no rival, is their one clear group: tracked and announced as added."""
        snapshot = _snapshot(basis_margin=2.0)
        plan = plan_cycle(snapshot, _new(_entry(2, "Emmy Noether")), {})
        (write,) = plan.writes
        assert (write.status, write.event_type) == (PaperStatus.TRACKED, EventType.ADDED)

    def test_two_strangers_are_no_clear_group_and_wait_for_review(self) -> None:
        """Two new papers with nothing in common: no group is clearly theirs; both are held,
        "needs review", and the cycle says so with author.review_needed."""
        plan = plan_cycle(
            _snapshot(basis_margin=2.0),
            _new(_entry(2, "Emmy Noether"), _entry(3, "Alan Turing", category="math.LO")),
            {},
        )
        assert {w.status for w in plan.writes} == {PaperStatus.CANDIDATE}
        assert all((w.candidate_reason or "").startswith("needs review") for w in plan.writes)
        assert [w.event_type for w in plan.writes] == [EventType.REVIEW_NEEDED, None]

    def test_held_candidates_join_the_groups_and_are_promoted_with_them(self) -> None:
        """A held candidate and a new paper sharing its co-author make the clear group: both
        become the author's."""
        held = _entry(2, "Emmy Noether")
        candidate = _paper(held, PaperStatus.CANDIDATE)
        observed = Observed(seen={"2401.00002"}, changed={"2401.00002": held})
        observed.take([_entry(3, "Emmy Noether")], {})
        plan = plan_cycle(
            _snapshot(basis_margin=2.0, changed=[candidate], candidates=1), observed, {}
        )
        assert [(w.arxiv_id, w.status, w.event_type) for w in plan.writes] == [
            ("2401.00002", PaperStatus.TRACKED, EventType.ADDED),
            ("2401.00003", PaperStatus.TRACKED, EventType.ADDED),
        ]

    def test_once_a_paper_is_known_the_basis_no_longer_decides(self) -> None:
        """With known papers, a new one sharing nothing with them is held, as before."""
        snapshot = _snapshot(basis_margin=2.0, identity_names={AUTHOR, "Yang Xu"})
        plan = plan_cycle(snapshot, _new(_entry(2, "Emmy Noether", category="math.AG")), {})
        (write,) = plan.writes
        assert write.status == PaperStatus.CANDIDATE


class TestBackfillFlag:
    """Which writes flag a paper whose history may lack earlier versions."""

    @pytest.mark.parametrize(("version", "flagged"), [(1, False), (2, True), (5, True)])
    def test_a_link_at_a_later_version_flags(self, version: int, flagged: bool) -> None:
        """A seed paper linked at vN > 1 has versions 1..N-1 to fetch."""
        seed = _paper(Record(title="A paper"), PaperStatus.UNLINKED)
        entry = _at(version)
        observed = Observed(seen={"2401.00001"}, new={"2401.00001": entry})
        (write,) = plan_cycle(_snapshot(unlinked=[seed]), observed, {seed.id: "2401.00001"}).writes
        assert write.backfill_pending is flagged

    @pytest.mark.parametrize(("include", "flagged"), [(True, True), (False, False)])
    def test_an_addition_at_v3_flags_but_a_candidate_waits(
        self, include: bool, flagged: bool
    ) -> None:
        """A paper added at v3 is flagged; one held as a candidate is not (yet)."""
        snapshot = _snapshot(include_ids={"2401.00001"} if include else set())
        observed = Observed(seen={"2401.00001"}, new={"2401.00001": _at(3)})
        (write,) = plan_cycle(snapshot, observed, {}).writes
        assert write.backfill_pending is flagged

    @pytest.mark.parametrize(("stored", "seen", "flagged"), [(1, 2, False), (2, 4, True)])
    def test_only_a_jump_of_versions_flags(self, stored: int, seen: int, flagged: bool) -> None:
        """v1 → v2 leaves nothing out; v2 → v4 leaves v3 out."""
        paper = _paper(_at(stored))
        observed = Observed(seen={"2401.00001"}, changed={"2401.00001": _at(seen)})
        (write,) = plan_cycle(_snapshot(changed=[paper]), observed, {}).writes
        assert write.backfill_pending is flagged

    def test_a_jump_is_one_event_naming_the_skipped_versions(self) -> None:
        """v2 → v5 is one paper.revised whose version change lists 3 and 4 as skipped."""
        paper = _paper(_at(2))
        observed = Observed(seen={"2401.00001"}, changed={"2401.00001": _at(5, title="B")})
        (write,) = plan_cycle(_snapshot(changed=[paper]), observed, {}).writes
        assert write.event_type == EventType.REVISED
        assert write.event_changes["version"] == {"old": 2, "new": 5, "skipped_versions": [3, 4]}
        assert [r.record.version for r in write.revisions] == [5]

    def test_a_promoted_candidate_flags_its_whole_past(self) -> None:
        """A candidate held at v2 and promoted at v2 still has v1 to fetch."""
        paper = _paper(_at(2), PaperStatus.CANDIDATE)
        snapshot = _snapshot(changed=[paper], identity_categories={"cs.DC"})
        observed = Observed(seen={"2401.00001"}, changed={"2401.00001": _at(2)})
        (write,) = plan_cycle(snapshot, observed, {}).writes
        assert (write.event_type, write.backfill_pending) == (EventType.ADDED, True)


class TestBaseline:
    """An author's first complete sync records everything and announces nothing but them."""

    OTHER = Record(
        arxiv_id="2401.00002",
        version=1,
        title="A namesake's paper",
        authors=(AUTHOR, "Emmy Noether"),
        primary_category="math.AG",
        categories=("math.AG",),
    )

    def _observed(self, *records: Record) -> Observed:
        observed = Observed()
        observed.take(records, {})
        return observed

    def test_claims_are_tracked_quietly_and_the_rest_scored_against_them(self) -> None:
        """A claimed entry is tracked, one sharing nothing with it held; no paper event."""
        plan = plan_cycle(
            _snapshot(claimed=["2401.00001"], baseline=True),
            self._observed(ENTRY, self.OTHER),
            {},
        )
        status = {w.arxiv_id: w.status for w in plan.writes}
        assert status == {"2401.00001": PaperStatus.TRACKED, "2401.00002": PaperStatus.CANDIDATE}
        assert all(w.event_type is None for w in plan.writes)
        assert plan.baseline is not None
        assert (plan.baseline.tracked, plan.baseline.claimed) == (1, 1)
        assert plan.baseline.candidates == ("2401.00002",)
        held = next(w for w in plan.writes if w.arxiv_id == "2401.00002")
        assert held.candidate_reason == "shares no co-author or category with the known papers"

    def test_after_the_baseline_a_claim_is_announced(self) -> None:
        """The same claim outside a baseline publishes paper.added, as discoveries do."""
        plan = plan_cycle(_snapshot(claimed=["2401.00002"]), self._observed(self.OTHER), {})
        (write,) = plan.writes
        assert (write.status, write.event_type) == (PaperStatus.TRACKED, EventType.ADDED)
        assert plan.baseline is None

    def test_a_claim_promotes_a_held_candidate(self) -> None:
        held = _paper(self.OTHER, PaperStatus.CANDIDATE)
        observed = Observed()
        observed.take([self.OTHER], {"2401.00002": _state(held)})
        plan = plan_cycle(_snapshot(changed=[held], claimed=["2401.00002"]), observed, {})
        (write,) = plan.writes
        assert (write.status, write.event_type) == (PaperStatus.TRACKED, EventType.ADDED)

    def test_a_name_only_baseline_takes_the_clear_group(self) -> None:
        """With basis_margin, the co-author groups decide; the stranger is held with a reason."""
        mates = [
            replace(ENTRY, arxiv_id=f"2401.0001{n}", authors=(AUTHOR, "Yang Xu")) for n in range(3)
        ]
        plan = plan_cycle(
            _snapshot(baseline=True, basis_margin=2.0), self._observed(*mates, self.OTHER), {}
        )
        held = [w for w in plan.writes if w.status == PaperStatus.CANDIDATE]
        assert [w.arxiv_id for w in held] == ["2401.00002"]
        assert held[0].candidate_reason == "shares no co-author with the 3 papers of the basis"
        assert plan.baseline is not None and not plan.baseline.needs_review
        assert plan.baseline.changes(AUTHOR, None, None)["author"]["papers"] == 3


class TestNames:
    """A name two followed authors could be takes a seed, a claim or a co-author, not a field."""

    FOLLOWED = NameIndex([AUTHOR, "Zhen Jiang"])

    def _entry(self, number: int, *names: str) -> Record:
        return replace(ENTRY, arxiv_id=f"2401.0010{number}", authors=names)

    def test_a_linked_seed_vouches_through_its_coauthors(self) -> None:
        """The seed links to its entry; a "Z. Jiang" entry sharing its co-author is tracked, one
        sharing only its field is held naming the rival, and nothing goes to the rival's
        namesake paper."""
        seed = _paper(
            Record(title="A paper", abstract="Words about scheduling."), PaperStatus.UNLINKED
        )
        linked = self._entry(1, "Z. Jiang", "Yang Xu")
        mate, field_only = self._entry(2, "Z. Jiang", "Yang Xu"), self._entry(3, "Z. Jiang")
        zhens = self._entry(4, "Zhen Jiang", "Yang Xu")
        observed = Observed()
        observed.take([linked, mate, field_only, zhens], {})
        snapshot = _snapshot(unlinked=[seed], followed=self.FOLLOWED)
        plan = plan_cycle(snapshot, observed, {seed.id: "2401.00101"})
        status = {w.arxiv_id: (w.status, w.candidate_reason) for w in plan.writes}
        assert status == {
            "2401.00101": (PaperStatus.TRACKED, None),
            "2401.00102": (PaperStatus.TRACKED, None),
            "2401.00103": (
                PaperStatus.CANDIDATE,
                "ambiguous: Z. Jiang could be Zhida Jiang or Zhen Jiang;"
                " no claim, seed or co-author of the known papers says which",
            ),
            "2401.00104": (PaperStatus.CANDIDATE, "no name on the paper can be Zhida Jiang"),
        }

    def test_a_held_ambiguous_candidate_waits_for_a_coauthor(self) -> None:
        """A contested candidate seen again in the same field stays held; once the author's
        known papers share its co-author, it is theirs and announced."""
        entry = self._entry(3, "Z. Jiang", "Hu Xu")
        held = _paper(entry, PaperStatus.CANDIDATE)
        observed = Observed()
        observed.take([entry], {entry.arxiv_id or "": _state(held)})
        facts = {"changed": [held], "followed": self.FOLLOWED, "identity_categories": ("cs.DC",)}
        assert plan_cycle(_snapshot(**facts), observed, {}).writes == ()  # held, unchanged
        with_mate = _snapshot(**facts, identity_names=("Zhida Jiang", "Hu Xu"))
        (write,) = plan_cycle(with_mate, observed, {}).writes
        assert (write.status, write.event_type) == (PaperStatus.TRACKED, EventType.ADDED)


def test_a_baseline_is_announced_under_its_first_tracked_paper_by_key() -> None:
    """author.added names a paper (deliveries are ordered by paper): the first tracked one
    by key, else the first at all; with no paper there is nothing to announce."""
    held = PaperWrite("a-held", "2601.00001", PaperStatus.CANDIDATE, Origin.ARXIV)
    later = PaperWrite("c-later", "2601.00003", PaperStatus.TRACKED, Origin.ARXIV, paper_id=7)
    first = PaperWrite("b-first", "2601.00002", PaperStatus.TRACKED, Origin.ARXIV, paper_id=3)
    added = announcement([held, later, first], {"author": "Ada"})
    assert added == PaperWrite(
        "b-first",
        "2601.00002",
        PaperStatus.TRACKED,
        Origin.ARXIV,
        paper_id=3,
        event_type=EventType.AUTHOR_ADDED,
        event_changes={"author": "Ada"},
    )
    only_held = announcement([held], {})
    assert only_held is not None and only_held.key == "a-held"
    assert announcement([], {"author": "Ada"}) is None


class TestReview:
    """A person's decisions on an author's candidates: the planner's, as a cycle's are."""

    held = (
        _paper(_entry(1), PaperStatus.CANDIDATE, id=11),
        _paper(_entry(2), PaperStatus.CANDIDATE, id=12),
    )

    def test_confirmed_candidates_are_tracked_and_announced(self) -> None:
        done = review(AUTHOR, ["2401.00002", "2401.00001"], Decision.CONFIRMED, {}, self.held)
        assert done.decided == ["2401.00002", "2401.00001"]
        assert [(w.paper_id, w.status, w.event_type) for w in done.writes] == [
            (11, PaperStatus.TRACKED, EventType.ADDED),
            (12, PaperStatus.TRACKED, EventType.ADDED),
        ]
        assert done.rejected == []

    def test_rejected_candidates_are_not_theirs_without_an_event(self) -> None:
        done = review(AUTHOR, ["2401.00001"], Decision.REJECTED, {}, self.held)
        assert (done.decided, done.writes, done.rejected) == (["2401.00001"], [], [11])

    def test_a_rejected_paper_confirmed_is_tracked_and_announced(self) -> None:
        rejected = (_paper(_entry(1), PaperStatus.REJECTED, id=11),)
        done = review(AUTHOR, ["2401.00001"], Decision.CONFIRMED, {}, rejected)
        assert [(w.paper_id, w.status, w.event_type) for w in done.writes] == [
            (11, PaperStatus.TRACKED, EventType.ADDED)
        ]

    def test_an_id_decided_alike_is_left_alone_and_a_stranger_refuses_all(self) -> None:
        earlier = {"2401.00001": Decision.REJECTED, "2401.00009": Decision.REJECTED}
        again = review(AUTHOR, ["2401.00009", "2401.00001"], Decision.REJECTED, earlier, ())
        assert (again.decided, again.rejected) == ([], [])
        with pytest.raises(NotFoundError, match=r"not candidates of .*: 2401\.00009"):
            review(AUTHOR, ["2401.00001", "2401.00009"], Decision.CONFIRMED, earlier, self.held)
