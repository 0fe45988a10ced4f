"""What a sync cycle writes, decided from plain values: no I/O, no clock, no logging.

The orchestrator (``syncd.service.sync``) streams arXiv's answer into an ``Observed``,
loads a ``Snapshot`` of what the record knows, links seed papers, and asks
``plan_cycle`` for the writes; it then applies them in one transaction and
logs the plan's notes.  Every rule of "what does this answer mean for the
record" lives here, where it can be tested with plain records.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from syncd.domain.attribution import IdentityFacts, NameIndex, attribute
from syncd.domain.baselines import Baseline, pending_basis, unannounced
from syncd.domain.basis import Basis, choose_basis
from syncd.domain.diff import Change, diff_records
from syncd.domain.model import NewRevision, Paper, PaperState, PaperWrite, SeedPaper
from syncd.domain.record import Record, content_hash
from syncd.domain.vocabulary import Decision, EventType, Origin, PaperStatus, RevisionSource
from syncd.errors import FeedError, NotFoundError

__all__ = [
    "Note",
    "Observed",
    "Plan",
    "Review",
    "Snapshot",
    "check_trust",
    "confirmed_write",
    "needs_identity_basis",
    "plan_cycle",
    "review",
    "seed_writes",
]

# What a revision read from a sync's answer stores as its source.
_SYNCED = str(RevisionSource.arxiv())


@dataclass
class Observed:
    """What one author's cycle has learned from arXiv, before anything is stored.

    Only entries that need a decision are kept: those of unknown papers, and
    those whose content hash differs from the stored one (or whose status
    wants a look).  A quiet cycle keeps nothing but the ids it saw.
    """

    seen: set[str] = field(default_factory=set)
    changed: dict[str, Record] = field(default_factory=dict)
    new: dict[str, Record] = field(default_factory=dict)

    def take(self, records: Iterable[Record], states: Mapping[str, PaperState]) -> None:
        """Note entries of one page against the stored states of their papers (by arXiv id)."""
        for record in records:
            arxiv_id = record.arxiv_id or ""
            self.seen.add(arxiv_id)
            state = states.get(arxiv_id)
            if state is None:
                self.new[arxiv_id] = record
            elif (
                state.record_hash != content_hash(record)
                or state.status != PaperStatus.TRACKED
                or state.absent_syncs
            ):
                self.changed[arxiv_id] = record

    def defer(self, arxiv_id: str) -> None:
        """Decide nothing on a new entry this cycle: it stays seen, and new next cycle."""
        self.new.pop(arxiv_id, None)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the record knows that a cycle's decisions depend on.

    ``changed`` are the known papers whose entries ``Observed.changed`` holds;
    ``identity_names`` and ``identity_categories`` are empty unless
    ``needs_identity_basis`` asked for them.
    """

    author: str
    include_ids: Collection[str]
    removal_after: int
    unlinked: Sequence[Paper] = ()
    changed: Sequence[Paper] = ()
    absent: Sequence[PaperState] = ()
    identity_names: Collection[str] = ()
    identity_categories: Collection[str] = ()
    # Ids the author's own arXiv feed listed this cycle: theirs, never candidates.
    claimed: Collection[str] = ()
    # The author's first complete sync: it announces the author, not each paper.
    baseline: bool = False
    # A harvest pass before the author's baseline: every paper waits for its end.
    pending: bool = False
    # A name-only author's baseline takes the largest co-author group of the new
    # entries as theirs when it holds this many times the next (``choose_basis``);
    # so does a later cycle while nothing of theirs is known (``_basis``).
    basis_margin: float | None = None
    # Every followed author's name: whom else a name on a paper could be.
    followed: NameIndex | None = None
    # How many candidates the author had before the cycle (counted when entries are new).
    candidates: int = 0
    # Papers among the new entries that other authors hold, by arXiv id: one story each,
    # which the author joins (``Paper.authors``: who tracks it already).
    stories: Mapping[str, Paper] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Note:
    """A decision worth a log line: its stable event name and fields."""

    event: str
    fields: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Plan:
    """Every write of a complete, trusted cycle of one author, and what to log about it."""

    writes: tuple[PaperWrite, ...]
    notes: tuple[Note, ...]
    baseline: Baseline | None = None


