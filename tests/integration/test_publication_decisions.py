"""Publications a person decides, and what befalls a published version (issue 33), on both
databases: a near miss held for review, confirmed by the CLI or the admin API; a rejected
link that never comes back; a correction and a retraction announced once."""

from __future__ import annotations

from typing import Any

import pytest

from syncd.domain.vocabulary import EventType
from tests.conftest import ON_BOTH_DATABASES
from tests.fakecrossref import FakeCrossref
from tests.integration.conftest import Syncd, serving, sync_ok
from tests.integration.publications import (
    ADMIN_TOKEN,
    COAUTHORS,
    arrive,
    check_ok,
    configure,
    delivered_once,
    links,
    publication_events,
    published_year,
    the_publication,
)
from tests.receiver import Receiver
from tests.scenario import AUTHOR

pytestmark = [ON_BOTH_DATABASES, pytest.mark.usefixtures("loopback_only")]

NEAR_MISS = "2607.00601"
NEAR_MISS_TITLE = "Rollout and training co-design for agents"
NEAR_MISS_DOI = "10.1109/tpds.2026.3300001"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def _near_miss(syncd: Syncd, crossref: FakeCrossref) -> dict[str, Any]:
    """A paper whose only match is its title with one author of four in common: scored
    1 x (0.6 + 0.4 x 2/6) = 0.733, from review_score (0.6) to below accept_score (0.9).
    Looked up: held for review, nothing announced; the review entry."""
    arrive(syncd, {NEAR_MISS: NEAR_MISS_TITLE})
    crossref.publish(
        NEAR_MISS_DOI,
        title=NEAR_MISS_TITLE,
        authors=(AUTHOR, "Someone Else"),
        year=published_year(syncd, NEAR_MISS),
        venue="IEEE Transactions on Parallel and Distributed Systems",
    )
    check_ok(syncd)
    assert publication_events(syncd, NEAR_MISS) == []
    assert [link["state"] for link in links(syncd)[NEAR_MISS]] == ["candidate"]
    (item,) = syncd.json("publications", "review")
    assert (item["arxiv_id"], item["publication"]["doi"]) == (NEAR_MISS, NEAR_MISS_DOI)
    assert item["publication"]["match"] == "bibliographic"
    assert 0.6 <= item["publication"]["score"] < 0.9
    assert item["publication"]["evidence"]["author_share"] < 0.5
    table = syncd("publications", "review")
    assert table.code == 0
    assert NEAR_MISS in table.out and NEAR_MISS_DOI in table.out
    return dict(item)


def _announced_as_confirmed(syncd: Syncd, receiver: Receiver, score: float) -> None:
    publication = the_publication(syncd, NEAR_MISS)
    assert (publication["doi"], publication["how"], publication["state"]) == (
        NEAR_MISS_DOI,
        "person",
        "confirmed",
    )
    assert publication["score"] == score
    assert syncd.json("publications", "review") == []
    delivered_once(receiver, syncd, NEAR_MISS)


def test_a_near_miss_is_held_for_review_then_confirmed_by_the_cli(
    syncd: Syncd, crossref: FakeCrossref, receiver: Receiver
) -> None:
    """Held, listed by ``syncd publications review``; ``confirm`` announces it
    (``paper.published``, delivered), and a later lookup announces nothing more."""
    configure(syncd, crossref, receiver)
    item = _near_miss(syncd, crossref)

    # The paper as people paste it, versioned; the DOI as a resolver's address.
    outcome = syncd(
        "publications", "confirm", f"arXiv:{NEAR_MISS}v1", f"https://doi.org/{NEAR_MISS_DOI}"
    )
    assert outcome.code == 0, outcome.err

    _announced_as_confirmed(syncd, receiver, item["publication"]["score"])
    check_ok(syncd, NEAR_MISS)
    assert len(publication_events(syncd, NEAR_MISS)) == 1


