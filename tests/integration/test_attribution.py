"""John Smith and Jane Smith followed together: each gets their own papers, nobody guesses.

Against a fake arXiv whose ``au:`` is as loose as arXiv's own (``au:"John
Smith"`` finds every "J Smith"), by a batched name query and by an OAI-PMH
harvest (issue 29).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from syncd.domain.record import Record
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import FakeArxiv, make_record
from tests.integration.conftest import Syncd, serving, sync_ok
from tests.integration.harvests import harvesting

JOHN, JANE = "John Smith", "Jane Smith"
DAY = date(2026, 7, 1)
ASTRO = "astro-ph.GA"
AMBIGUOUS = "ambiguous: J. Smith could be"


def _paper(arxiv_id: str, *authors: str, category: str = "cs.LG") -> Record:
    return make_record(arxiv_id, authors=authors, primary_category=category, categories=[category])


@pytest.fixture
def fake() -> Iterator[FakeArxiv]:
    with FakeArxiv(initialized_names=True) as arxiv:
        yield arxiv


@pytest.fixture
def site(
    fake: FakeArxiv, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Syncd:
    """syncd following John and Jane Smith by name alone, in one config: one batched query."""
    syncd = Syncd(arxiv=fake, database_url=database_url, workdir=tmp_path, capsys=capsys, seeds=())
    syncd.extra = f'[[authors]]\nname = "{JOHN}"\n[[authors]]\nname = "{JANE}"\n'
    return syncd


def _before(fake: FakeArxiv, janes_field: str) -> None:
    """What arXiv holds at the first sync: each one's circle, namesakes, a "J. Smith" paper."""
    for number in range(1, 5):
        fake.publish(_paper(f"2601.0000{number}", JOHN, "Ada Lovelace", "Charles Babbage"))
    # John signs as "J. Smith" once, with his co-author: his, and no voucher for others.
    fake.publish(_paper("2601.00005", "J. Smith", "Ada Lovelace"))
    for number in range(11, 14):
        fake.publish(
            _paper(
                f"2601.000{number}", JANE, "Emmy Noether", "Sophie Germain", category=janes_field
            )
        )
    fake.publish(_paper("2601.00021", "Joe Smith", "Vera Rubin", category=ASTRO))
    fake.publish(_paper("2601.00022", "J. Q. Smith", "Vera Rubin", category=ASTRO))
    fake.publish(_paper("2601.00031", "J. Smith", "Grace Hopper"))


def _day(fake: FakeArxiv, janes_field: str) -> None:
    """A day of new papers after both baselines."""
    fake.oai.today = DAY
    fake.publish(_paper("2607.00001", JOHN, "Ada Lovelace"))
    fake.publish(_paper("2607.00002", JANE, "Dave Doe", category=janes_field))
    fake.publish(_paper("2607.00003", "J. Smith", "Charles Babbage"))  # John's co-author
    fake.publish(_paper("2607.00004", "J. Smith", "Grace Hopper"))  # nobody's circle
    fake.publish(_paper("2607.00005", "Joe Smith", "Vera Rubin", category=ASTRO))
    fake.publish(_paper("2607.00006", "J. Q. Smith", "Vera Rubin", category=ASTRO))


def _statuses(site: Syncd, author: str) -> dict[str, str]:
    return {p["arxiv_id"]: p["status"] for p in site.json("papers", "--author", author)}


def _announced(site: Syncd) -> dict[str, list[tuple[str, str | None]]]:
    """Each author's events but review notices: type and arXiv id, oldest first."""
    told: dict[str, list[tuple[str, str | None]]] = {}
    for event in site.json("events"):
        if event["type"] == "author.review_needed":
            continue
        paper = event["paper"]
        told.setdefault(event["author"], []).append(
            (event["type"], paper["arxiv_id"] if paper else None)
        )
    return told


