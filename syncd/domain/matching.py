"""Which publication is a paper's, from what one lookup found: links, states and events.

A lookup brings what arXiv's record says (``arxiv_link``), the works a
source links to the preprint (``Lookup.linked``), perhaps the works a
bibliographic search found (``Lookup.searched``, each scored by
``syncd.domain.bibliographic.score_work``) and notices on published works.
``plan_publication`` turns them, with what the record already holds
(``KnownPublications``), into a ``PublicationPlan``: the links to write,
the notices to record and the events to publish.

Strength, strongest first (``strength``):

1. a certain link with a DOI: arXiv's own ``doi``, or a relation between the
   two works in Crossref or OpenAlex;
2. a link a person confirmed;
3. arXiv's ``journal_ref`` without a DOI;
4. a bibliographic match scored at least ``Thresholds.accept``; among these,
   the higher score.

A bibliographic match below ``Thresholds.review`` is dropped; one from
``review`` to below ``accept`` is stored as a candidate, only while the
paper has no publication, and never announced.  A key (``link_key``) a
person rejected is never proposed again, by any route.

- No current publication, and a link of the first three kinds or an
  accepted match: it is stored accepted, and ``paper.published`` planned.
- A current publication and a strictly stronger link with another key:
  the current one becomes replaced, the new one accepted, and
  ``paper.publication_changed`` planned.  Equal strength keeps the current
  one: two certain DOIs that disagree do not take turns.
- The current key found again: its evidence is replaced by a stronger
  route's, and what it lacks (venue, date, title...) is filled in from the
  new finding; no event.
- New notices on the current publication (after the plan) are recorded and
  announced in date order after any published event: ``paper.retracted``
  for a retraction, ``paper.corrected`` for any other notice.

``quiet`` (an author's baseline) writes the same links and notices and
plans no event.

A person decides a candidate: ``confirm`` makes it the paper's publication
(confirmed, announced as published or as a change); ``reject`` turns down a
candidate, or the current publication itself, for good and silently: the
paper then has no publication until a later lookup finds another.

When a paper is looked up again (``next_lookup``): each paper has its slot
in every interval, one of ``LOOKUP_SLOTS`` evenly spaced ones (hourly for a
week), chosen by its stable share (``syncd.domain.cadence``), and the next
lookup is in the first of its slots at least half an interval away.  So
lookups of papers added together spread evenly, a paper is looked up once
per interval (the slot after the one just used), and never sooner than half
an interval nor later than one and a half after the last; and the papers of
one slot come due together, so their links and notices are asked in batches
(were every paper at its own moment, each would cost a request of each).
A source that failed is tried again sooner, backing off
(``retry_after_failure``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from syncd.domain.bibliographic import score_work
from syncd.domain.cadence import slot_start, stable_share
from syncd.domain.publications import (
    Evidence,
    KnownPublications,
    LinkedWork,
    LinkState,
    MatchLevel,
    Notice,
    PlannedEvent,
    PublicationLink,
    PublicationPlan,
    PublicationSource,
    Work,
    link_json,
    link_key,
    normalize_doi,
    notice_is_retraction,
    notice_json,
)
from syncd.domain.record import Record, normalize_text
from syncd.domain.vocabulary import EventType

__all__ = [
    "FIRST_RETRY",
    "LOOKUP_SLOTS",
    "Lookup",
    "Thresholds",
    "arxiv_link",
    "confirm",
    "next_lookup",
    "plan_publication",
    "reject",
    "retry_after_failure",
    "score_work",
    "strength",
    "wants_search",
]

# arXiv's own DOIs (DataCite's, 10.48550/arXiv.<id>) name the preprint, not a publication.
_ARXIV_DOI_PREFIX = "10.48550/"
# arXiv's doi field sometimes holds several DOIs, separated by spaces or punctuation.
_DOI_SEPARATORS = re.compile(r"[\s,;]+")
# How long after a source's first failure it is tried again; doubled at each failure after.
FIRST_RETRY = 600.0
# The slots papers are looked up in, per interval (module doc): hourly for a week.
LOOKUP_SLOTS = 168
_ANNOUNCED = (LinkState.ACCEPTED, LinkState.CONFIRMED)


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The bibliographic scores a match is announced from (``accept``) and held for review
    from (``review``): ``[publications] accept_score`` and ``review_score``."""

    accept: float
    review: float

    def __post_init__(self) -> None:
        if not 0.0 < self.review <= self.accept <= 1.0:
            raise ValueError(
                f"thresholds must satisfy 0 < review <= accept <= 1, "
                f"not review={self.review} and accept={self.accept}"
            )


