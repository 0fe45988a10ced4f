"""Baselines from the harvest: while harvesting, a new author costs no name query.

A library imports 100,000 authors; one harvest over the fake arXiv's
OAI-PMH endpoint baselines every one of them: the papers it lists are
credited by the same identity rules as a first sync's, quietly (one
``author.added`` per author with papers, no ``paper.added``), and the
authors it names no paper of are baselined without an event.  The fake
arXiv's name query is never asked.  The next harvest's page is news again.
Then the edges: an author added while a pass runs waits for the next pass,
and a sweep that finds an author's older papers after a harvest baselined
them does not flood.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path

import sqlalchemy as sa

from syncd.config import load_settings
from syncd.service.app import App
from syncd.service.harvest import HarvestResult, harvest
from syncd.storage.schema import (
    authors_table,
    events_table,
    paper_authors_table,
    papers_table,
)
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import FakeArxiv, make_record
from tests.integration.conftest import Syncd

DAY = date(2026, 7, 1)
NEXT_DAY = date(2026, 7, 2)
AUTHORS = 100_000
# Every this many-th imported author has papers on DAY.
EVERY = 1000
_GIVEN = (
    "Ada Alan Anna Boris Carla Dmitri Elena Farid Greta Hugo Ines Jonas Karin Lena Marco Nadia "
    "Oskar Paula Rafael Sofia Tomas Ulla Viktor Wanda Yusuf Zora Aino Bruno Cyril Dagny"
).split()
_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zi", "da", "fe", "go")


def surnames() -> Iterator[str]:
    """Surnames no real person here has, three or four syllables, each once."""
    for count in (3, 4):
        for parts in itertools.product(_SYLLABLES, repeat=count):
            yield "".join(parts).capitalize()


def imported_names(count: int) -> list[str]:
    """``count`` distinct written-out names: every given name with each surname."""
    pairs = itertools.product(surnames(), _GIVEN)
    return [f"{given} {surname}" for surname, given in itertools.islice(pairs, count)]


def write_csv(path: Path, names: Sequence[str]) -> Path:
    lines = ["name,orcid,arxiv_author_id,query", *(f"{name},,," for name in names)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def harvesting(syncd: Syncd) -> Syncd:
    """``syncd`` with no configured author, ``[harvest] enabled`` on the fake's OAI-PMH."""
    syncd.author_table = False
    syncd.sections += f'\n[harvest]\nenabled = true\nurl = "{syncd.arxiv.oai_url}"\n'
    return syncd


def name_queries(arxiv: FakeArxiv) -> list[str]:
    return [r.params["search_query"] for r in arxiv.requests if "search_query" in r.params]


def events(syncd: Syncd) -> list[tuple[str, str]]:
    """Every event's type and author, in order."""
    engine = sa.create_engine(syncd.database_url)
    e, a = events_table, authors_table
    try:
        with engine.connect() as conn:
            query = sa.select(e.c.type, a.c.name).join(a, a.c.id == e.c.author_id)
            return [(row.type, row.name) for row in conn.execute(query.order_by(e.c.seq))]
    finally:
        engine.dispose()


def holds(syncd: Syncd) -> dict[tuple[str, str], str]:
    """Each author's hold on each paper: (name, arXiv id) -> status."""
    engine = sa.create_engine(syncd.database_url)
    p, t, a = papers_table, paper_authors_table, authors_table
    try:
        with engine.connect() as conn:
            query = sa.select(a.c.name, p.c.arxiv_id, t.c.status).select_from(
                t.join(p, p.c.id == t.c.paper_id).join(a, a.c.id == t.c.author_id)
            )
            return {(row.name, row.arxiv_id): row.status for row in conn.execute(query)}
    finally:
        engine.dispose()


def unbaselined(syncd: Syncd) -> list[str]:
    engine = sa.create_engine(syncd.database_url)
    a = authors_table
    try:
        with engine.connect() as conn:
            query = sa.select(a.c.name).where(a.c.baseline_at.is_(None))
            return sorted(conn.scalars(query))
    finally:
        engine.dispose()