def check_trust(observed: Observed, tracked: int, known: Sequence[Paper]) -> None:
    """Raise ``FeedError`` when arXiv's answer cannot be what arXiv holds.

    An empty answer for an author with tracked papers is a glitch arXiv has
    been seen to make, not every paper gone.  A version lower than the one
    stored cannot happen either: arXiv versions never go down.
    """
    if not observed.seen and tracked:
        raise FeedError(
            f"arXiv answered no papers for an author who had {tracked}; "
            "treating the answer as a glitch, not as removals"
        )
    for paper in known:
        entry = observed.changed.get(paper.arxiv_id or "")
        stored = paper.record.version
        if entry is not None and stored is not None and (entry.version or 0) < stored:
            raise FeedError(
                f"arXiv answered {paper.arxiv_id}v{entry.version} for a paper stored at"
                f" v{stored}; versions never go down, so the answer is not trusted"
            )


def needs_identity_basis(
    observed: Observed, linked_ids: Collection[str], changed: Sequence[Paper]
) -> bool:
    """Whether any decision will ask ``identify``: a discovered entry or a held candidate."""
    discovered = any(arxiv_id not in linked_ids for arxiv_id in observed.new)
    return discovered or any(p.status == PaperStatus.CANDIDATE for p in changed)


def plan_cycle(snapshot: Snapshot, observed: Observed, links: Mapping[int, str]) -> Plan:
    """The writes of a trusted cycle, given the seed links (paper id → arXiv id)."""
    notes: list[Note] = []
    unlinked = {p.id: p for p in snapshot.unlinked}
    writes = [_linked(unlinked[paper_id], observed.new[aid]) for paper_id, aid in links.items()]
    linked_ids = set(links.values())
    claimed = set(snapshot.claimed)
    entries = {**observed.changed, **observed.new}
    names, categories = set(snapshot.identity_names), set(snapshot.identity_categories)
    # The seed links and the author's own claims are what the rest is scored against.
    for arxiv_id in sorted((linked_ids | claimed) & set(entries)):
        names.update(entries[arxiv_id].authors)
        categories.update(entries[arxiv_id].categories)
    basis = _basis(snapshot, observed, linked_ids, known=bool(names or categories))

    facts = IdentityFacts(
        snapshot.author,
        snapshot.include_ids,
        names,
        categories,
        claimed=claimed,
        basis_reasons=None if basis is None else basis.reasons,
        followed=snapshot.followed,
    )

    def held(record: Record) -> str | None:
        """Why ``record`` is not (yet) the author's paper; None when it is."""
        verdict = attribute(record, facts)
        if not verdict.theirs:
            fields = {"arxiv_id": record.arxiv_id, "reason": verdict.reason}
            notes.append(Note("candidate_held", fields))
        return verdict.reason  # None when it is theirs

    promotions = 0
    for paper in snapshot.changed:
        entry = observed.changed[paper.arxiv_id or ""]
        # a held candidate is promoted once it shares something with the known papers
        reason = held(entry) if paper.status == PaperStatus.CANDIDATE else None
        promoted = paper.status == PaperStatus.CANDIDATE and reason is None
        promotions += int(promoted)
        write = _observed(paper, entry, promoted, reason)
        if write is not None:
            writes.append(write)
    discovered = [
        _discovered(r, held(r), snapshot.stories.get(i))
        for i, r in observed.new.items()
        if i not in linked_ids
    ]
    if not snapshot.baseline:  # a baseline's author.added names its candidates
        waiting = snapshot.candidates - promotions
        discovered = _with_review_notice(snapshot.author, discovered, waiting)
    writes += discovered
    writes += [_absent(state, snapshot.removal_after) for state in snapshot.absent]
    if not snapshot.baseline:
        return Plan(tuple(writes), tuple(notes))
    quiet = tuple(unannounced(w) for w in writes)
    summary = Baseline(
        tracked=sum(1 for w in quiet if w.status == PaperStatus.TRACKED),
        claimed=sum(1 for w in quiet if w.arxiv_id in claimed),
        candidates=tuple(sorted(w.key for w in quiet if w.status == PaperStatus.CANDIDATE)),
        needs_review=basis is not None and basis.needs_review,
    )
    return Plan(quiet, tuple(notes), summary)


def _basis(
    snapshot: Snapshot, observed: Observed, linked_ids: Collection[str], *, known: bool
) -> Basis | None:
    """A name-only author's co-author basis (``choose_basis``), when it is what decides.

    At the baseline, among its new entries and the candidates seen again
    (papers a harvest pass held for it).  Later, while nothing of the
    author's is ``known`` (no tracked, seeded, linked or claimed paper whose
    co-authors or field a new paper could share: a first sync that found
    nothing, or one that took nothing), among the same: their first real
    paper is judged as a baseline would judge it, instead of being held for
    want of anything to compare.
    None when not asked for, or when there is nothing to judge.  During a
    harvest pass before the baseline (``pending``), nothing is judged yet:
    every paper waits for the pass's end (``pending_basis``).
    """
    grouped = [r for i, r in observed.new.items() if i not in linked_ids]
    held = [p.arxiv_id or "" for p in snapshot.changed if p.status == PaperStatus.CANDIDATE]
    if snapshot.pending:
        return pending_basis([*(r.arxiv_id or "" for r in grouped), *held])
    if snapshot.basis_margin is None or (known and not snapshot.baseline):
        return None
    grouped += [observed.changed[i] for i in held]
    if not grouped:
        return None
    return choose_basis(grouped, snapshot.author, snapshot.basis_margin, snapshot.followed)


