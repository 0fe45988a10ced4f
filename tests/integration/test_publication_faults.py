"""Publication lookups when things go wrong or run twice (issue 33), on both databases: a
source that is down (a visible failure, nothing invented, nothing lost), a daemon
restarted and two replicas (nothing announced twice), and the contact sent politely."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ON_BOTH_DATABASES
from tests.fakecrossref import FakeCrossref
from tests.fakeopenalex import FakeOpenAlex
from tests.helpers import eventually
from tests.integration.conftest import Syncd, sync_ok
from tests.integration.daemons import Daemon
from tests.integration.publications import (
    COAUTHORS,
    OPENALEX_KEY,
    arrive,
    check,
    check_ok,
    configure,
    delivered_once,
    delivery_recorded,
    links,
    new_paper,
    publication_events,
    publications_table,
    published_year,
    the_publication,
)
from tests.receiver import Receiver
from tests.scenario import AUTHOR

pytestmark = pytest.mark.usefixtures("loopback_only")

DOWN = "2607.00801"
DOWN_DOI = "10.1038/s42256-026-00801-0"
# The failed link requests in syncd's metrics (prometheus_client adds ``_total``).
FAILED_LINKS = re.compile(
    r'^syncd_publication_requests(?:_total)?\{(?=[^}]*source="crossref")(?=[^}]*kind="link")'
    r'(?=[^}]*result="failed")[^}]*\} ([0-9.e+]+)$',
    re.MULTILINE,
)


def _failing(metrics: str) -> float:
    """The ``failing`` series of the ``syncd_publications`` gauge."""
    found = re.search(r'^syncd_publications\{state="failing"\} ([0-9.e+]+)$', metrics, re.M)
    return float(found.group(1)) if found else 0.0


def _linked_by_crossref(syncd: Syncd, crossref: FakeCrossref, arxiv_id: str, doi: str) -> None:
    """Crossref's relation names the paper's arXiv DOI from its publication ``doi``."""
    crossref.publish(
        doi,
        title=f"Published version of {arxiv_id}",
        authors=(AUTHOR, *COAUTHORS),
        year=published_year(syncd, arxiv_id),
        preprint=arxiv_id,
        link="doi",
    )


def _down_then_back(syncd: Syncd, crossref: FakeCrossref) -> None:
    """Crossref heals; the named paper is looked up (due or not): announced once, and
    once only through the lookups after."""
    crossref.fail(None)
    check_ok(syncd, DOWN)
    check_ok(syncd, f"https://arxiv.org/abs/{DOWN}v1")  # the id as people paste it
    check_ok(syncd)
    assert the_publication(syncd, DOWN)["doi"] == DOWN_DOI
    assert [link["doi"] for link in links(syncd)[DOWN]] == [DOWN_DOI]


@ON_BOTH_DATABASES
def test_a_source_down_fails_visibly_invents_nothing_and_loses_nothing(
    syncd: Syncd, crossref: FakeCrossref, receiver: Receiver
) -> None:
    """Crossref answering 503, then refusing connections: ``syncd publications check`` exits
    1 saying Crossref failed, writes no link and no event; back up, the paper is announced
    exactly once."""
    configure(syncd, crossref, receiver)
    arrive(syncd, {DOWN: "Engines behind an outage"})
    _linked_by_crossref(syncd, crossref, DOWN, DOWN_DOI)

    crossref.fail(503)
    failed = check(syncd)
    assert failed.code == 1
    assert f"FAILED: {DOWN}: crossref link lookup failed" in failed.err
    assert any(r.status == 503 for r in crossref.requests_of("link"))
    crossref.fail(None)
    crossref.stop()
    refused = check(syncd, DOWN)
    crossref.start()
    assert refused.code == 1
    assert f"FAILED: {DOWN}: crossref link lookup failed" in refused.err
    assert publication_events(syncd) == []
    assert links(syncd) == {}

    _down_then_back(syncd, crossref)
    delivered_once(receiver, syncd, DOWN)


@ON_BOTH_DATABASES
def test_a_daemon_counts_a_failed_source_in_its_metrics(
    syncd: Syncd, crossref: FakeCrossref, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """``syncd run`` looks the new paper up at start, Crossref down: /metrics counts the failed
    link request, nothing is announced; back up, ``check`` announces it once."""
    syncd.sections = publications_table(crossref)
    arrive(syncd, {DOWN: "Engines behind a daemon's outage"})
    _linked_by_crossref(syncd, crossref, DOWN, DOWN_DOI)
    crossref.fail(503)

    daemon = Daemon(syncd, receiver, interval=60, tables=publications_table(crossref))
    daemons.append(daemon)

    def failed_links() -> float:
        found = FAILED_LINKS.findall(daemon.get("/metrics").text)
        return sum(float(value) for value in found)

    eventually(lambda: failed_links() >= 1, 30, "a failed Crossref link request in /metrics")
    # The store's gauge says how many papers wait on a failed lookup, read from the database:
    # every tracked paper, as one failed link request was for all of them.
    tracked = [p for p in syncd.json("papers") if p["status"] == "tracked" and p["arxiv_id"]]
    eventually(
        lambda: _failing(daemon.get("/metrics").text) == len(tracked),
        30,
        "the failing lookups in the syncd_publications gauge",
    )
    daemon.stop()
    assert publication_events(syncd) == []
    assert links(syncd) == {}

    _down_then_back(syncd, crossref)
    delivered_once(receiver, syncd, DOWN)


def _published_delivered(receiver: Receiver, arxiv_id: str) -> bool:
    return any(
        r.verified
        and r.json is not None
        and r.json.get("type") == "paper.published"
        and r.json["data"]["paper"]["arxiv_id"] == arxiv_id
        for r in receiver.delivered
    )


@ON_BOTH_DATABASES
def test_a_restarted_daemon_announces_each_publication_once(
    syncd: Syncd, crossref: FakeCrossref, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """A daemon announces a publication and is killed; a paper arrives; a new daemon looks
    it up at start: each publication is announced and delivered once."""
    first, second = "2607.00901", "2607.00902"
    syncd.sections = publications_table(crossref)
    arrive(syncd, {first: "Engines before a restart"})
    _linked_by_crossref(syncd, crossref, first, "10.1038/s42256-026-00901-0")

    daemon = Daemon(syncd, receiver, interval=60, tables=publications_table(crossref))
    daemons.append(daemon)
    eventually(lambda: _published_delivered(receiver, first), 30, f"{first} published")
    # Killed once its delivery is recorded: one killed between a receiver's answer and
    # that record sends it again after a restart, by design (at least once, same id).
    eventually(lambda: delivery_recorded(syncd, first), 30, f"{first}'s delivery recorded")
    daemon.kill()

    new_paper(syncd, second, "Engines after a restart")
    sync_ok(syncd)
    _linked_by_crossref(syncd, crossref, second, "10.1038/s42256-026-00902-0")
    daemon = Daemon(syncd, receiver, interval=60, tables=publications_table(crossref))
    daemons.append(daemon)
    eventually(lambda: _published_delivered(receiver, second), 30, f"{second} published")
    daemon.stop()

    for arxiv_id in (first, second):
        the_publication(syncd, arxiv_id)
        delivered_once(receiver, syncd, arxiv_id)


def _looked_up(out: str) -> int:
    """How many papers a ``syncd publications check`` says it looked up (and wrote)."""
    found = re.search(r"publications: (\d+) papers? looked up", out)
    assert found is not None, out
    return int(found.group(1))


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_two_replicas_checking_at_once_announce_each_publication_once(
    syncd: Syncd, crossref: FakeCrossref, receiver: Receiver
) -> None:
    """Two ``syncd publications check`` processes on one PostgreSQL store, started at once:
    each paper's lookup is written by one of them (the other finds its turn taken), each
    publication announced and delivered once."""
    papers = {f"2607.0100{n}": f"Engines of replica lookups, part {n}" for n in range(1, 7)}
    configure(syncd, crossref, receiver)
    # Paced per host, shared through the database: the two runs' requests interleave.
    syncd.sections = syncd.sections.replace("crossref_interval = 0", "crossref_interval = 0.1")
    arrive(syncd, papers)
    for n, arxiv_id in enumerate(papers, 1):
        _linked_by_crossref(syncd, crossref, arxiv_id, f"10.1038/s42256-026-0100{n}-0")
    due = len([p for p in syncd.json("papers") if p["status"] == "tracked" and p["arxiv_id"]])

    command = [sys.executable, "-m", "syncd", "--config", str(syncd.config)]
    runs = [
        subprocess.Popen(
            [*command, "publications", "check"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]

    assert [run.returncode for run in runs] == [0, 0], outputs
    looked_up = [_looked_up(out) for out, _ in outputs]
    assert sum(looked_up) == due, outputs
    for arxiv_id in papers:
        the_publication(syncd, arxiv_id)
        delivered_once(receiver, syncd, arxiv_id)


@ON_BOTH_DATABASES
def test_lookups_name_the_contact_politely(
    syncd: Syncd, crossref: FakeCrossref, openalex: FakeOpenAlex, receiver: Receiver
) -> None:
    """With ``[arxiv] contact``, Crossref and OpenAlex see it in the User-Agent and Crossref
    as its ``mailto`` parameter; every request stays on loopback, at the fakes."""
    contact = "library@example.org"
    syncd.arxiv_options = f'contact = "{contact}"'
    configure(syncd, crossref, receiver, openalex, key=OPENALEX_KEY)
    arrive(syncd, {"2607.01101": "Engines that ask politely"})

    check_ok(syncd)

    assert crossref.requests and openalex.requests
    for request in [*crossref.requests, *openalex.requests]:
        assert request.user_agent is not None and f"mailto:{contact}" in request.user_agent
    assert {request.param("mailto") for request in crossref.requests} == {contact}