def publish_day(arxiv: FakeArxiv, names: Sequence[str]) -> dict[str, list[str]]:
    """DAY's papers of every ``EVERY``-th name, by name: one paper each, two for every
    third one (sharing a co-author); and for one of them a second paper with a stranger,
    which the co-author basis cannot tell from a namesake's."""
    arxiv.oai.today = DAY
    arxiv.oai.page_size = 100
    papers: dict[str, list[str]] = {}
    number = itertools.count(1)
    for index, name in enumerate(names[::EVERY]):
        coauthor = f"Charles Babbage{'' if index % 2 else ' Jr.'}"
        count = 2 if index % 3 == 0 else 1
        for _ in range(count):
            arxiv_id = f"2607.{next(number):05d}"
            arxiv.publish(make_record(arxiv_id, authors=(name, coauthor)))
            papers.setdefault(name, []).append(arxiv_id)
    return papers


@ON_BOTH_DATABASES
def test_a_hundred_thousand_authors_baselined_by_one_harvest(syncd: Syncd, tmp_path: Path) -> None:
    harvesting(syncd)
    names = imported_names(AUTHORS)
    imported = syncd("authors", "import", str(write_csv(tmp_path / "authors.csv", names)))
    assert imported.code == 0, imported.err
    assert f"{AUTHORS} added" in imported.out
    papers = publish_day(syncd.arxiv, names)
    syncd.arxiv.reset_log()

    outcome = syncd("harvest", "--from", DAY.isoformat())
    assert outcome.code == 0, outcome.err
    assert name_queries(syncd.arxiv) == []
    assert all(r.path == "/oai" for r in syncd.arxiv.requests)
    assert unbaselined(syncd) == []
    # Quiet: one author.added for each author with papers, nothing per paper.
    told = events(syncd)
    assert Counter(kind for kind, _ in told) == {"author.added": len(papers)}
    assert {name for _, name in told} == set(papers)
    # Credited by the identity rules: each author's papers are theirs.
    assert holds(syncd) == {
        (name, arxiv_id): "tracked" for name, ids in papers.items() for arxiv_id in ids
    }

    # The next harvest's page: a new paper of one of them is news.
    author = names[EVERY * 5]
    syncd.arxiv.oai.today = NEXT_DAY
    syncd.arxiv.publish(make_record("2607.90001", authors=(author, "Charles Babbage")))
    syncd.arxiv.reset_log()
    later = syncd("harvest")
    assert later.code == 0, later.err
    assert events(syncd)[len(told) :] == [("paper.added", author)]
    assert name_queries(syncd.arxiv) == []


def import_authors(syncd: Syncd, tmp_path: Path, *names: str) -> None:
    imported = syncd("authors", "import", str(write_csv(tmp_path / "authors.csv", names)))
    assert imported.code == 0, imported.err


def harvest_by_hand(syncd: Syncd, on_page: Callable[[HarvestResult], None]) -> HarvestResult:
    """One harvest from DAY in this process, ``on_page`` called after each page."""
    app = App.open(load_settings(syncd.config))
    try:
        with app.arxiv_client() as client:
            return harvest(app.storage, client, app.settings, since=DAY, on_page=on_page)
    finally:
        app.close()