@dataclass(frozen=True, slots=True)
class Lookup:
    """What one lookup of a paper found: works linked to it, the works a bibliographic
    search found (None: no search this time), and notices on published works."""

    linked: tuple[LinkedWork, ...] = ()
    searched: tuple[Work, ...] | None = None
    notices: tuple[Notice, ...] = ()


def _publication_doi(field: str | None) -> str | None:
    """The first DOI of arXiv's ``doi`` field that is not arXiv's own; None if none is."""
    for word in _DOI_SEPARATORS.split(field or ""):
        doi = normalize_doi(word) if word else None
        if doi is not None and not doi.startswith(_ARXIV_DOI_PREFIX):
            return doi
    return None


def arxiv_link(record: Record) -> PublicationLink | None:
    """The publication arXiv's own record names: its DOI (with the journal reference as
    venue), else its journal reference alone; None when it names neither."""
    doi = _publication_doi(record.doi)
    venue = normalize_text(record.journal_ref)
    if doi is None and venue is None:
        return None
    return PublicationLink(
        doi=doi,
        venue=venue,
        type=None,
        date=None,
        title=None,
        url=_doi_url(doi),
        evidence=Evidence(
            level=MatchLevel.ARXIV,
            source=PublicationSource.ARXIV,
            how="arxiv-doi" if doi is not None else "arxiv-journal-ref",
            score=1.0,
        ),
        state=LinkState.ACCEPTED,
    )


def _doi_url(doi: str | None) -> str | None:
    return None if doi is None else f"https://doi.org/{doi}"


def _work_link(work: Work, evidence: Evidence) -> PublicationLink:
    return PublicationLink(
        doi=work.doi,
        venue=work.venue,
        type=work.type,
        date=work.date,
        title=work.title,
        url=work.url or _doi_url(work.doi),
        evidence=evidence,
        state=LinkState.ACCEPTED,
    )


def strength(link: PublicationLink) -> tuple[int, float]:
    """How strongly a link is the paper's, comparable: the route's rank, then the score
    (the module doc's order: a certain DOI 3, a person's confirmation 2, arXiv's journal
    reference 1, a bibliographic match 0)."""
    evidence = link.evidence
    if evidence.level is not MatchLevel.BIBLIOGRAPHIC and link.doi is not None:
        rank = 3
    elif link.state is LinkState.CONFIRMED:
        rank = 2
    elif evidence.level is MatchLevel.ARXIV:
        rank = 1
    else:
        rank = 0
    return rank, evidence.score


def _announceable(link: PublicationLink, thresholds: Thresholds) -> bool:
    """Whether a link found now may be announced: certain, or scored at least ``accept``."""
    return link.evidence.level is not MatchLevel.BIBLIOGRAPHIC or (
        link.evidence.score >= thresholds.accept
    )


