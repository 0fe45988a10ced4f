"""Which publication is a paper's: arXiv's record, linked works, matches, decisions, schedule."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncd.domain.matching import (
    FIRST_RETRY,
    LOOKUP_SLOTS,
    Lookup,
    Thresholds,
    arxiv_link,
    confirm,
    next_lookup,
    plan_publication,
    reject,
    retry_after_failure,
    wants_search,
)
from syncd.domain.publications import (
    Evidence,
    KnownPublications,
    LinkedWork,
    LinkState,
    MatchLevel,
    Notice,
    PublicationLink,
    PublicationPlan,
    PublicationSource,
    Work,
    link_json,
    link_key,
    notice_json,
)
from syncd.domain.record import Record
from syncd.domain.vocabulary import EventType

ARXIV_ID = "2304.05376"
AUTHORS = ("Andres M. Bran", "Sam Cox", "Andrew D. White", "Philippe Schwaller")
TITLE = "ChemCrow: Augmenting large-language models with chemistry tools"
RECORD = Record(
    arxiv_id=ARXIV_ID,
    version=2,
    title=TITLE,
    authors=AUTHORS,
    authors_complete=True,
    published="2023-04-11T17:41:13Z",
)
NATURE = "10.1038/s42256-024-00832-8"
OTHER = "10.1021/acs.jcim.4c00001"
THRESHOLDS = Thresholds(accept=0.9, review=0.6)
NOTHING = KnownPublications(links=(), notice_dois=frozenset())
NOW = datetime(2026, 12, 4, 12, tzinfo=UTC)
WEEK = 7 * 86400.0
NOT_FOUND = Lookup()


def published_work(
    doi: str = NATURE,
    title: str = "Augmenting large language models with chemistry tools",
    authors: tuple[str, ...] = AUTHORS,
    notices: tuple[Notice, ...] = (),
) -> Work:
    return Work(
        source=PublicationSource.CROSSREF,
        doi=doi,
        title=title,
        authors=authors,
        year=2024,
        date="2024-05-08",
        venue="Nature Machine Intelligence",
        type="journal-article",
        url=f"https://doi.org/{doi}",
        notices=notices,
    )


def linked(doi: str = NATURE, how: str = "crossref-relation-doi", **kwargs: str) -> LinkedWork:
    return LinkedWork(arxiv_id=kwargs.get("arxiv_id", ARXIV_ID), work=published_work(doi), how=how)


def near_miss(doi: str = OTHER) -> Work:
    # The same title, half the authors: 0.8.
    return published_work(doi, authors=(*AUTHORS[:2], "Farid Haddad", "Gina Moretti"))


def notice(doi: str, kind: str, date: str | None, target: str = NATURE) -> Notice:
    return Notice(doi=doi, type=kind, date=date, source="publisher", target_doi=target)


def applied(known: KnownPublications, plan: PublicationPlan) -> KnownPublications:
    """What the record holds after storage writes ``plan``: links upserted by key."""
    links = {link_key(link): link for link in known.links}
    links.update((link_key(link), link) for link in plan.links)
    recorded = known.notice_dois | {n.doi for n in plan.notices}
    return KnownPublications(links=tuple(links.values()), notice_dois=recorded)


def plan(
    known: KnownPublications = NOTHING,
    found: Lookup = NOT_FOUND,
    record: Record = RECORD,
    *,
    quiet: bool = False,
) -> PublicationPlan:
    return plan_publication(record, known, found, THRESHOLDS, quiet=quiet)


def known_with(*links: PublicationLink) -> KnownPublications:
    return KnownPublications(links=links, notice_dois=frozenset())


def event_types(result: PublicationPlan) -> list[str]:
    return [event.type for event in result.events]


# arXiv's own record


def test_arxiv_doi_with_journal_ref_is_a_certain_link() -> None:
    record = replace(
        RECORD,
        doi="https://doi.org/10.1038/S42256-024-00832-8",
        journal_ref="Nat. Mach. Intell. 6, 525 (2024)",
    )
    link = arxiv_link(record)
    assert link is not None
    assert (link.doi, link.venue, link.state) == (
        NATURE,
        "Nat. Mach. Intell. 6, 525 (2024)",
        LinkState.ACCEPTED,
    )
    assert link.evidence == Evidence(MatchLevel.ARXIV, PublicationSource.ARXIV, "arxiv-doi", 1.0)
    assert link.url == f"https://doi.org/{NATURE}"


def test_arxiv_own_datacite_doi_is_not_a_publication() -> None:
    assert arxiv_link(replace(RECORD, doi="10.48550/arXiv.2304.05376")) is None
    link = arxiv_link(
        replace(RECORD, doi="10.48550/arXiv.2304.05376", journal_ref="JHEP 03 (2024) 1")
    )
    assert link is not None
    assert (link.doi, link.venue, link.evidence.how) == (
        None,
        "JHEP 03 (2024) 1",
        "arxiv-journal-ref",
    )
    assert link_key(link) == "journal-ref"


def test_of_several_dois_arxiv_lists_the_first_publication_one_counts() -> None:
    link = arxiv_link(
        replace(RECORD, doi="10.48550/arXiv.2304.05376 10.1103/PhysRevD.76.013009, 10.1103/x")
    )
    assert link is not None and link.doi == "10.1103/physrevd.76.013009"


def test_a_record_naming_no_publication_has_no_arxiv_link() -> None:
    assert arxiv_link(RECORD) is None
    assert arxiv_link(replace(RECORD, doi="not a doi", journal_ref="  ")) is None


# A first publication


def test_arxiv_doi_alone_publishes_the_paper() -> None:
    record = replace(RECORD, doi=NATURE)
    result = plan(record=record)
    (link,) = result.links
    assert link == arxiv_link(record)
    assert [(e.type, e.changes) for e in result.events] == [
        (EventType.PUBLISHED.value, {"publication": link_json(link)})
    ]


@pytest.mark.parametrize(
    "how", ["crossref-relation-doi", "crossref-relation-arxiv-id", "openalex-merged"]
)
def test_a_linked_work_publishes_the_paper(how: str) -> None:
    result = plan(found=Lookup(linked=(linked(how=how),)))
    (link,) = result.links
    assert (link.doi, link.venue, link.state) == (
        NATURE,
        "Nature Machine Intelligence",
        LinkState.ACCEPTED,
    )
    assert (link.evidence.level, link.evidence.how, link.evidence.score) == (
        MatchLevel.LINK,
        how,
        1.0,
    )
    assert event_types(result) == [EventType.PUBLISHED.value]


def test_a_work_linked_to_another_preprint_is_not_this_papers() -> None:
    assert plan(found=Lookup(linked=(linked(arxiv_id="2304.99999"),))) == PublicationPlan()


def test_a_bibliographic_match_above_accept_publishes_with_its_score() -> None:
    result = plan(found=Lookup(searched=(published_work(),)))
    (link,) = result.links
    assert link.evidence.level is MatchLevel.BIBLIOGRAPHIC
    assert link.evidence.score >= 0.9 and link.state is LinkState.ACCEPTED
    assert result.events[0].changes["publication"]["score"] == link.evidence.score


def test_a_near_miss_is_a_candidate_never_announced() -> None:
    result = plan(
        found=Lookup(
            searched=(near_miss(), published_work(OTHER, title="Unrelated words entirely here"))
        )
    )
    (candidate,) = result.links
    assert candidate.state is LinkState.CANDIDATE and candidate.doi == OTHER
    assert 0.6 <= candidate.evidence.score < 0.9
    assert result.events == ()
    assert plan(applied(NOTHING, result), Lookup(searched=(near_miss(),))) == PublicationPlan()


def test_no_candidate_is_stored_beside_a_publication() -> None:
    result = plan(found=Lookup(searched=(near_miss(), published_work())))
    assert [(link.doi, link.state) for link in result.links] == [(NATURE, LinkState.ACCEPTED)]


def test_the_baseline_records_quietly() -> None:
    correction = notice("10.1038/s42256-024-00900-1", "correction", "2024-07-01")
    found = Lookup(linked=(linked(),), notices=(correction,))
    loud, quiet = plan(found=found), plan(found=found, quiet=True)
    assert quiet == replace(loud, events=())
    assert len(loud.events) == 2 and quiet.links and quiet.notices


def test_nothing_new_plans_nothing() -> None:
    found = Lookup(linked=(linked(),), searched=())
    assert plan(applied(NOTHING, plan(found=found)), found) == PublicationPlan()


# A better link, the same link again


def test_a_stronger_link_replaces_the_journal_ref() -> None:
    record = replace(RECORD, journal_ref="Nat. Mach. Intell. (2024)")
    before = applied(NOTHING, plan(record=record))
    result = plan(before, Lookup(linked=(linked(),)), record)
    previous, new = result.links
    assert (link_key(previous), previous.state) == ("journal-ref", LinkState.REPLACED)
    assert (new.doi, new.state) == (NATURE, LinkState.ACCEPTED)
    assert [(e.type, e.changes) for e in result.events] == [
        (
            EventType.PUBLICATION_CHANGED.value,
            {"publication": link_json(new), "previous": link_json(previous)},
        )
    ]


def test_two_certain_dois_that_disagree_do_not_take_turns() -> None:
    before = applied(NOTHING, plan(found=Lookup(linked=(linked(),))))
    assert plan(before, Lookup(linked=(linked(OTHER),))) == PublicationPlan()


def test_the_same_key_by_a_stronger_route_upgrades_its_evidence_quietly() -> None:
    before = applied(NOTHING, plan(found=Lookup(searched=(published_work(),))))
    result = plan(before, Lookup(linked=(linked(),)))
    (upgraded,) = result.links
    assert (upgraded.doi, upgraded.state, upgraded.evidence.how) == (
        NATURE,
        LinkState.ACCEPTED,
        "crossref-relation-doi",
    )
    assert result.events == ()


def test_arxiv_doi_is_completed_from_a_source_that_knows_more() -> None:
    record = replace(RECORD, doi=NATURE)
    before = applied(NOTHING, plan(record=record))
    (filled,) = plan(before, Lookup(linked=(linked(),)), record).links
    assert (filled.venue, filled.date, filled.evidence.how) == (
        "Nature Machine Intelligence",
        "2024-05-08",
        "arxiv-doi",
    )


def test_a_rejected_key_never_comes_back_by_any_route() -> None:
    proposed = applied(NOTHING, plan(found=Lookup(searched=(near_miss(NATURE),))))
    turned_down = applied(proposed, reject(proposed, NATURE))
    record = replace(RECORD, doi=NATURE)
    found = Lookup(linked=(linked(),), searched=(published_work(),))
    assert plan(turned_down, found, record) == PublicationPlan()


def test_a_confirmed_link_outranks_a_bibliographic_match_not_a_certain_link() -> None:
    proposed = applied(NOTHING, plan(found=Lookup(searched=(near_miss(),))))
    confirmed = applied(proposed, confirm(proposed, OTHER))
    assert confirmed.current is not None and confirmed.current.state is LinkState.CONFIRMED
    # No search runs beside a publication, but should one: a match does not displace it.
    assert plan(confirmed, Lookup(searched=(published_work(),))).events == ()
    result = plan(confirmed, Lookup(linked=(linked(),)))
    assert event_types(result) == [EventType.PUBLICATION_CHANGED.value]


# Notices


def test_notices_on_the_publication_are_announced_in_date_order_after_it() -> None:
    retraction = notice("10.1038/r", "retraction", "2025-02-01")
    correction = notice("10.1038/c", "correction", "2024-07-01")
    elsewhere = notice("10.1021/e", "retraction", "2024-01-01", target=OTHER)
    work = replace(published_work(), notices=(retraction,))
    found = Lookup(
        linked=(LinkedWork(ARXIV_ID, work, "crossref-relation-doi"),),
        notices=(correction, elsewhere, correction),
    )
    result = plan(found=found)
    assert result.notices == (correction, retraction)
    assert event_types(result) == [
        EventType.PUBLISHED.value,
        EventType.CORRECTED.value,
        EventType.RETRACTED.value,
    ]
    (link,) = result.links
    assert result.events[2].changes == {
        "publication": link_json(link),
        "notice": notice_json(retraction),
    }
    assert plan(applied(NOTHING, result), found) == PublicationPlan()


def test_a_journal_ref_without_doi_has_no_notices() -> None:
    record = replace(RECORD, journal_ref="JHEP 03 (2024) 1")
    found = Lookup(notices=(notice("10.1/c", "correction", None),))
    assert plan(record=record, found=found).notices == ()


# A person's decisions


def test_confirming_a_candidate_publishes_it() -> None:
    proposed = applied(NOTHING, plan(found=Lookup(searched=(near_miss(),))))
    result = confirm(proposed, OTHER)
    (confirmed,) = result.links
    assert (confirmed.state, confirmed.evidence.how) == (LinkState.CONFIRMED, "person")
    assert confirmed.evidence.score == proposed.links[0].evidence.score
    assert [(e.type, e.changes) for e in result.events] == [
        (EventType.PUBLISHED.value, {"publication": link_json(confirmed)})
    ]


def test_confirming_a_candidate_beside_a_publication_replaces_it() -> None:
    proposed = applied(NOTHING, plan(found=Lookup(searched=(near_miss(),))))
    published = applied(proposed, plan(proposed, Lookup(linked=(linked(),))))
    result = confirm(published, OTHER)
    previous, confirmed = result.links
    assert (previous.doi, previous.state, confirmed.doi) == (NATURE, LinkState.REPLACED, OTHER)
    assert event_types(result) == [EventType.PUBLICATION_CHANGED.value]


def test_only_a_candidate_can_be_confirmed() -> None:
    published = applied(NOTHING, plan(found=Lookup(linked=(linked(),))))
    with pytest.raises(ValueError, match="accepted, not a candidate"):
        confirm(published, NATURE)
    with pytest.raises(ValueError, match=r"no publication link '10\.1/none'"):
        confirm(published, "10.1/none")


def test_rejecting_the_publication_is_silent() -> None:
    published = applied(NOTHING, plan(found=Lookup(linked=(linked(),))))
    result = reject(published, NATURE)
    assert [(link.doi, link.state) for link in result.links] == [(NATURE, LinkState.REJECTED)]
    assert result.events == ()
    assert applied(published, result).current is None
    with pytest.raises(ValueError, match="rejected: only a candidate"):
        reject(applied(published, result), NATURE)


# When to search, when to look again


def test_a_search_only_for_a_paper_without_a_link_once_per_interval() -> None:
    published = applied(NOTHING, plan(found=Lookup(linked=(linked(),))))
    assert wants_search(NOTHING, False, None, NOW, WEEK)
    assert not wants_search(published, False, None, NOW, WEEK)
    assert not wants_search(NOTHING, True, None, NOW, WEEK)
    assert not wants_search(NOTHING, False, NOW - timedelta(days=6), NOW, WEEK)
    assert wants_search(NOTHING, False, NOW - timedelta(days=7), NOW, WEEK)


moments = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
intervals = st.integers(min_value=60, max_value=365 * 86400).map(float)


@given(st.text(min_size=1, max_size=30), moments, intervals)
def test_a_paper_is_looked_up_again_within_half_to_one_and_a_half_intervals(
    key: str, now: datetime, interval: float
) -> None:
    following = next_lookup(key, now, interval)
    assert timedelta(seconds=interval / 2) <= following - now <= timedelta(seconds=1.5 * interval)
    # Once on its slot, a paper is looked up once per interval.
    assert next_lookup(key, following, interval) - following == timedelta(seconds=interval)


def test_papers_added_together_are_looked_up_spread_over_an_interval() -> None:
    days = [(next_lookup(f"2304.{n:05d}", NOW, WEEK) - NOW).days for n in range(1000)]
    per_day = [days.count(day) for day in range(3, 11)]
    assert sum(per_day) == 1000
    assert all(100 < count < 190 for count in per_day[1:7])


def test_a_failed_source_is_tried_again_soon_backing_off() -> None:
    waits = [
        (retry_after_failure(n, NOW, WEEK) - NOW).total_seconds() for n in (1, 2, 3, 12, 10**6)
    ]
    assert waits == [FIRST_RETRY, 2 * FIRST_RETRY, 4 * FIRST_RETRY, WEEK, WEEK]
    assert retry_after_failure(1, NOW, 60.0) - NOW == timedelta(seconds=60)


@given(st.integers(min_value=1, max_value=10**9), intervals)
def test_backing_off_never_shrinks_nor_passes_the_interval(failures: int, interval: float) -> None:
    wait = retry_after_failure(failures, NOW, interval) - NOW
    assert timedelta(0) < wait <= timedelta(seconds=interval)
    assert retry_after_failure(failures + 1, NOW, interval) - NOW >= wait


def test_thresholds_are_ordered() -> None:
    with pytest.raises(ValueError, match="review <= accept"):
        Thresholds(accept=0.6, review=0.9)


# Whatever happened before, a plan keeps the rules


POOL = ("10.1/a", "10.1/b", "10.1/c")
TITLES = (
    "Augmenting large language models with chemistry tools",
    "ChemCrow: augmenting language models for chemistry",
    "Assessment of chemistry knowledge in large language models that generate code",
)
works = st.builds(
    published_work,
    doi=st.sampled_from(POOL),
    title=st.sampled_from(TITLES),
    authors=st.sampled_from([AUTHORS, AUTHORS[:2], ("Farid Haddad",)]),
)
notices = st.builds(
    notice,
    doi=st.sampled_from(("10.9/n1", "10.9/n2", "10.9/n3")),
    kind=st.sampled_from(("correction", "retraction", "expression_of_concern")),
    date=st.sampled_from((None, "2024-07", "2025-01-02")),
    target=st.sampled_from(POOL),
)
lookups = st.builds(
    Lookup,
    linked=st.lists(
        st.builds(
            LinkedWork,
            arxiv_id=st.just(ARXIV_ID),
            work=works,
            how=st.sampled_from(("crossref-relation-doi", "openalex-merged")),
        ),
        max_size=2,
    ).map(tuple),
    searched=st.none() | st.lists(works, max_size=3).map(tuple),
    notices=st.lists(notices, max_size=3).map(tuple),
)
records = st.builds(
    replace,
    st.just(RECORD),
    doi=st.sampled_from((None, "10.48550/arXiv.2304.05376", *POOL)),
    journal_ref=st.sampled_from((None, "Nat. Mach. Intell. 6 (2024)")),
)
steps = st.lists(
    st.one_of(
        lookups,
        st.tuples(st.sampled_from((confirm, reject)), st.sampled_from((*POOL, "journal-ref"))),
    ),
    max_size=5,
)


def history(record: Record, taken: list[object]) -> KnownPublications:
    """What the record holds after lookups and a person's decisions (the ones allowed)."""
    known = NOTHING
    for step in taken:
        if isinstance(step, Lookup):
            known = applied(known, plan(known, step, record, quiet=False))
        else:
            decide, key = step  # type: ignore[misc]
            try:
                known = applied(known, decide(known, key))
            except ValueError:
                continue
    return known