def test_an_author_added_during_a_pass_waits_for_the_next(syncd: Syncd, tmp_path: Path) -> None:
    """The pass read the followed authors before the author came: it covers them not, and
    baselines them not; the next pass lists their papers again, and baselines them quietly."""
    harvesting(syncd)
    import_authors(syncd, tmp_path, "Ada Kalomi", "Boris Kalomi")
    arxiv = syncd.arxiv
    arxiv.oai.today = DAY
    arxiv.oai.page_size = 2
    late = "Carla Kalomi"
    for number, name in enumerate(("Ada Kalomi", "Marie Curie", late, late), start=1):
        arxiv.publish(make_record(f"2607.{number:05d}", authors=(name, "Charles Babbage")))

    def add_late(result: HarvestResult) -> None:
        if result.pages == 1:
            import_authors(syncd, tmp_path, late)

    assert harvest_by_hand(syncd, add_late).complete
    assert unbaselined(syncd) == [late]
    assert events(syncd) == [("author.added", "Ada Kalomi")]
    assert not any(name == late for name, _ in holds(syncd))

    outcome = syncd("harvest")  # from the day the pass began: DAY again
    assert outcome.code == 0, outcome.err
    assert unbaselined(syncd) == []
    assert events(syncd)[1:] == [("author.added", late)]
    assert {k: v for k, v in holds(syncd).items() if k[0] == late} == {
        (late, "2607.00003"): "tracked",
        (late, "2607.00004"): "tracked",
    }
    assert name_queries(arxiv) == []


@ON_BOTH_DATABASES
def test_a_sweep_after_a_harvest_baseline_does_not_flood(syncd: Syncd, tmp_path: Path) -> None:
    """An author the pass named no paper of is baselined without papers; the first name
    query then finds their older papers: history, recorded quietly; a paper the pass should
    have listed (dated on or after its from day) is announced."""
    harvesting(syncd)
    author = "Dagny Kalomi"
    import_authors(syncd, tmp_path, author)
    arxiv = syncd.arxiv
    arxiv.oai.today = date(2025, 1, 10)
    older = ["2501.00001", "2501.00002"]
    for number, arxiv_id in enumerate(older, start=1):
        record = make_record(arxiv_id, authors=(author, "Charles Babbage"))
        arxiv.publish(replace(record, published=f"2025-01-0{number}T10:00:00Z", updated=None))
    arxiv.oai.today = DAY
    arxiv.publish(make_record("2607.00001", authors=("Marie Curie", "Pierre Curie")))
    outcome = syncd("harvest", "--from", DAY.isoformat())
    assert outcome.code == 0, outcome.err
    assert unbaselined(syncd) == []
    assert events(syncd) == []  # nothing of theirs: nothing to announce

    missed = make_record("2607.00002", authors=(author, "Charles Babbage"))
    arxiv.publish(replace(missed, published="2026-07-01T15:00:00Z", updated=None))
    synced = syncd("sync")
    assert synced.code == 0, synced.err
    assert events(syncd) == [("paper.added", author)]
    tracked = {k[1] for k, status in holds(syncd).items() if status == "tracked"}
    assert tracked == {*older, "2607.00002"}


def test_an_author_with_a_feed_is_baselined_with_their_claims(syncd: Syncd, tmp_path: Path) -> None:
    """With an arXiv author id, the baseline reads the author's own feed once: a claimed
    paper the pass never listed is theirs too, quietly, and counted as claimed."""
    harvesting(syncd)
    author, feed = "Elena Kalomi", "kalomi_e_1"
    path = tmp_path / "authors.csv"
    path.write_text(f"name,orcid,arxiv_author_id,query\n{author},,{feed},\n", encoding="utf-8")
    assert syncd("authors", "import", str(path)).code == 0
    arxiv = syncd.arxiv
    arxiv.oai.today = date(2025, 1, 10)
    arxiv.publish(make_record("2501.00001", authors=("E. Kalomi", "Marie Curie")))
    arxiv.oai.today = DAY
    arxiv.publish(make_record("2607.00001", authors=(author, "Charles Babbage")))
    arxiv.claim(feed, "2501.00001")
    arxiv.reset_log()

    outcome = syncd("harvest", "--from", DAY.isoformat())
    assert outcome.code == 0, outcome.err
    assert name_queries(arxiv) == []
    assert [r.path for r in arxiv.requests if r.path.startswith("/a/")] == [f"/a/{feed}.atom"]
    assert holds(syncd) == {(author, "2501.00001"): "tracked", (author, "2607.00001"): "tracked"}
    (added,) = syncd.json("events")
    assert added["type"] == "author.added"
    assert (added["changes"]["author"]["papers"], added["changes"]["author"]["claimed"]) == (2, 1)