def _with_review_notice(
    author: str, discovered: Sequence[PaperWrite], waiting: int
) -> list[PaperWrite]:
    """``discovered``, the first newly held candidate announcing ``author.review_needed``.

    A paper held for the first time is news: someone must decide it.  One
    event a cycle says how many and which were held, and how many wait in
    all (``waiting``: the candidates before the cycle that it did not
    promote); a candidate seen again is not announced again.  The held come
    last, by id, so the notice follows the cycle's new papers.
    """
    held = sorted((w for w in discovered if w.status == PaperStatus.CANDIDATE), key=lambda w: w.key)
    if not held:
        return list(discovered)
    taken = [w for w in discovered if w.status != PaperStatus.CANDIDATE]
    changes = {
        "author": {
            "name": author,
            "candidates": len(held),
            "candidate_ids": [w.key for w in held],
            "waiting": waiting + len(held),
        }
    }
    notice = replace(held[0], event_type=EventType.REVIEW_NEEDED, event_changes=changes)
    return [*taken, notice, *held[1:]]


def seed_writes(papers: Sequence[SeedPaper]) -> list[PaperWrite]:
    """The writes for a seed snapshot: one unlinked paper per seed paper, no events."""
    writes = []
    for paper in papers:
        revisions = []
        previous: Record | None = None
        for revision in paper.revisions:
            change = diff_records(previous, revision.record) if previous else None
            revisions.append(_revision(revision.record, revision.source, change))
            previous = revision.record
        writes.append(
            PaperWrite(
                key=paper.key,
                arxiv_id=None,
                status=PaperStatus.UNLINKED,
                origin=Origin.SEED,
                revisions=tuple(revisions),
            )
        )
    return writes


@dataclass(frozen=True, slots=True)
class Review:
    """What a person's decisions on an author's candidates change (``review``).

    ``decided``: the ids whose decision is new, to record; ``writes``: the
    confirmed papers, tracked and announced with ``paper.added`` as a cycle
    would; ``rejected``: the ids of the rejected papers, "not theirs" without
    an event (a decision, not a removal; later cycles exclude them).
    """

    decided: list[str]
    writes: list[PaperWrite]
    rejected: list[int]


def review(
    author: str,
    arxiv_ids: Sequence[str],
    decision: Decision,
    earlier: Mapping[str, Decision],
    candidates: Sequence[Paper],
) -> Review:
    """Confirm or reject the author's ``candidates`` named by ``arxiv_ids``, all or none.

    For a confirmation, ``candidates`` hold the rejected papers too: it takes a
    rejection back.  An id already decided the same way (``earlier``) is left
    alone; any other id that is not a candidate is a ``NotFoundError``.
    """
    decided = [i for i in dict.fromkeys(arxiv_ids) if earlier.get(i) != decision]
    chosen = set(decided)
    found = [paper for paper in candidates if paper.arxiv_id in chosen]
    known = {paper.arxiv_id for paper in found}
    strangers = [i for i in decided if i not in known]
    if strangers:
        raise NotFoundError(f"not candidates of {author}: {', '.join(strangers)}")
    if decision == Decision.REJECTED:
        return Review(decided, [], [paper.id for paper in found])
    return Review(decided, [confirmed_write(paper) for paper in found], [])


def confirmed_write(paper: Paper) -> PaperWrite:
    """A candidate a person confirmed as the author's: tracked, announced with paper.added."""
    write = _observed(paper, paper.record, promoted=True, reason=None)
    assert write is not None  # an announced paper is always written
    return write


def _revision(record: Record, source: str, change: Change | None) -> NewRevision:
    if change is None:
        return NewRevision(record, source)
    return NewRevision(record, source, change.kinds, change.changes)


def _needs_backfill(status: PaperStatus, version: int | None, known: int | None) -> bool:
    """Whether a tracked paper's history may now lack versions before ``version``.

    ``known`` is the last version the history held (None: none, or none that
    counts): a link or an addition at v3 may, a jump from v2 to v4 may, the
    step from v1 to v2 cannot.  Candidates wait until they are the author's.
    """
    if status != PaperStatus.TRACKED or version is None:
        return False
    return version - (known or 0) > 1


