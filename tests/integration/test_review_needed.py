"""Papers held for review are news (issue 30, item 10): ``author.review_needed``, everywhere.

An author followed by name whose first sync found nothing: their first paper
written out in full is theirs (``paper.added``), and one naming them only by
initials is held and announced as waiting for review, once, to a signed
webhook, a Slack digest, ``syncd events``, the Atom feed and the events page.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from syncd.domain.record import Record
from tests.chatreceiver import SlackReceiver
from tests.conftest import BOTH_DATABASES, database_for
from tests.fakearxiv import FakeArxiv, make_record
from tests.helpers import WEBHOOK_SECRET, webhook_config
from tests.integration.conftest import Syncd, serving
from tests.receiver import Receiver
from tests.scenario import AUTHOR


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: held candidates and their notice (issue 30, item 10) are written in the
    cycle's transaction on each."""
    return database_for(request)


PUBLIC_URL = "https://syncd.example.org"
REVIEW_LINK = f"{PUBLIC_URL}/authors/Zhida%20Jiang#candidates"


def _paper(number: int, name: str, coauthor: str, category: str = "cs.DC") -> Record:
    return make_record(
        f"2611.{number:05d}",
        title=f"Paper {number} with {coauthor}",
        authors=(name, coauthor),
        primary_category=category,
        categories=(category,),
    )


@pytest.fixture
def fake() -> Iterator[FakeArxiv]:
    """An arXiv whose author search is as loose as arXiv's: "Z. Jiang" for au:"Zhida Jiang"."""
    with FakeArxiv(initialized_names=True) as arxiv:
        yield arxiv


@pytest.fixture
def site(
    fake: FakeArxiv, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Syncd:
    """syncd following ``AUTHOR`` by name alone (no seeds)."""
    return Syncd(arxiv=fake, database_url=database_url, workdir=tmp_path, capsys=capsys, seeds=())


def _endpoints(site: Syncd, receiver: Receiver, slack: SlackReceiver) -> None:
    """A signed webhook and a Slack endpoint; links under ``PUBLIC_URL``."""
    site.sections = webhook_config(
        receiver.url,
        name="lab",
        schedule="[0.05, 0.05, 0.05]",
        endpoint=f'secret = "{WEBHOOK_SECRET}"',
    )
    site.sections += f"""
[[webhooks]]
name = "chat"
url = "{slack.url}"
format = "slack"

[http]
public_url = "{PUBLIC_URL}/"
"""


def _sync(site: Syncd) -> None:
    outcome = site("sync")
    assert outcome.code == 0, outcome.err


def _reviews(site: Syncd) -> list[dict[str, object]]:
    return [e for e in site.json("events") if e["type"] == "author.review_needed"]


def test_a_held_paper_of_an_author_with_none_yet_is_announced_for_review(
    site: Syncd, fake: FakeArxiv, receiver: Receiver, slack: SlackReceiver
) -> None:
    """Nothing at first (no event); then a paper naming them in full is theirs and one naming
    them by initials is held: one review_needed reaches every face, and is not repeated."""
    _endpoints(site, receiver, slack)
    _sync(site)
    assert site.json("events") == []

    fake.publish(_paper(1, AUTHOR, "Ada Lovelace"))
    fake.publish(_paper(2, "Z. Jiang", "Emmy Noether", category="math.AG"))
    _sync(site)
    types = [(e["type"], (e["paper"] or {}).get("arxiv_id")) for e in site.json("events")]
    assert types == [("paper.added", "2611.00001"), ("author.review_needed", None)]
    (review,) = _reviews(site)
    assert review["record"] is None
    assert review["changes"] == {
        "author": {
            "name": AUTHOR,
            "candidates": 1,
            "candidate_ids": ["2611.00002"],
            "waiting": 1,
        }
    }

    # A signed Standard Webhooks delivery, as the events list has it.
    delivered = [d.json for d in receiver.delivered if d.json["type"] == "author.review_needed"]
    assert [d["data"] for d in delivered] == [review]
    assert all(d.verified for d in receiver.delivered)

    # The Slack digest of the cycle: both changes, the review line linking to the candidates.
    (digest,) = slack.received[-1:]
    text = json.dumps(digest.json, ensure_ascii=False)
    assert "Review needed for Zhida Jiang: 1 new paper held" in text
    assert REVIEW_LINK in text

    table = site("events")
    (line,) = [row for row in table.out.splitlines() if "author.review_needed" in row]
    assert "Review needed for Zhida Jiang: 1 new paper held" in line
    (listed,) = site.json("authors", "list")
    assert (listed["tracked"], listed["candidates"]) == (1, 1)

    with serving(site) as web:
        feed = web.get("/feeds/events.atom").text
        assert "<title>Review needed for Zhida Jiang: 1 new paper held</title>" in feed
        assert REVIEW_LINK in feed
        assert "Review needed for Zhida Jiang: 1 new paper held" in web.get("/events").text
        page = web.get("/authors/Zhida%20Jiang").text
        assert '<h2 id="candidates">Candidates</h2>' in page
        listing = web.get("/authors").text
        assert '<a href="/authors/Zhida%20Jiang#candidates">1 candidate to review</a>' in listing

    # Seen again, still held: not news.
    _sync(site)
    assert len(_reviews(site)) == 1
    # Another held: a new notice, counting both that wait.
    fake.publish(_paper(3, "Z. Jiang", "Alan Turing", category="math.LO"))
    _sync(site)
    latest = _reviews(site)[-1]["changes"]["author"]  # type: ignore[index]
    assert (latest["candidate_ids"], latest["waiting"]) == (["2611.00003"], 2)