def _announced_for_review(site: Syncd, author: str) -> list[str]:
    """The papers the author's author.review_needed events named, in order."""
    return [
        arxiv_id
        for event in site.json("events")
        if event["type"] == "author.review_needed" and event["author"] == author
        for arxiv_id in event["changes"]["author"]["candidate_ids"]
    ]


def _reasons(site: Syncd, author: str) -> dict[str, str]:
    """The author's candidates and their reasons, as the API shows them (and their page)."""
    with serving(site) as web:
        shown: dict[str, Any] = web.get(f"/api/v1/authors/{author}").json()
        page = web.get(f"/authors/{author}").text
    reasons = {c["arxiv_id"]: c["reason"] for c in shown["candidate_papers"]}
    assert all(reason in page for reason in reasons.values())
    return reasons


@pytest.mark.parametrize("janes_field", ["math.AG", "cs.LG"], ids=["other-field", "same-field"])
@pytest.mark.parametrize("mode", ["sync", "harvest"])
@ON_BOTH_DATABASES  # issue 29/30's acceptance: on both databases
def test_john_and_jane_smith_each_get_exactly_their_own(
    site: Syncd, fake: FakeArxiv, mode: str, janes_field: str
) -> None:
    """Each author's baseline takes their own papers and no one else's; later, each new paper
    is announced for its author alone, the "J. Smith" papers only with John's co-author;
    the rest are candidates whose reason names the rival, by name query and by harvest."""
    if mode == "harvest":
        harvesting(site)
    _before(fake, janes_field)
    sync_ok(site)
    mine = {f"2601.0000{n}": "tracked" for n in range(1, 6)}
    janes = {f"2601.000{n}": "tracked" for n in range(11, 14)}
    assert _statuses(site, JOHN) == mine | {"2601.00031": "candidate"}
    # John's "J. Smith" paper shares nothing with Jane's: held by her, naming him.
    assert _statuses(site, JANE) == janes | {"2601.00031": "candidate", "2601.00005": "candidate"}
    assert _announced(site) == {JOHN: [("author.added", None)], JANE: [("author.added", None)]}

    _day(fake, janes_field)
    if mode == "harvest":
        outcome = site("harvest", "--from", DAY.isoformat())
        assert outcome.code == 0, outcome.err
    else:
        sync_ok(site)
    # Only a harvest lists "J. Q. Smith": arXiv's search answers no "J Smith" query with it.
    astro = {"2607.00006": "candidate"} if mode == "harvest" else {}
    held = {"2601.00031": "candidate", "2607.00004": "candidate"} | astro
    assert _statuses(site, JOHN) == mine | held | {
        "2607.00001": "tracked",
        "2607.00003": "tracked",
    }
    assert _statuses(site, JANE) == janes | held | {
        "2601.00005": "candidate",
        "2607.00002": "tracked",
        "2607.00003": "candidate",
    }
    announced = _announced(site)
    assert sorted(announced[JOHN][1:]) == [
        ("paper.added", "2607.00001"),
        ("paper.added", "2607.00003"),
    ]
    assert announced[JANE][1:] == [("paper.added", "2607.00002")]
    # Each paper held that day is announced for review once, to each author holding it.
    assert sorted(_announced_for_review(site, JOHN)) == sorted(set(held) - {"2601.00031"})
    assert sorted(_announced_for_review(site, JANE)) == sorted(
        {"2607.00003", "2607.00004"} | set(astro)
    )

    johns, janes_reasons = _reasons(site, JOHN), _reasons(site, JANE)
    assert set(johns) == set(held)
    assert johns["2601.00031"].startswith(f"{AMBIGUOUS} John Smith or Jane Smith; ")
    assert johns["2607.00004"] == (
        f"{AMBIGUOUS} John Smith or Jane Smith;"
        " no claim, seed or co-author of the known papers says which"
    )
    assert janes_reasons["2607.00003"].startswith(f"{AMBIGUOUS} Jane Smith or John Smith; ")
    review = site("authors", "review", JANE)
    assert review.code == 0, review.err
    assert "2607.00003" in review.out and "could be Jane Smith or John Smith" in review.out