def _found_links(
    record: Record, found: Lookup, thresholds: Thresholds, rejected: frozenset[str]
) -> dict[str, PublicationLink]:
    """Every link found now, by key, in the order found: the strongest finding of each,
    with what it lacks filled in from the others.

    A work without a DOI has no key but arXiv's journal reference's and is
    left out; so is a linked work naming another paper, a match below
    ``review``, and every key a person rejected.
    """
    findings: list[PublicationLink] = []
    from_arxiv = arxiv_link(record)
    if from_arxiv is not None:
        findings.append(from_arxiv)
    for linked in found.linked:
        if linked.work.doi is not None and linked.arxiv_id == record.arxiv_id:
            certain = Evidence(MatchLevel.LINK, linked.work.source, linked.how, 1.0)
            findings.append(_work_link(linked.work, certain))
    for work in found.searched or ():
        evidence = score_work(record, work)
        if work.doi is not None and evidence.score >= thresholds.review:
            findings.append(_work_link(work, evidence))
    strongest: dict[str, PublicationLink] = {}
    for link in findings:
        key = link_key(link)
        if key in rejected:
            continue
        earlier = strongest.get(key)
        if earlier is None:
            strongest[key] = link
        elif strength(link) > strength(earlier):
            strongest[key] = _filled(link, earlier)
        else:
            strongest[key] = _filled(earlier, link)
    return strongest


def _filled(link: PublicationLink, other: PublicationLink) -> PublicationLink:
    """``link`` with what it lacks (venue, type, date, title, address) taken from ``other``."""
    return replace(
        link,
        venue=link.venue or other.venue,
        type=link.type or other.type,
        date=link.date or other.date,
        title=link.title or other.title,
        url=link.url or other.url,
    )


def _enriched(current: PublicationLink, finding: PublicationLink | None) -> PublicationLink:
    """The current link, with a stronger finding's evidence and what it lacked filled in."""
    if finding is None:
        return current
    # A confirmed link keeps its confirmation's rank: only a certain DOI outranks it.
    evidence = finding.evidence if strength(finding) > strength(current) else current.evidence
    return replace(_filled(current, finding), evidence=evidence)


def _published(link: PublicationLink) -> PlannedEvent:
    return PlannedEvent(EventType.PUBLISHED.value, {"publication": link_json(link)})


def _changed(new: PublicationLink, previous: PublicationLink) -> PlannedEvent:
    changes = {"publication": link_json(new), "previous": link_json(previous)}
    return PlannedEvent(EventType.PUBLICATION_CHANGED.value, changes)


def _new_notices(
    current: PublicationLink | None, found: Lookup, recorded: frozenset[str]
) -> list[Notice]:
    """The notices on ``current`` not recorded yet, each once, oldest first (undated last)."""
    if current is None or current.doi is None:
        return []
    every = [*found.notices, *_works_notices(found)]
    fresh = {n.doi: n for n in every if n.target_doi == current.doi and n.doi not in recorded}
    return sorted(fresh.values(), key=lambda n: (n.date is None, n.date or "", n.doi))


def _works_notices(found: Lookup) -> Iterable[Notice]:
    for linked in found.linked:
        yield from linked.work.notices
    for work in found.searched or ():
        yield from work.notices


def _notice_event(current: PublicationLink, notice: Notice) -> PlannedEvent:
    kind = EventType.RETRACTED if notice_is_retraction(notice.type) else EventType.CORRECTED
    changes = {"publication": link_json(current), "notice": notice_json(notice)}
    return PlannedEvent(kind.value, changes)


def plan_publication(
    record: Record,
    known: KnownPublications,
    found: Lookup,
    thresholds: Thresholds,
    *,
    quiet: bool,
) -> PublicationPlan:
    """What a lookup writes about ``record``'s paper: links, notices, events (module doc)."""
    by_key = {link_key(link): link for link in known.links}
    rejected = frozenset(k for k, link in by_key.items() if link.state is LinkState.REJECTED)
    findings = _found_links(record, found, thresholds, rejected)
    current = known.current
    links: list[PublicationLink] = []
    events: list[PlannedEvent] = []
    if current is not None:
        kept = _enriched(current, findings.pop(link_key(current), None))
        if kept != current:
            links.append(kept)
        current = kept
    contenders = [link for link in findings.values() if _announceable(link, thresholds)]
    best = max(contenders, key=strength, default=None)  # the first of equals: arXiv's
    if best is not None and (current is None or strength(best) > strength(current)):
        if current is None:
            events.append(_published(best))
        else:
            previous = replace(current, state=LinkState.REPLACED)
            links = [previous]  # written instead of the current one enriched, same key
            events.append(_changed(best, previous))
        links.append(best)
        current = best
    if current is None:
        links.extend(
            replace(link, state=LinkState.CANDIDATE)
            for key, link in findings.items()
            if key not in by_key
        )
    notices = _new_notices(current, found, known.notice_dois)
    if current is not None:
        events.extend(_notice_event(current, notice) for notice in notices)
    return PublicationPlan(
        links=tuple(links), notices=tuple(notices), events=() if quiet else tuple(events)
    )


