"""One version read by the API, the author's own feed and the harvest is one record.

The fake arXiv writes each format as arXiv does: the API in UTF-8 with an
alias category by its canonical name, the feed (``.atom``) and arXivRaw in
TeX as typed, times and categories as arXiv records them.  A paper met by a
sweep, a feed and a harvest must publish nothing and be stored as the API
reads it, on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from syncd.domain.record import Record
from syncd.storage.schema import papers_table, revisions_table
from tests.conftest import BOTH_DATABASES, database_for
from tests.fakearxiv import FakeArxiv, make_record
from tests.integration.conftest import Syncd
from tests.integration.harvests import harvesting
from tests.scenario import AUTHOR


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: a record read three ways must be stored as one, and PostgreSQL keeps
    records as JSONB (keys reordered, duplicates dropped) where SQLite keeps JSON text."""
    return database_for(request)


ORCID = "0000-0002-7970-7855"
DAY, NEXT_DAY = date(2026, 7, 1), date(2026, 7, 2)
# Found by the name query, and claimed in the feed.
QUERIED = "2607.00011"
# Claimed in the feed only: it lists the author as "Z. Jiang", which the name
# query does not match, so the feed's reading is the one stored first.
CLAIMED = "2607.00012"
COAUTHORS = ("The ATLAS Collaboration", "Zoë Ørsted", "José Núñez", "Robert W. Heath Jr.")


def _paper(arxiv_id: str, me: str) -> Record:
    return make_record(
        arxiv_id,
        title="$\N{GREEK SMALL LETTER ALPHA}$-Scaled Pipelines for Plötz's Clusters",
        abstract="We thank Søren Åberg for the $\\sqrt{s}$ estimate of Łódź's cluster.",
        authors=(COAUTHORS[0], me, *COAUTHORS[1:]),
        primary_category="cs.IT",
        categories=("cs.IT", "cs.DC"),
        comment="12 pages, $\N{GREEK SMALL LETTER BETA}$-tested in Zürich",
        journal_ref="Ann. Phys. (Leipzig) 535 (2026) 12-24, Ångström issue",
        doi="10.1000/xyz.123",
    )


@pytest.fixture
def fake() -> Iterator[FakeArxiv]:
    with FakeArxiv() as arxiv:
        arxiv.oai.today = DAY
        arxiv.publish(_paper(QUERIED, AUTHOR))
        arxiv.publish(_paper(CLAIMED, "Z. Jiang"))
        arxiv.claim(ORCID, QUERIED, CLAIMED)
        yield arxiv


@pytest.fixture
def site(
    fake: FakeArxiv, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Syncd:
    """syncd following ``AUTHOR`` by ORCID, reading the feed every cycle, and harvesting."""
    syncd = Syncd(
        arxiv=fake,
        database_url=database_url,
        workdir=tmp_path,
        capsys=capsys,
        seeds=(),
        extra=f'orcid = "{ORCID}"',
        arxiv_options="author_feed_interval = 0",
    )
    return harvesting(syncd)


def _stored(site: Syncd) -> tuple[dict[str, dict[str, Any]], dict[str, list[int | None]]]:
    """Each paper's record, and the versions of its revisions, by arXiv id."""
    engine = sa.create_engine(site.database_url)
    try:
        with engine.connect() as conn:
            papers = conn.execute(sa.select(papers_table.c.id, papers_table.c.arxiv_id)).all()
            records = {
                row.arxiv_id: row.record
                for row in conn.execute(sa.select(papers_table.c.arxiv_id, papers_table.c.record))
            }
            versions: dict[str, list[int | None]] = {}
            ids = {row.id: row.arxiv_id for row in papers}
            query = sa.select(revisions_table.c.paper_id, revisions_table.c.version).order_by(
                revisions_table.c.id
            )
            for row in conn.execute(query):
                versions.setdefault(ids[row.paper_id], []).append(row.version)
    finally:
        engine.dispose()
    return records, versions


def _events(site: Syncd) -> list[tuple[str, str | None, tuple[str, ...]]]:
    return [
        (e["type"], (e.get("paper") or {}).get("arxiv_id"), tuple(e["kinds"]))
        for e in site.json("events")
    ]


def test_api_feed_and_harvest_read_one_version_as_one_record(site: Syncd, fake: FakeArxiv) -> None:
    """A sync (name query and feed), a harvest and a sync reading the claimed paper by id:
    one revision per version, no paper.revised, and the records the API's readings."""
    first = site("sync")
    assert first.code == 0, first.err
    feeds = [r.path for r in fake.requests if r.path.startswith("/a/")]
    assert feeds == [f"/a/{ORCID}.atom"]
    records, versions = _stored(site)
    # The claimed paper was read from the feed alone: TeX as typed, +00:00, cs.IT math.IT.
    assert records[CLAIMED] == fake.current(CLAIMED).to_dict()
    assert records[QUERIED] == fake.current(QUERIED).to_dict()

    harvest = site("harvest", "--from", DAY.isoformat())
    assert harvest.code == 0, harvest.err
    assert "2 records" in harvest.out and "ok, 0 events" in harvest.out, harvest.out
    site.extra += f'\ninclude_ids = ["{CLAIMED}"]'
    again = site("sync")
    assert again.code == 0, again.err
    assert any(r.params.get("id_list") == CLAIMED for r in fake.requests)

    assert _events(site) == [("author.added", None, ())]
    records, versions = _stored(site)
    assert versions == {QUERIED: [1], CLAIMED: [1]}
    for arxiv_id in (QUERIED, CLAIMED):
        assert records[arxiv_id] == fake.current(arxiv_id).to_dict()


def test_a_new_version_harvested_is_announced_once(site: Syncd, fake: FakeArxiv) -> None:
    """v2 met first by the harvest, then by the name query and the feed: one event."""
    assert site("sync").code == 0
    fake.oai.today = NEXT_DAY
    fake.revise(QUERIED, title="Pipelines for Plötz's Clusters, Revisited")
    harvest = site("harvest", "--from", NEXT_DAY.isoformat())
    assert harvest.code == 0, harvest.err
    assert site("sync").code == 0
    assert _events(site)[1:] == [("paper.revised", QUERIED, ("version", "title"))]
    records, versions = _stored(site)
    assert versions[QUERIED] == [1, 2]
    assert records[QUERIED] == fake.current(QUERIED).to_dict()