def test_a_near_miss_is_listed_and_confirmed_by_the_admin_api(
    syncd: Syncd, crossref: FakeCrossref, receiver: Receiver
) -> None:
    """The admin API lists the candidate and confirms it; the next ``syncd`` command that
    delivers sends the ``paper.published``, once."""
    configure(syncd, crossref, receiver, admin=True)
    item = _near_miss(syncd, crossref)

    with serving(syncd) as site:
        assert site.get("/api/v1/publications/review").status_code == 401
        listed = site.get("/api/v1/publications/review", headers=ADMIN)
        assert listed.status_code == 200
        assert listed.json() == [item]
        path = f"/api/v1/publications/{NEAR_MISS}/confirm"
        assert site.http.post(path, json={"doi": NEAR_MISS_DOI}).status_code == 401
        answer = site.http.post(path, json={"doi": NEAR_MISS_DOI}, headers=ADMIN)
        assert answer.status_code == 200, answer.text
        (event,) = publication_events(syncd, NEAR_MISS)
        assert answer.json()["events"] == [event["id"]]
        assert answer.json()["decision"] == "confirmed"
        again = site.http.post(path, json={"doi": NEAR_MISS_DOI}, headers=ADMIN)
        assert again.status_code == 409

    sync_ok(syncd)  # drains the outbox
    _announced_as_confirmed(syncd, receiver, item["publication"]["score"])


def test_a_rejected_link_never_comes_back(
    syncd: Syncd, crossref: FakeCrossref, receiver: Receiver
) -> None:
    """Rejected, the candidate stays rejected through later lookups even when Crossref then
    offers the same publication as a certain link (a relation naming the preprint)."""
    configure(syncd, crossref, receiver)
    _near_miss(syncd, crossref)

    outcome = syncd("publications", "reject", NEAR_MISS, NEAR_MISS_DOI)
    assert outcome.code == 0, outcome.err
    assert syncd.json("publications", "review") == []
    crossref.publish(
        NEAR_MISS_DOI,
        title=NEAR_MISS_TITLE,
        authors=(AUTHOR, *COAUTHORS),
        year=published_year(syncd, NEAR_MISS),
        venue="IEEE Transactions on Parallel and Distributed Systems",
        preprint=NEAR_MISS,
        link="doi",
    )
    linked_before = len(crossref.requests_of("link"))
    check_ok(syncd, NEAR_MISS)
    check_ok(syncd, NEAR_MISS)

    assert len(crossref.requests_of("link")) == linked_before + 2  # it was offered, twice
    assert publication_events(syncd, NEAR_MISS) == []
    assert [link["state"] for link in links(syncd)[NEAR_MISS]] == ["rejected"]
    assert syncd.json("publications", "review") == []
    assert not [r for r in receiver.delivered if NEAR_MISS_DOI in r.body.decode()]


def test_a_correction_and_a_retraction_are_announced_once(
    syncd: Syncd, crossref: FakeCrossref, receiver: Receiver
) -> None:
    """A published paper's version is corrected, then retracted (Retraction Watch): one
    ``paper.corrected`` and one ``paper.retracted`` naming each notice's DOI, type and date,
    in date order; the next lookups, finding the same notices, announce nothing."""
    arxiv_id, doi = "2607.00701", "10.1038/s41586-026-01234-5"
    configure(syncd, crossref, receiver)
    arrive(syncd, {arxiv_id: "Engines that were later retracted"})
    crossref.publish(
        doi,
        title="Engines that were later retracted",
        authors=(AUTHOR, *COAUTHORS),
        year=published_year(syncd, arxiv_id),
        venue="Nature",
        preprint=arxiv_id,
        link="arxiv",
    )
    check_ok(syncd)
    the_publication(syncd, arxiv_id)

    crossref.add_notice(doi, "10.1038/s41586-026-09999-1", type="retraction",
                        date=(2026, 11, 2), source="retraction-watch")  # fmt: skip
    crossref.add_notice(doi, "10.1038/s41586-026-05555-2", type="correction", date=(2026, 9, 14))
    check_ok(syncd, arxiv_id)
    check_ok(syncd, arxiv_id)
    check_ok(syncd)

    published, corrected, retracted = publication_events(syncd, arxiv_id)
    assert [published["type"], corrected["type"], retracted["type"]] == [
        EventType.PUBLISHED,
        EventType.CORRECTED,
        EventType.RETRACTED,
    ]
    notices = [corrected["changes"]["notice"], retracted["changes"]["notice"]]
    assert [(n["doi"], n["type"], n["date"]) for n in notices] == [
        ("10.1038/s41586-026-05555-2", "correction", "2026-09-14"),
        ("10.1038/s41586-026-09999-1", "retraction", "2026-11-02"),
    ]
    assert retracted["changes"]["notice"]["source"] == "retraction-watch"
    for event in (corrected, retracted):
        assert event["changes"]["publication"]["doi"] == doi
        assert event["changes"]["notice"]["publication_doi"] == doi
    delivered_once(receiver, syncd, arxiv_id)
