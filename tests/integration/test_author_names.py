"""Names are data (issue 29): hostile names never reach a query, and one name without regard
to case is one author, in the config, the CLI, a CSV import, the API and the database."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import sqlalchemy as sa

from syncd.domain.authors import Author
from syncd.domain.planner import seed_writes
from syncd.domain.vocabulary import AuthorOrigin
from syncd.errors import ConflictError
from syncd.sources.seeds import load_seeds
from syncd.storage import Storage
from syncd.storage.migrate import upgrade
from syncd.storage.schema import authors_table
from tests.conftest import BOTH_DATABASES, database_for
from tests.fakearxiv import FakeArxiv, make_record
from tests.integration.ada import ADA, ADA_PAPERS, authors, publish_ada, write_csv
from tests.integration.conftest import SEEDS, Syncd, serving, sync_ok
from tests.scenario import AUTHOR


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: one name without regard to case is one author through the database's
    unique name key (each dialect's ON CONFLICT), and hostile names must reach neither
    dialect's SQL."""
    return database_for(request)


HOSTILE = 'Zed Zulu" OR au:"Eve Evans'
ADMIN_TOKEN = "operator-token-of-the-names-tests"
# Accents, an apostrophe, a slash and spaces to collapse: what a path or an argument must carry.
SPELLED = "  Seán   O'Brien/Ní Dhuibhir "
NORMAL = "Seán O'Brien/Ní Dhuibhir"


def publish_eve(arxiv: FakeArxiv) -> None:
    """A paper only the hostile name's second half finds: no batched author's name matches it."""
    arxiv.publish(make_record("2602.20001", authors=("Eve Evans", "Frank Foster")))


def search_queries(arxiv: FakeArxiv) -> list[str]:
    return [r.params["search_query"] for r in arxiv.requests if "search_query" in r.params]


def author_rows(database_url: str) -> list[tuple[str, str | None, bool]]:
    """(name, name_key, followed) of every author row, by id."""
    engine = sa.create_engine(database_url)
    a = authors_table
    try:
        with engine.connect() as conn:
            query = sa.select(a.c.name, a.c.name_key, a.c.removed_at).order_by(a.c.id)
            return [(r.name, r.name_key, r.removed_at is None) for r in conn.execute(query)]
    finally:
        engine.dispose()


