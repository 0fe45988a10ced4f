"""The API's paper object carries what the paper's page shows (issue 32, item 9).

Zhida Jiang (with an ORCID iD that claims two papers) and Ada Lovelace are
followed; they share two papers, one of which the authors withdraw.  Their
co-author Charles Babbage was followed at run time and is no longer: his
rows stay, and he holds nothing as a followed author.  Both
databases: who holds a paper and the versions' dates are read in batches,
by queries each dialect runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from syncd.domain.record import Record
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import WITHDRAWN_BY_AUTHORS, FakeArxiv, make_record
from tests.integration.conftest import Syncd, serving, sync_ok
from tests.scenario import AUTHOR

ADA, CHARLES = "Ada Lovelace", "Charles Babbage"
ORCID = "0000-0002-7970-7855"
SHARED, WITHDRAWN, ZHIDAS = "2601.00001", "2601.00002", "2601.00003"
REASON = "an error in the main theorem"
ABSTRACT = "We study a problem; the abstract is shown."


def _paper(arxiv_id: str, *authors: str) -> Record:
    return make_record(
        arxiv_id,
        authors=authors,
        abstract=ABSTRACT,
        primary_category="cs.LG",
        categories=("math.CO", "cs.LG", "stat.ML"),
    )


@pytest.fixture
def fake() -> Iterator[FakeArxiv]:
    with FakeArxiv() as arxiv:
        yield arxiv


@pytest.fixture
def site(
    fake: FakeArxiv, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Syncd:
    """Two followed authors sharing papers; after a first sync, one of them is withdrawn."""
    fake.publish(_paper(SHARED, AUTHOR, ADA, CHARLES))
    fake.publish(_paper(WITHDRAWN, AUTHOR, ADA, CHARLES))
    fake.publish(_paper(ZHIDAS, AUTHOR, CHARLES))
    fake.claim(ORCID, SHARED, ZHIDAS)
    syncd = Syncd(arxiv=fake, database_url=database_url, workdir=tmp_path, capsys=capsys, seeds=())
    syncd.extra = f'orcid = "{ORCID}"\n[[authors]]\nname = "{ADA}"\n'
    assert syncd("authors", "add", CHARLES).code == 0
    sync_ok(syncd)
    fake.withdraw(WITHDRAWN, REASON)
    sync_ok(syncd)
    assert syncd("authors", "remove", CHARLES).code == 0
    return syncd


def _rows(papers: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The papers by arXiv id: each paper once, however many followed authors hold it."""
    rows = {p["arxiv_id"]: p for p in papers}
    assert len(rows) == len(papers)
    return rows


@ON_BOTH_DATABASES
def test_a_shared_paper_is_one_row_naming_every_followed_author(site: Syncd) -> None:
    """A paper of two followed authors is one row naming both; a paper of one names one; an
    author no longer followed is named on none; claimed when a holder's own feed lists it,
    and in an author's list when theirs does."""
    with serving(site) as served:
        rows = _rows(served.get("/api/v1/papers").json())
        adas = _rows(served.get("/api/v1/papers", params={"author": ADA}).json())
    assert set(rows) == {SHARED, WITHDRAWN, ZHIDAS}
    both = sorted([AUTHOR, ADA])
    assert {key: row["followed_authors"] for key, row in rows.items()} == {
        SHARED: both,
        WITHDRAWN: both,
        ZHIDAS: [AUTHOR],
    }
    assert rows[SHARED]["authors"] == [AUTHOR, ADA, CHARLES]
    assert {key for key, row in rows.items() if row["claimed"]} == {SHARED, ZHIDAS}
    assert set(adas) == {SHARED, WITHDRAWN}
    assert {row["author"] for row in adas.values()} == {ADA}
    assert not any(row["claimed"] for row in adas.values())  # Zhida's claim, not Ada's


@ON_BOTH_DATABASES
def test_a_withdrawn_paper_says_so_with_its_notice_and_versions(site: Syncd) -> None:
    """withdrawn, by whom and arXiv's notice; every version with arXiv's date from the history;
    the abstract and the categories, the primary one first."""
    with serving(site) as served:
        paper = served.get(f"/api/v1/papers/{WITHDRAWN}").json()
        history = served.get(f"/api/v1/papers/{WITHDRAWN}/history").json()
        shared = served.get(f"/api/v1/papers/{SHARED}").json()
    assert (paper["withdrawn"], paper["withdrawn_by"]) == (True, "author")
    assert paper["withdrawal_notice"] == WITHDRAWN_BY_AUTHORS
    assert paper["abstract"] == WITHDRAWN_BY_AUTHORS  # arXiv's notice replaces the abstract
    assert paper["version"] == 2
    dates = {r["version"]: r["version_date"] for r in history}
    assert paper["versions"] == [{"version": v, "date": dates[v]} for v in (1, 2)]
    assert all(dates.values())
    assert (shared["withdrawn"], shared["withdrawn_by"], shared["withdrawal_notice"]) == (
        False,
        None,
        None,
    )
    assert shared["abstract"] == ABSTRACT
    assert shared["categories"] == ["cs.LG", "math.CO", "stat.ML"]
    assert shared["versions"] == [{"version": 1, "date": shared["versions"][0]["date"]}]
    assert shared["versions"][0]["date"] is not None


@ON_BOTH_DATABASES
def test_the_api_is_the_cli_and_one_paper_is_its_row(site: Syncd) -> None:
    """/api/v1/papers holds `syncd papers --json`'s rows (latest change first, where the CLI
    goes by author and key); /api/v1/papers/{id} is one row of it."""
    with serving(site) as served:
        listed = served.get("/api/v1/papers").json()
        mine = served.get("/api/v1/papers", params={"author": ADA}).json()
        one = served.get(f"/api/v1/papers/{ZHIDAS}").json()
    assert _rows(listed) == _rows(site.json("papers"))
    assert _rows(mine) == _rows(site.json("papers", "--author", ADA))
    assert one == _rows(listed)[ZHIDAS]
