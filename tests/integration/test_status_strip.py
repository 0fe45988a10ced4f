"""The status strip: one line counted by the database (``SyncRuns.tally``), on both databases.

Authors and their cycles are written straight into the tables: the strip
reads only what is stored, and a few hundred authors are set up in a moment.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from lxml import html as lxml_html

from syncd.domain.authors import Author
from syncd.domain.model import SyncStanding
from syncd.domain.throttle import Cooldown
from syncd.domain.vocabulary import AuthorOrigin, RunStatus
from syncd.storage import Storage
from syncd.storage.schema import authors_table, sync_runs_table
from tests.conftest import BOTH_DATABASES, database_for
from tests.integration.conftest import Site, Syncd, serving
from tests.scenario import AUTHOR

NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: the counting is SQL (CASE, outer joins, aggregates) each runs itself."""
    return database_for(request)


@pytest.fixture
def storage(database_url: str) -> Iterator[Storage]:
    opened = Storage(database_url)
    try:
        yield opened
    finally:
        opened.close()


def follow(storage: Storage, *names: str) -> None:
    storage.authors.put([Author(name, AuthorOrigin.RUNTIME) for name in names])


def cycles(url: str, name: str, *statuses: RunStatus, error: str = "HTTP 503") -> None:
    """``name``'s cycles in the database at ``url``, oldest first, a minute apart."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            author_id = conn.scalar(
                sa.select(authors_table.c.id).where(authors_table.c.name == name)
            )
            for status in statuses:
                last = conn.scalar(sa.select(sa.func.count()).select_from(sync_runs_table))
                started = NOON + timedelta(minutes=int(last or 0))
                conn.execute(
                    sync_runs_table.insert().values(
                        author_id=author_id,
                        started_at=started,
                        finished_at=None if status is RunStatus.RUNNING else started,
                        status=status,
                        error=None if status in (RunStatus.OK, RunStatus.RUNNING) else error,
                    )
                )
    finally:
        engine.dispose()


def strip_line(site: Site, path: str = "/") -> tuple[str, Any]:
    """The strip's one line as words, and its element."""
    (strip,) = lxml_html.fromstring(site.get(path).text).xpath("//aside[@class='sync-status']")
    (line,) = strip.xpath("./p")
    return " ".join(line.text_content().split()), line


class TestTally:
    def test_each_standing_is_counted_as_an_author_reads_it(
        self, storage: Storage, database_url: str
    ) -> None:
        """Synced (last good), failing (a failure or abandon after the last good one, or no
        good one), never (nothing finished, running or not); a removed author not at all."""
        follow(storage, "Ok", "Recovered", "Failing", "Abandoned", "Running", "Never", "Gone")
        cycles(database_url, "Ok", RunStatus.OK)
        cycles(database_url, "Recovered", RunStatus.FAILED, RunStatus.OK)
        cycles(database_url, "Failing", RunStatus.OK, RunStatus.FAILED)
        cycles(database_url, "Abandoned", RunStatus.ABANDONED)
        cycles(database_url, "Running", RunStatus.RUNNING)
        cycles(database_url, "Gone", RunStatus.FAILED)
        storage.authors.remove("Gone")
        tally = storage.runs.tally()
        assert (tally.authors, tally.synced, tally.failing, tally.never) == (6, 2, 2, 2)
        assert (tally.running, tally.unknown_ids, tally.all_failed) == (1, 0, None)
        assert tally.last_synced == NOON + timedelta(minutes=3)  # Recovered's good cycle
        # The same standings list the authors, by name.
        for standing, names in (
            (SyncStanding.SYNCED, ["Ok", "Recovered"]),
            (SyncStanding.FAILING, ["Abandoned", "Failing"]),
            (SyncStanding.NEVER, ["Never", "Running"]),
        ):
            assert [s.name for s in storage.authors.page(None, 10, standing)] == names

    def test_a_group_counts_its_members_only(self, storage: Storage, database_url: str) -> None:
        follow(storage, "In ok", "In failing", "Out failing")
        storage.groups.put("Lab", "", AuthorOrigin.RUNTIME)
        storage.groups.add_members("Lab", ["In ok", "In failing"])
        cycles(database_url, "In ok", RunStatus.OK)
        cycles(database_url, "In failing", RunStatus.FAILED)
        cycles(database_url, "Out failing", RunStatus.FAILED)
        lab = storage.runs.tally("Lab")
        assert (lab.authors, lab.synced, lab.failing) == (2, 1, 1)
        assert storage.runs.tallies(["Lab", "None such"]) == {"Lab": lab}
        failing = storage.authors.page(None, 10, SyncStanding.FAILING, "Lab")
        assert [s.name for s in failing] == ["In failing"]

    def test_when_nothing_ever_succeeded_the_latest_failure_is_told(
        self, storage: Storage, database_url: str
    ) -> None:
        follow(storage, "First", "Second")
        cycles(database_url, "First", RunStatus.FAILED, error="HTTP 503")
        cycles(database_url, "Second", RunStatus.ABANDONED, error="killed")
        failed = storage.runs.tally().all_failed
        assert failed is not None and (failed.author, failed.error) == ("Second", "killed")
        cycles(database_url, "First", RunStatus.OK)
        assert storage.runs.tally().all_failed is None


class TestStripOnPages:
    @pytest.mark.parametrize("others", [2, 300])
    def test_few_or_many_authors_are_one_line_of_counts(self, syncd: Syncd, others: int) -> None:
        """The configured author synced, ``others`` never synced, one of them failing: the
        same line whatever their number, naming nobody; each count links its list."""
        storage = Storage(syncd.database_url)
        try:
            names = [f"Author {n:04d}" for n in range(others)]
            follow(storage, AUTHOR, *names)
            cycles(syncd.database_url, AUTHOR, RunStatus.OK)
            cycles(syncd.database_url, names[-1], RunStatus.FAILED)
        finally:
            storage.close()
        with serving(syncd) as site:
            line, element = strip_line(site)
            assert line == (
                f"{others + 1} authors: 1 synced (last 2026-12-01 12:00), 1 failing,"
                f" {others - 1} never synced; next sync not known here details"
            )
            assert element.xpath(".//a/@href") == [
                "/authors",
                "/authors?status=synced",
                "/authors?status=failing",
                "/authors?status=never",
                "/authors#sync",
            ]
            assert not any(name in line for name in (AUTHOR, *names))
            failing = lxml_html.fromstring(site.get("/authors?status=failing").text)
            assert failing.xpath(
                "//ul[contains(@class, 'authors')]//a[@class='title']//text()"
            ) == [names[-1]]
            assert site.get("/authors?status=sideways").status_code == 400

    def test_throttling_is_a_word_and_the_hosts_are_in_the_details(self, syncd: Syncd) -> None:
        later = datetime.now(UTC) + timedelta(minutes=5)
        storage = Storage(syncd.database_url)
        try:
            follow(storage, AUTHOR)
            storage.cooldowns.update("export.arxiv.org", lambda _: Cooldown(240.0, later, NOON, 3))
        finally:
            storage.close()
        with serving(syncd) as site:
            line, element = strip_line(site)
            assert "; arXiv is throttling us, next try " in line
            assert element.get("class") == "failing"
            details = lxml_html.fromstring(site.get("/authors").text).xpath("//section[@id='sync']")
            text = " ".join(details[0].text_content().split())
            assert (
                "arXiv export.arxiv.org arXiv is throttling us (3 throttled answers in a row)"
                in (text)
            )