class TestHostileNames:
    def test_a_hostile_name_is_refused_and_the_batch_syncs(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """`authors add` of a name that would close its quote is exit 2 with the reason; the
        authors batched with it sync, and no request carries the name."""
        publish_ada(arxiv)
        publish_eve(arxiv)
        refused = syncd("authors", "add", HOSTILE)
        assert refused.code == 2
        assert "a double quote would end the phrase" in refused.err
        assert syncd("authors", "add", ADA).code == 0
        sync_ok(syncd)
        assert set(authors(syncd)) == {AUTHOR, ADA}
        assert authors(syncd)[ADA]["candidates"] == len(ADA_PAPERS)
        assert set(search_queries(arxiv)) == {f'au:"{AUTHOR}" OR au:"{ADA}"'}

    @pytest.mark.empty_database
    def test_a_hostile_name_stored_before_stops_and_the_others_sync(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """A hostile run-time author stored by an earlier syncd is no longer followed after the
        upgrade (its row kept), and the authors that shared its batch sync again."""
        publish_ada(arxiv)
        publish_eve(arxiv)
        engine = sa.create_engine(syncd.database_url)
        try:
            upgrade(engine, "0015")
            rows = sa.table(
                "authors",
                sa.column("name"),
                sa.column("created_at", sa.DateTime(timezone=True)),
                sa.column("origin"),
            )
            with engine.begin() as conn:
                conn.execute(
                    rows.insert(),
                    [
                        {"name": n, "created_at": datetime.now(UTC), "origin": "runtime"}
                        for n in (ADA, HOSTILE)
                    ],
                )
        finally:
            engine.dispose()
        sync_ok(syncd)
        assert not any("Eve Evans" in q for q in search_queries(arxiv))
        listed = authors(syncd)
        assert listed[ADA]["candidates"] == len(ADA_PAPERS)
        assert listed[AUTHOR]["last_success"] is not None
        assert listed[HOSTILE]["followed"] is False


class TestDuplicates:
    @pytest.mark.empty_database
    def test_config_with_two_spellings_exits_2_naming_both(self, syncd: Syncd) -> None:
        """Two [[authors]] tables whose names differ only in case and spaces: exit 2, both
        named, nothing written."""
        syncd.sections = '[[authors]]\nname = "ZHIDA  JIANG"\n'
        outcome = syncd("sync")
        assert outcome.code == 2
        assert f"authors[1] 'ZHIDA JIANG' is authors[0] '{AUTHOR}'" in outcome.err
        engine = sa.create_engine(syncd.database_url)
        try:
            assert "authors" not in sa.inspect(engine).get_table_names()  # stopped before it
        finally:
            engine.dispose()

    def test_cli_add_refuses_another_spelling_and_keeps_idempotence(self, syncd: Syncd) -> None:
        """Adding an author again is unchanged; another spelling of a followed or configured
        name is exit 2 naming the author it is."""
        assert syncd("authors", "add", ADA).code == 0
        again = syncd("authors", "add", ADA)
        assert (again.code, again.out.strip()) == (0, f"{ADA}: unchanged")
        other = syncd("authors", "add", "ada  LOVELACE")
        assert other.code == 2
        assert f"'ada LOVELACE' is the author '{ADA}'" in other.err
        assert f"use '{ADA}'" in other.err
        configured = syncd("authors", "add", AUTHOR.upper())
        assert configured.code == 2
        assert f"author '{AUTHOR}' ('{AUTHOR.upper()}' is the same name) is configured" in (
            configured.err
        )
        assert sorted(authors(syncd)) == sorted([AUTHOR, ADA])

    def test_cli_add_of_a_removed_author_in_another_spelling_names_it(self, syncd: Syncd) -> None:
        """A removed author is still the name's author: another spelling is refused."""
        assert syncd("authors", "add", ADA).code == 0
        assert syncd("authors", "remove", ADA).code == 0
        outcome = syncd("authors", "add", ADA.lower())
        assert outcome.code == 2
        assert f"is the author '{ADA}'" in outcome.err
        assert syncd("authors", "add", ADA).code == 0
        assert authors(syncd)[ADA]["followed"] is True

    def test_csv_import_refuses_duplicates_in_the_file_and_in_the_database(
        self, syncd: Syncd, tmp_path: Path
    ) -> None:
        """All or none: a name repeated in another spelling names both lines; one that is a
        followed or configured author's in another spelling names that author."""
        assert syncd("authors", "add", "Grace Hopper").code == 0
        rows = ["Emmy Noether,,,", "EMMY  NOETHER,,,", "grace hopper,,,", "zhida jiang,,,"]
        outcome = syncd("authors", "import", str(write_csv(tmp_path / "a.csv", rows)))
        assert outcome.code == 2
        assert "a.csv:3: 'EMMY NOETHER' is already on line 2 as 'Emmy Noether'" in outcome.err
        assert "a.csv:4: 'grace hopper' is the author 'Grace Hopper'" in outcome.err
        assert f"a.csv:5: 'zhida jiang' is configured in the config file as '{AUTHOR}'" in (
            outcome.err
        )
        assert "a.csv:2" not in outcome.err
        assert sorted(authors(syncd)) == sorted([AUTHOR, "Grace Hopper"])

    def test_the_api_answers_409_for_another_spelling(self, syncd: Syncd) -> None:
        """POST of a followed or configured name in another spelling is 409 naming the author;
        a hostile name is 400 saying why."""
        assert syncd("db", "upgrade").code == 0
        syncd.sections = f'[http]\nadmin_token = "{ADMIN_TOKEN}"\n'
        good = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        with serving(syncd) as site:

            def post(name: str) -> Any:
                return site.http.post("/api/v1/authors", json={"name": name}, headers=good)

            assert post(ADA).status_code == 201
            assert post(ADA).status_code == 200
            twice = post("ADA lovelace")
            assert twice.status_code == 409
            assert f"is the author '{ADA}'" in twice.json()["error"]
            configured = post(AUTHOR.lower())
            assert configured.status_code == 409
            assert f"author '{AUTHOR}'" in configured.json()["error"]
            hostile = post(HOSTILE)
            assert hostile.status_code == 400
            assert "name: " in hostile.json()["error"]
            assert "double quote" in hostile.json()["error"]
            zero_width = post("Ada\u200bLovelace")
            assert zero_width.status_code == 400
            assert "U+200B" in zero_width.json()["error"]
        assert sorted(authors(syncd)) == sorted([AUTHOR, ADA])

    def test_the_database_keeps_one_row_per_name(self, database_url: str) -> None:
        """The unique key on the folded name refuses a second spelling written past the checks;
        reconciling the file takes over a run-time author of the same name, renamed; writes
        under another spelling reach the same author."""
        storage = Storage(database_url)
        try:
            upgrade(storage.engine)
            storage.authors.put([Author("jane smith", AuthorOrigin.RUNTIME)])
            with pytest.raises(sa.exc.IntegrityError), storage.engine.begin() as conn:
                conn.execute(
                    authors_table.insert().values(name="JANE SMITH", created_at=datetime.now(UTC))
                )
            with pytest.raises(ConflictError, match="is the author 'jane smith'"):
                storage.authors.put([Author("Jane Smith", AuthorOrigin.RUNTIME)])
            storage.authors.reconcile([Author("Jane Smith", AuthorOrigin.CONFIG)])
            (row,) = storage.authors.summaries()
            assert (row.name, row.definition.origin) == ("Jane Smith", AuthorOrigin.CONFIG)
            assert storage.import_seeds("JANE  SMITH", seed_writes(load_seeds(SEEDS))) == 9
            (row,) = storage.authors.summaries()
            assert (row.name, row.tracked) == ("Jane Smith", 0)
            assert {p.author for p in storage.papers.all()} == {"Jane Smith"}
        finally:
            storage.close()


class TestRoundTrip:
    def test_a_normalised_name_is_found_by_the_cli_the_api_and_the_pages(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """Added with surplus spaces, the name is kept normalised; that name finds the author
        as a CLI argument, in API paths (URL-quoted, slash and all) and on its page."""
        # Two papers sharing no co-author or field: both are held as candidates.
        for arxiv_id, coauthor, field in (
            ("2602.30001", "Charles Babbage", "math.NT"),
            ("2602.30002", "Mary Somerville", "astro-ph.SR"),
        ):
            arxiv.publish(
                make_record(
                    arxiv_id,
                    authors=(NORMAL, coauthor),
                    primary_category=field,
                    categories=(field,),
                )
            )
        added = syncd("authors", "add", SPELLED)
        assert (added.code, added.out.split(":")[0]) == (0, NORMAL)
        sync_ok(syncd)
        assert authors(syncd)[NORMAL]["candidates"] == 2
        review = syncd("authors", "review", NORMAL)
        assert (review.code, "2602.30001" in review.out) == (0, True)
        syncd.sections = f'[http]\nadmin_token = "{ADMIN_TOKEN}"\n'
        good = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        path = quote(NORMAL, safe="")
        with serving(syncd) as site:
            detail = site.get(f"/api/v1/authors/{path}")
            assert detail.status_code == 200
            assert detail.json()["name"] == NORMAL
            assert site.get(f"/authors/{path}").status_code == 200
            confirm = site.http.post(
                f"/api/v1/authors/{path}/confirm", json={"ids": ["2602.30001"]}, headers=good
            )
            assert confirm.status_code == 200, confirm.text
            assert confirm.json()["name"] == NORMAL
            gone = site.http.delete(f"/api/v1/authors/{path}", headers=good)
            assert gone.status_code == 200
            assert gone.json()["followed"] is False