def wants_search(
    known: KnownPublications,
    linked_found: bool,
    searched_at: datetime | None,
    now: datetime,
    interval: float,
) -> bool:
    """Whether this lookup runs a bibliographic search: the paper has no publication, no
    link was found now, and none ran within ``interval`` seconds."""
    if known.current is not None or linked_found:
        return False
    return searched_at is None or (now - searched_at).total_seconds() >= interval


def _decided(known: KnownPublications, key: str) -> PublicationLink:
    for link in known.links:
        if link_key(link) == key:
            return link
    raise ValueError(f"the paper has no publication link {key!r}")


def confirm(known: KnownPublications, key: str) -> PublicationPlan:
    """A person confirms the candidate ``key``: it becomes the paper's publication,
    replacing the current one if any, announced as published or as changed.

    Its evidence keeps its score and parts, its ``how`` becomes ``person``.
    Raises ``ValueError`` for a key that is not a candidate of the paper.
    """
    link = _decided(known, key)
    if link.state is not LinkState.CANDIDATE:
        raise ValueError(
            f"{key!r} is {link.state.value}, not a candidate: only a candidate can be confirmed"
        )
    confirmed = replace(
        link, state=LinkState.CONFIRMED, evidence=replace(link.evidence, how="person")
    )
    current = known.current
    if current is None:
        return PublicationPlan(links=(confirmed,), events=(_published(confirmed),))
    previous = replace(current, state=LinkState.REPLACED)
    return PublicationPlan(links=(previous, confirmed), events=(_changed(confirmed, previous),))


def reject(known: KnownPublications, key: str) -> PublicationPlan:
    """A person rejects ``key``, a candidate or the paper's current publication: it becomes
    rejected, never proposed again by any route.

    No event: a rejected candidate was never announced, and a rejected
    publication leaves the paper without one (its pages show none) until a
    later lookup finds another; nothing is said of it.  Raises ``ValueError``
    for a key that is neither.
    """
    link = _decided(known, key)
    if link.state is not LinkState.CANDIDATE and link.state not in _ANNOUNCED:
        raise ValueError(
            f"{key!r} is {link.state.value}: only a candidate or the paper's current "
            "publication can be rejected"
        )
    return PublicationPlan(links=(replace(link, state=LinkState.REJECTED),))


def next_lookup(paper_key: str, now: datetime, interval: float) -> datetime:
    """When the paper is looked up again after a lookup at ``now``: the first of its slots
    (one of ``LOOKUP_SLOTS``, by ``paper_key``) at least half an interval away (module doc)."""
    period = timedelta(seconds=interval)
    share = int(stable_share(paper_key) * LOOKUP_SLOTS) / LOOKUP_SLOTS
    # The latest slot before half an interval from now, then the one after it.
    return slot_start(share, now + period / 2 - timedelta(microseconds=1), interval) + period


def retry_after_failure(failures: int, now: datetime, interval: float) -> datetime:
    """When a lookup that failed ``failures`` times in a row (1 for the first) is tried
    again: ``FIRST_RETRY`` seconds after the first, doubling, never more than ``interval``."""
    doublings = min(max(failures, 1) - 1, 32)  # past 32, the cap has long been reached
    return now + timedelta(seconds=min(FIRST_RETRY * 2**doublings, interval))