@given(records, steps, lookups, st.booleans())
def test_a_plan_keeps_the_rules(
    record: Record, taken: list[object], found: Lookup, quiet: bool
) -> None:
    known = history(record, taken)
    result = plan(known, found, record, quiet=quiet)
    states = {link_key(link): link.state for link in known.links}
    assert all(states.get(link_key(link)) is not LinkState.REJECTED for link in result.links)
    after = applied(known, result)
    assert sum(link.state in (LinkState.ACCEPTED, LinkState.CONFIRMED) for link in after.links) <= 1
    # Writing it and looking again finds nothing new.
    assert plan(after, found, record, quiet=quiet) == PublicationPlan()
    # The baseline writes the same, and says nothing.
    loud = plan(known, found, record, quiet=False)
    assert replace(loud, events=()) == replace(result, events=())
    if quiet:
        assert result.events == ()
        return
    before_key = None if known.current is None else link_key(known.current)
    after_key = None if after.current is None else link_key(after.current)
    expected = []
    if before_key is None and after_key is not None:
        expected.append(EventType.PUBLISHED.value)
    elif before_key != after_key:
        expected.append(EventType.PUBLICATION_CHANGED.value)
    expected += [
        EventType.RETRACTED.value if n.type == "retraction" else EventType.CORRECTED.value
        for n in result.notices
    ]
    assert event_types(result) == expected
    assert all(after.current and n.target_doi == after.current.doi for n in result.notices)


def test_papers_come_due_together_in_few_slots_so_their_lookups_are_batched() -> None:
    keys = [f"2304.{n:05d}" for n in range(10_000)]
    dues = Counter(next_lookup(key, NOW, WEEK) for key in keys)
    assert len(dues) <= LOOKUP_SLOTS
    # Evenly: no slot holds more than twice its share of the papers.
    assert max(dues.values()) <= 2 * len(keys) / LOOKUP_SLOTS
    # A paper's slots stay a whole interval apart, in the same slot of each interval.
    for key in keys[:50]:
        following = next_lookup(key, NOW, WEEK)
        assert next_lookup(key, following, WEEK) - following == timedelta(seconds=WEEK)
