"""What one author's cycle reads is capped (issue 34): their name query and their own
feed, each up to ``[arxiv] max_results_per_author``, read as they arrive.

A read cut there is shown as "truncated at N" (``syncd authors list``, the author
page, ``/api/v1/authors/<name>``) and counted
(``syncd_author_results_truncated_total``); the papers past the cap are unread,
never absent: no removal, no absence, whatever the number of cycles.  On both
databases: the cut is stored with the cycle (migration 0026).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from syncd import metrics
from syncd.storage.schema import paper_authors_table
from tests.conftest import BOTH_DATABASES, database_for
from tests.fakearxiv import FakeArxiv, make_record
from tests.integration.ada import ADA, GOOD_ORCID, authors
from tests.integration.conftest import Syncd, serving, sync_ok
from tests.largefeed import LargeFeedServer

MARY = "Mary Somerville"
COAUTHOR = "Charles Babbage"


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: the cut is stored with the cycle's papers."""
    return database_for(request)


@dataclass
class _Capped(Syncd):
    """The harness with a cap, and optionally the feeds elsewhere and a longer timeout."""

    cap: int = 10_000
    feeds_url: str | None = None
    attempt_timeout: float | None = None

    @property
    def config(self) -> Path:
        path = super().config
        text = path.read_text(encoding="utf-8")
        text = text.replace("[arxiv]\n", f"[arxiv]\nmax_results_per_author = {self.cap}\n", 1)
        if self.feeds_url is not None:
            old = f'author_feed_url = "{self.arxiv.author_feed_url}"'
            text = text.replace(old, f'author_feed_url = "{self.feeds_url}"')
        if self.attempt_timeout is not None:
            text = text.replace("timeout = 0.5\n", f"timeout = {self.attempt_timeout}\n", 1)
        path.write_text(text, encoding="utf-8")
        return path


def _capped(syncd: Syncd, **options: Any) -> _Capped:
    """``syncd`` with only the authors added at run time, and ``options``."""
    state = {f.name: getattr(syncd, f.name) for f in fields(Syncd)}
    return _Capped(**(state | {"author_table": False}), **options)


def _truncated(name: str, source: str) -> float:
    labels = {"source": source}
    return metrics.REGISTRY.get_sample_value(f"syncd_author_results_{name}_total", labels) or 0.0


def _absences(syncd: Syncd) -> int:
    """Absences counted against any paper of any author (``paper_authors.absent_syncs``)."""
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.connect() as conn:
            return conn.scalar(sa.select(sa.func.sum(paper_authors_table.c.absent_syncs))) or 0
    finally:
        engine.dispose()


def _publish(arxiv: FakeArxiv, name: str, numbers: range) -> None:
    """Papers of ``name`` with one co-author, numbered ``2501.000NN``, newest last."""
    for number in numbers:
        arxiv.publish(make_record(f"2501.{number:05d}", authors=(name, COAUTHOR)))


def test_a_50000_entry_author_feed_is_read_up_to_the_cap(syncd: Syncd) -> None:
    """Ada's own feed lists 50,000 papers: one request, read as it arrives, the newest 300
    kept and claimed; "own feed truncated at 300 of 50,000" on every surface."""
    # Not her name as the name query spells it: only her feed finds these papers.
    record = make_record("2501.00001", authors=("A. Lovelace", COAUTHOR))
    before = _truncated("truncated", "feed")
    with LargeFeedServer(record, 50_000) as feeds:
        capped = _capped(syncd, cap=300, feeds_url=feeds.author_feed_url, attempt_timeout=60.0)
        assert capped("authors", "add", ADA, "--orcid", GOOD_ORCID).code == 0
        sync_ok(capped)
    assert feeds.requests == 1
    assert _truncated("truncated", "feed") == before + 1
    ada = authors(capped)[ADA]
    assert ada["truncated"] == [{"source": "feed", "at": 300, "of": 50_000}]
    assert (ada["tracked"], ada["claimed"]) == (300, 300)
    papers = capped.papers()
    assert {f"2501.{n:05d}" for n in range(49_700, 50_000)} <= set(papers)
    assert "2501.49699" not in papers
    phrase = "own feed truncated at 300 of 50,000 results"
    assert phrase in capped("authors", "list").out
    with serving(capped) as site:
        assert phrase in site.get(f"/authors/{ADA}").text
        answer = site.get(f"/api/v1/authors/{ADA}").json()
    assert answer["truncated"] == [{"source": "feed", "at": 300, "of": 50_000}]


def test_a_name_query_past_the_cap_is_cut_and_nothing_vanishes(
    syncd: Syncd, arxiv: FakeArxiv
) -> None:
    """Ada has 40 tracked papers; 30 newer ones make 70, past a cap of 25: each cycle reads
    the newest 25 only, and however many cycles pass, none of the 45 unread papers is
    counted absent, removed or withdrawn.  Mary, batched with her, is read whole."""
    _publish(arxiv, ADA, range(1, 41))
    _publish(arxiv, MARY, range(101, 104))
    capped = _capped(syncd, cap=100)
    for name in (ADA, MARY):
        assert capped("authors", "add", name).code == 0
    sync_ok(capped)
    tracked = {key for key, paper in capped.papers().items() if paper["status"] == "tracked"}
    assert len(tracked) == 43
    _publish(arxiv, ADA, range(41, 71))
    capped.cap = 25
    before = _truncated("truncated", "query")
    for _ in range(5):  # past removal_after (3): an absence would have removed them by now
        sync_ok(capped)
    assert _truncated("truncated", "query") == before + 5
    events = capped.json("events")
    assert [e for e in events if e["type"] == "paper.removed"] == []
    assert [e for e in events if "withdrawn" in e["kinds"]] == []
    papers = capped.papers()
    assert all(papers[key]["status"] == "tracked" for key in tracked)
    assert _absences(capped) == 0
    # The newest 25 were read (and announced); the 5 between them and the old ones not yet.
    assert {f"2501.{n:05d}" for n in range(46, 71)} <= set(papers)
    assert not {f"2501.{n:05d}" for n in range(41, 46)} & set(papers)
    listed = authors(capped)
    assert listed[ADA]["truncated"] == [{"source": "query", "at": 25, "of": 70}]
    assert listed[MARY]["truncated"] == []
    assert "name query truncated at 25 of 70 results" in capped("authors", "list").out
    capped.cap = 100  # read whole again: the status clears, the rest is found
    sync_ok(capped)
    assert authors(capped)[ADA]["truncated"] == []
    assert {f"2501.{n:05d}" for n in range(41, 46)} <= set(capped.papers())
