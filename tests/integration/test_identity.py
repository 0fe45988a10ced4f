"""Authors identified by arXiv, and first syncs that announce the author, not a flood.

Against the fake arXiv's ``/a/<id>.atom`` author feeds, a real webhook
receiver.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from syncd import metrics
from syncd.domain.record import Record
from tests import fakearxiv as fa
from tests.conftest import BOTH_DATABASES, database_for
from tests.fakearxiv import AUTHOR_FEED_PREFIX, FakeArxiv, make_record
from tests.helpers import WEBHOOK_SECRET, webhook_config
from tests.integration.conftest import Syncd, serving
from tests.receiver import Receiver
from tests.scenario import AUTHOR


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: an author's identifiers and the state of a feed arXiv refuses (issue 30,
    item 9) are rows each dialect stores."""
    return database_for(request)


ORCID = "0000-0002-7970-7855"
# The author's circle, and a namesake's in another field.
CIRCLE = ("Ada Lovelace", "Charles Babbage", "Mary Somerville")
NAMESAKE_CIRCLE = ("Emmy Noether", "Sophie Germain")


def _paper(number: int, *coauthors: str, category: str = "cs.LG") -> Record:
    return make_record(
        f"2601.{number:05d}",
        authors=(AUTHOR, *coauthors),
        primary_category=category,
        categories=(category,),
    )


@pytest.fixture
def fake() -> Iterator[FakeArxiv]:
    with FakeArxiv() as arxiv:
        yield arxiv