def _linked(paper: Paper, entry: Record) -> PaperWrite:
    change = diff_records(paper.record, entry)
    return PaperWrite(
        paper_id=paper.id,
        key=paper.key,
        arxiv_id=entry.arxiv_id,
        status=PaperStatus.TRACKED,
        origin=paper.origin,
        revisions=(_revision(entry, _SYNCED, change),),
        event_type=EventType.LINKED,
        event_kinds=change.kinds,
        event_changes=change.changes,
        backfill_pending=_needs_backfill(PaperStatus.TRACKED, entry.version, None),
        read_hash=paper.record_hash,
    )


def _observed(paper: Paper, entry: Record, promoted: bool, reason: str | None) -> PaperWrite | None:
    """A known paper seen again: a revision if it changed, an event if it is (again) tracked.

    An entry whose hash differs from the stored one's while nothing differs
    that a reader would call a change (the same names, stored as an older
    syncd read them) is stored as a revision without kinds or event: the
    record becomes what is read now, and the next cycle is quiet.
    """
    # A seed of a paper another author linked is theirs once the name query sees it.
    announce = paper.status in (PaperStatus.REMOVED, PaperStatus.UNLINKED) or promoted
    change = None if content_hash(entry) == paper.record_hash else diff_records(paper.record, entry)
    if change is None and not announce and paper.absent_syncs == 0:
        return None  # the steady state: nothing to write
    status = PaperStatus.TRACKED if announce else paper.status
    event_type = None
    if announce:
        event_type = EventType.ADDED
    elif change and (status == PaperStatus.TRACKED or paper.authors):
        # A followed story's change is news, whichever of its authors' cycles saw it.
        event_type = EventType.REVISED
    return PaperWrite(
        paper_id=paper.id,
        key=paper.key,
        arxiv_id=paper.arxiv_id,
        status=status,
        origin=paper.origin,
        revisions=(_revision(entry, _SYNCED, change),) if change is not None else (),
        event_type=event_type,
        event_kinds=change.kinds if change else (),
        event_changes=change.changes if change else {},
        # Announced again, its whole past counts; else only a jump leaves a gap.
        backfill_pending=_needs_backfill(
            status, entry.version, None if announce else paper.record.version
        ),
        candidate_reason=reason,
        read_hash=paper.record_hash,
    )


def _joined(story: Paper, entry: Record, status: PaperStatus, reason: str | None) -> PaperWrite:
    """A new entry of the author that other authors hold: a name on that story, not a second
    one; revised if the entry is newer (once, by whoever), else added: storage names them on
    the story's announcement if others track it (``storage.stories.announced``)."""
    change = None if content_hash(entry) == story.record_hash else diff_records(story.record, entry)
    event_type = None
    if change and story.authors:  # a change of a followed story, whoever saw it
        event_type = EventType.REVISED
    elif status == PaperStatus.TRACKED:
        event_type = EventType.ADDED
    return PaperWrite(
        paper_id=story.id,
        key=story.key,
        arxiv_id=story.arxiv_id,
        status=status,
        origin=Origin.ARXIV,
        revisions=(_revision(entry, _SYNCED, change),) if change is not None else (),
        event_type=event_type,
        event_kinds=change.kinds if change and event_type == EventType.REVISED else (),
        event_changes=change.changes if change and event_type == EventType.REVISED else {},
        backfill_pending=_needs_backfill(status, entry.version, story.record.version),
        candidate_reason=reason,
        read_hash=story.record_hash,
    )


def _absent(paper: PaperState, removal_after: int) -> PaperWrite:
    absent = paper.absent_syncs + 1
    removed = absent >= removal_after
    return PaperWrite(
        paper_id=paper.id,
        key=paper.key,
        arxiv_id=paper.arxiv_id,
        status=PaperStatus.REMOVED if removed else paper.status,
        origin=paper.origin,
        absent_syncs=absent,
        event_type=EventType.REMOVED if removed else None,
    )


def _discovered(record: Record, reason: str | None, story: Paper | None) -> PaperWrite:
    plausible = reason is None
    status = PaperStatus.TRACKED if plausible else PaperStatus.CANDIDATE
    if story is not None:
        return _joined(story, record, status, reason)
    return PaperWrite(
        key=record.arxiv_id or "",
        arxiv_id=record.arxiv_id,
        status=status,
        origin=Origin.ARXIV,
        revisions=(NewRevision(record, _SYNCED),),
        event_type=EventType.ADDED if plausible else None,
        backfill_pending=_needs_backfill(status, record.version, None),
        candidate_reason=reason,
    )