@pytest.fixture
def site(
    fake: FakeArxiv, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Syncd:
    """syncd following ``AUTHOR`` by name alone (no seeds) against ``fake``."""
    return Syncd(
        arxiv=fake,
        database_url=database_url,
        workdir=tmp_path,
        capsys=capsys,
        seeds=(),
    )


def _hook(site: Syncd, receiver: Receiver) -> None:
    site.sections = webhook_config(
        receiver.url,
        name="lab",
        schedule="[0.05, 0.05, 0.05]",
        endpoint=f'secret = "{WEBHOOK_SECRET}"',
    )


def _papers(site: Syncd) -> dict[str, dict[str, Any]]:
    """Each paper's status, claim and candidate reason, by arXiv id, as the database holds them."""
    engine = sa.create_engine(site.database_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text(
                    "SELECT p.arxiv_id, t.status, t.claimed, t.candidate_reason"
                    " FROM papers p JOIN paper_authors t ON t.paper_id = p.id"
                )
            ).all()
    finally:
        engine.dispose()
    return {
        r.arxiv_id: {"status": r.status, "claimed": bool(r.claimed), "reason": r.candidate_reason}
        for r in rows
    }


def _last_run(site: Syncd) -> tuple[str, str | None]:
    engine = sa.create_engine(site.database_url)
    try:
        with engine.connect() as conn:
            row = conn.execute(
                sa.text("SELECT status, error FROM sync_runs ORDER BY id DESC LIMIT 1")
            ).one()
    finally:
        engine.dispose()
    return row.status, row.error


def _feed_requests(fake: FakeArxiv) -> int:
    return sum(1 for r in fake.requests if r.path.startswith(AUTHOR_FEED_PREFIX))


def _feed_count(result: str) -> float:
    return metrics.REGISTRY.get_sample_value("syncd_author_feeds_total", {"result": result}) or 0.0


def test_an_orcid_author_is_tracked_from_the_first_sync_and_announced_once(
    site: Syncd, fake: FakeArxiv, receiver: Receiver
) -> None:
    """The claimed papers are tracked at once, a paper sharing their co-authors too, the
    namesake's stay candidates; one author.added reaches the receiver, no paper.added."""
    mine = [_paper(1, CIRCLE[0]), _paper(2, CIRCLE[1]), _paper(3, *CIRCLE[1:])]
    unclaimed = _paper(4, CIRCLE[2])
    namesake = [
        _paper(11, *NAMESAKE_CIRCLE, category="math.AG"),
        _paper(12, NAMESAKE_CIRCLE[0], category="math.AG"),
    ]
    for record in [*mine, unclaimed, *namesake]:
        fake.publish(record)
    fake.claim(ORCID, *(r.arxiv_id or "" for r in mine))
    site.extra = f'orcid = "{ORCID}"'
    _hook(site, receiver)

    outcome = site("sync")
    assert outcome.code == 0, outcome.err
    papers = _papers(site)
    assert {i: p["status"] for i, p in papers.items()} == {
        "2601.00001": "tracked",
        "2601.00002": "tracked",
        "2601.00003": "tracked",
        "2601.00004": "tracked",
        "2601.00011": "candidate",
        "2601.00012": "candidate",
    }
    assert sorted(i for i, p in papers.items() if p["claimed"]) == [
        "2601.00001",
        "2601.00002",
        "2601.00003",
    ]
    assert papers["2601.00011"]["reason"] == "shares no co-author or category with the known papers"
    assert papers["2601.00001"]["reason"] is None

    (event,) = site.json("events")
    assert event["type"] == "author.added"
    assert event["paper"] is None
    assert event["changes"]["author"] == {
        "name": AUTHOR,
        "orcid": ORCID,
        "arxiv_author_id": None,
        "unknown_id": None,
        "papers": 4,
        "claimed": 3,
        "candidates": 2,
        "candidate_ids": ["2601.00011", "2601.00012"],
        "needs_review": False,
    }
    (delivered,) = receiver.delivered
    assert delivered.verified
    assert delivered.json["type"] == "author.added"
    assert delivered.json["data"]["changes"]["author"]["papers"] == 4

    # From the second sync on, events are as before; the feed waits for its interval.
    fake.publish(_paper(5, CIRCLE[0]))
    assert site("sync").code == 0
    assert [e["type"] for e in site.json("events")] == ["author.added", "paper.added"]
    assert _feed_requests(fake) == 1


def test_a_name_only_author_gets_the_largest_coauthor_group_as_basis(
    site: Syncd, fake: FakeArxiv, receiver: Receiver
) -> None:
    """One big co-author group is the basis; two strangers' papers are candidates with a
    reason; the first sync announces the author alone."""
    group = [
        _paper(1, CIRCLE[0]),
        _paper(2, *CIRCLE[:2]),
        _paper(3, CIRCLE[1]),
        _paper(4, *CIRCLE[1:]),
        _paper(5, CIRCLE[2]),
    ]
    strangers = [_paper(21, "Alan Turing"), _paper(22, "Emmy Noether", category="math.AG")]
    for record in [*group, *strangers]:
        fake.publish(record)
    _hook(site, receiver)

    assert site("sync").code == 0
    papers = _papers(site)
    assert sorted(i for i, p in papers.items() if p["status"] == "tracked") == [
        r.arxiv_id for r in group
    ]
    for stranger in ("2601.00021", "2601.00022"):
        assert papers[stranger]["status"] == "candidate"
        assert papers[stranger]["reason"] == "shares no co-author with the 5 papers of the basis"
    (event,) = site.json("events")
    assert event["type"] == "author.added"
    assert event["changes"]["author"]["papers"] == 5
    assert [r.json["type"] for r in receiver.delivered] == ["author.added"]
    assert _feed_requests(fake) == 0
    # The read surface shows it as the CLI does, and the feed by its line.
    with serving(site) as web:
        assert web.get("/api/v1/events").json() == [event]
        feed = web.get("/feeds/events.atom").text
        line = "Now following Zhida Jiang: 5 papers (2 held for review)"
        assert line in feed
        assert (
            "/authors/Zhida%20Jiang" in feed
        )  # the author's page, not the paper it is filed under
        assert "held for review: 2601.00021, 2601.00022" in feed
        assert line in web.get("/events").text


def test_author_added_is_about_the_author_alone(
    site: Syncd, fake: FakeArxiv, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An author.added carries no paper's record: null in the JSON, the webhook and the API,
    no paper in `syncd events`; the paper it is filed under says why it has no event."""
    for record in (_paper(1, CIRCLE[0]), _paper(2, CIRCLE[0]), _paper(3, "Alan Turing")):
        fake.publish(record)
    _hook(site, receiver)
    assert site("sync").code == 0

    (event,) = site.json("events")
    assert (event["type"], event["paper"], event["record"]) == ("author.added", None, None)
    (delivered,) = receiver.delivered
    assert delivered.json["data"]["record"] is None
    monkeypatch.setenv("COLUMNS", "80")
    header, row = site("events").out.splitlines()
    assert header.split() == ["SEQ", "TYPE", "PAPER", "KINDS", "TITLE"]
    assert row.split()[:4] == [str(event["seq"]), "author.added", "-", "-"]
    assert row.endswith("  Now following Zhida Jiang: 2 papers (1 held fo…")
    with serving(site) as web:
        assert web.get("/api/v1/events").json()[0]["record"] is None
        tracked, candidate = web.get("/papers/2601.00001").text, web.get("/papers/2601.00003").text
    assert "recorded by its author&#39;s first sync" in tracked
    assert "a candidate is announced once" in candidate
    assert "seeding" not in tracked + candidate


def test_no_clear_group_leaves_the_author_needing_review(site: Syncd, fake: FakeArxiv) -> None:
    """Two groups of two: nothing is taken, every paper is held with a "needs review" reason."""
    for record in [
        _paper(1, CIRCLE[0]),
        _paper(2, CIRCLE[0]),
        _paper(3, NAMESAKE_CIRCLE[0]),
        _paper(4, NAMESAKE_CIRCLE[0]),
    ]:
        fake.publish(record)
    assert site("sync").code == 0
    papers = _papers(site)
    assert {p["status"] for p in papers.values()} == {"candidate"}
    assert all(p["reason"].startswith("needs review: ") for p in papers.values())
    (event,) = site.json("events")
    assert event["changes"]["author"]["needs_review"] is True


def _feed(params: Mapping[str, str]) -> bool:
    """Whether a request is for an author feed (the fake marks them so)."""
    return "author_feed" in params


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(fa.status(503, times=10, when=_feed), id="503"),
        pytest.param(fa.timeout(1.0, times=10, when=_feed), id="timeout"),
        pytest.param(fa.empty_result(when=_feed), id="emptied"),
    ],
)
def test_an_author_feed_that_fails_fails_the_cycle_and_removes_nothing(
    site: Syncd, fake: FakeArxiv, fault: fa.Fault
) -> None:
    """A feed answering 503, timing out or suddenly empty: a failed cycle for the author, in
    the run status and the metrics; every paper stays as it was."""
    for record in (_paper(1, CIRCLE[0]), _paper(2, CIRCLE[1])):
        fake.publish(record)
    fake.claim(ORCID, "2601.00001", "2601.00002")
    site.extra = f'orcid = "{ORCID}"'
    site.arxiv_options += "\nauthor_feed_interval = 0"
    assert site("sync").code == 0
    before = _papers(site)
    events = site.json("events")

    fake.inject(fault)
    failed = "emptied" if fault.kind == "empty_result" else "failed"
    count = _feed_count(failed)
    outcome = site("sync")
    assert outcome.code == 1
    status, error = _last_run(site)
    assert status == "failed"
    assert error is not None and "feed of" in error
    assert _feed_count(failed) == count + 1
    assert _papers(site) == before
    assert site.json("events") == events


UNLINKED_ORCID = "0000-0002-1825-0097"  # a valid iD no arXiv account is linked to
ADVICE = (
    f"arXiv knows no author {UNLINKED_ORCID}: link the ORCID iD to an arXiv account, or remove it"
)


def test_an_orcid_arxiv_does_not_know_is_the_authors_state_and_the_name_query_syncs_them(
    site: Syncd, fake: FakeArxiv
) -> None:
    """arXiv's 400 for an iD it knows no author by: the cycle succeeds by the name query (exit 0,
    a warning each sync), the state shows in authors list, the API, the author's page and is
    counted by the status strip; the feed is asked again a feed interval later, and used once
    it answers."""
    mine = [_paper(1, CIRCLE[0]), _paper(2, CIRCLE[0], CIRCLE[1]), _paper(3, CIRCLE[1])]
    for record in mine:
        fake.publish(record)
    site.extra = f'orcid = "{UNLINKED_ORCID}"'
    unknown = _feed_count("unknown")
    first = site("sync")
    assert first.code == 0, first.err
    assert f"{AUTHOR}: warning: {ADVICE}" in first.err
    assert _last_run(site) == ("ok", None)
    assert _feed_count("unknown") == unknown + 1
    # Synced by name meanwhile: the co-author basis took the author's papers.
    assert {p["status"] for p in _papers(site).values()} == {"tracked"}
    (added,) = site.json("events")
    assert added["changes"]["author"]["unknown_id"] == UNLINKED_ORCID
    (listed,) = site.json("authors", "list")
    assert listed["unknown_id"] == UNLINKED_ORCID and listed["unknown_id_since"] is not None
    table = site("authors", "list")
    assert ADVICE in " ".join(table.out.split())
    with serving(site) as web:
        assert web.get(f"/api/v1/authors/{AUTHOR}").json()["unknown_id"] == UNLINKED_ORCID
        assert ADVICE in web.get(f"/authors/{AUTHOR}").text
        # The status strip of every page counts it (one line: the advice is on their page).
        strip = web.get("/").text
        assert "1 unknown arXiv id" in strip and ADVICE not in strip

    # Not asked again within the feed interval; the state and the warning stay.
    requests = _feed_requests(fake)
    second = site("sync")
    assert second.code == 0, second.err
    assert f"{AUTHOR}: warning: {ADVICE}" in second.err
    assert _feed_requests(fake) == requests
    assert site.json("authors", "list")[0]["unknown_id"] == UNLINKED_ORCID

    # The iD linked to an account: read at the next due cycle, its claims taken.
    fake.claim(UNLINKED_ORCID, "2601.00001", "2601.00003")
    site.arxiv_options += "\nauthor_feed_interval = 0"
    third = site("sync")
    assert third.code == 0, third.err
    assert "warning" not in third.err
    assert _feed_requests(fake) == requests + 1
    claimed = {i for i, p in _papers(site).items() if p["claimed"]}
    assert claimed == {"2601.00001", "2601.00003"}
    assert site.json("authors", "list")[0]["unknown_id"] is None
    assert [e["type"] for e in site.json("events")] == ["author.added"]


def test_an_unknown_id_changed_in_the_config_is_read_at_the_next_cycle(
    site: Syncd, fake: FakeArxiv
) -> None:
    """Correcting the iD forgets what arXiv said of the old one, and reads the new one's feed
    at once rather than a feed interval later."""
    fake.publish(_paper(1, CIRCLE[0]))
    site.extra = f'orcid = "{UNLINKED_ORCID}"'
    assert site("sync").code == 0
    assert site.json("authors", "list")[0]["unknown_id"] == UNLINKED_ORCID
    fake.claim(ORCID, "2601.00001")
    site.extra = f'orcid = "{ORCID}"'
    requests = _feed_requests(fake)
    outcome = site("sync")
    assert outcome.code == 0, outcome.err
    assert _feed_requests(fake) == requests + 1
    assert site.json("authors", "list")[0]["unknown_id"] is None
    assert _papers(site)["2601.00001"]["claimed"] is True


def test_a_seeded_author_is_baselined_by_the_seeds(syncd: Syncd) -> None:
    """Seed links are a seeded author's first story: the seed import dates the baseline, and
    the first sync publishes paper.linked as it always did, no author.added."""
    assert syncd("seed").code == 0
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.connect() as conn:
            baseline = conn.scalar(sa.text("SELECT baseline_at FROM authors"))
    finally:
        engine.dispose()
    assert baseline is not None
    assert syncd("sync").code == 0
    assert {e["type"] for e in syncd.json("events")} == {"paper.linked"}


def test_claims_the_name_query_misses_are_kept(site: Syncd, fake: FakeArxiv) -> None:
    """Papers signed with another form of the name are the author's by their claim: tracked,
    and neither a glitch nor absent when the name query (which misses them) runs alone."""
    other_form = make_record(
        "2601.00031", authors=("Z. Jiang", CIRCLE[0]), primary_category="cs.LG"
    )
    fake.publish(other_form)
    fake.claim(ORCID, "2601.00031")
    site.extra = f'orcid = "{ORCID}"'
    for _ in range(4):  # more than removal_after cycles, the feed read only in the first
        outcome = site("sync")
        assert outcome.code == 0, outcome.err
    assert _papers(site)["2601.00031"] == {"status": "tracked", "claimed": True, "reason": None}
    assert _feed_requests(fake) == 1
    assert [e["type"] for e in site.json("events")] == ["author.added"]
