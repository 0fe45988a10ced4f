"""Groups in storage, on SQLite and PostgreSQL alike: the file's groups reconciled, run-time
groups made and changed, memberships read per group and per author, and the migration."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import sqlalchemy as sa

from syncd.domain.authors import Author
from syncd.domain.groups import Group
from syncd.domain.vocabulary import AuthorOrigin, Put
from syncd.errors import ConfigError, ConflictError, NotFoundError
from syncd.storage import Storage
from syncd.storage.migrate import schema_drift, upgrade
from tests.conftest import BOTH_DATABASES, database_for
from tests.integration.rewind import downgrade

ADA, BOB, CY = "Ada Lovelace", "Bob Kahn", "Cy Young"
CONFIG, RUNTIME = AuthorOrigin.CONFIG, AuthorOrigin.RUNTIME


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: groups are SQL of their own."""
    return database_for(request)


@pytest.fixture
def storage(database_url: str) -> Iterator[Storage]:
    """A migrated database following Ada and Bob from the file and Cy from the command line."""
    opened = Storage(database_url)
    opened.authors.reconcile([Author(ADA, CONFIG), Author(BOB, CONFIG)])
    opened.authors.put([Author(CY, RUNTIME)])
    yield opened
    opened.close()


def _configured(name: str, *members: str, description: str = "") -> Group:
    return Group(name, description, tuple(sorted(members)), CONFIG)


class TestReconcile:
    def test_the_files_groups_are_stored_with_their_members(self, storage: Storage) -> None:
        """Config groups get exactly the file's members, named in any spelling of them."""
        storage.groups.reconcile(
            [_configured("lab", ADA, "bob kahn", description="the lab"), _configured("all", CY)]
        )
        assert storage.groups.all() == [
            Group("all", "", (CY,), CONFIG),
            Group("lab", "the lab", (ADA, BOB), CONFIG),
        ]
        assert storage.groups.get("lab") == Group("lab", "the lab", (ADA, BOB), CONFIG)
        assert storage.groups.get("nobody") is None

    def test_a_second_start_follows_the_file_and_leaves_runtime_groups(
        self, storage: Storage
    ) -> None:
        """Members and groups gone from the file go; a run-time group stays as it is."""
        storage.groups.reconcile([_configured("lab", ADA, BOB), _configured("old", ADA)])
        storage.groups.put("mine", "", RUNTIME)
        storage.groups.add_members("mine", [CY])
        storage.groups.reconcile([_configured("lab", BOB, CY, description="now")])
        assert storage.groups.all() == [
            Group("lab", "now", (BOB, CY), CONFIG),
            Group("mine", "", (CY,), RUNTIME),
        ]

    def test_a_runtime_group_the_file_names_becomes_configured(self, storage: Storage) -> None:
        storage.groups.put("lab", "made by hand", RUNTIME)
        storage.groups.add_members("lab", [CY])
        storage.groups.reconcile([_configured("lab", ADA)])
        assert storage.groups.get("lab") == Group("lab", "", (ADA,), CONFIG)

    def test_a_member_who_is_not_followed_is_a_config_error(self, storage: Storage) -> None:
        """Nothing is written: the whole file is refused, naming the group and the name."""
        with pytest.raises(ConfigError, match=r"'lab'.*'Dan Brown'"):
            storage.groups.reconcile([_configured("ok", ADA), _configured("lab", "Dan Brown")])
        assert storage.groups.all() == []
        storage.authors.remove(CY)
        with pytest.raises(ConfigError, match="Cy Young"):
            storage.groups.reconcile([_configured("lab", CY)])

    def test_replicas_starting_together_both_reconcile(self, database_url: str) -> None:
        """Two processes reconciling the same new groups at once both start."""
        replicas = [Storage(database_url) for _ in range(4)]
        replicas[0].authors.reconcile([Author(ADA, CONFIG), Author(BOB, CONFIG)])
        groups = [_configured(f"lab {n}", ADA, BOB) for n in range(8)]
        try:
            with ThreadPoolExecutor(len(replicas)) as pool:
                done = list(pool.map(lambda s: s.groups.reconcile(groups), replicas))
            assert done == [None] * len(replicas)
            assert replicas[0].groups.all() == sorted(groups, key=lambda g: g.name)
        finally:
            for replica in replicas:
                replica.close()


class TestRuntimeGroups:
    def test_put_add_and_remove_members(self, storage: Storage) -> None:
        assert storage.groups.put("lab", "a lab", RUNTIME) == Put.ADDED
        assert storage.groups.put("lab", "a lab", RUNTIME) == Put.UNCHANGED
        assert storage.groups.put("lab", "the lab", RUNTIME) == Put.UPDATED
        assert storage.groups.add_members("lab", [ADA, "BOB KAHN"]) == 2
        assert storage.groups.add_members("lab", [ADA, CY]) == 1  # Ada is in already
        assert storage.groups.get("lab") == Group("lab", "the lab", (ADA, BOB, CY), RUNTIME)
        assert storage.groups.remove_members("lab", [BOB, BOB]) == 1
        assert storage.groups.remove_members("lab", [BOB]) == 0
        assert storage.groups.get("lab") == Group("lab", "the lab", (ADA, CY), RUNTIME)
        assert storage.groups.remove("lab")
        assert not storage.groups.remove("lab")
        assert storage.groups.all() == []
        assert storage.authors.followed_names() == [ADA, BOB, CY]  # the authors stay

    def test_unknown_names_write_nothing(self, storage: Storage) -> None:
        storage.groups.put("lab", "", RUNTIME)
        with pytest.raises(NotFoundError, match="'Dan Brown'"):
            storage.groups.add_members("lab", [ADA, "Dan Brown"])
        with pytest.raises(NotFoundError, match="no group named 'nope'"):
            storage.groups.add_members("nope", [ADA])
        with pytest.raises(NotFoundError, match="'Dan Brown'"):
            storage.groups.remove_members("lab", ["Dan Brown"])
        assert storage.groups.get("lab") == Group("lab", "", (), RUNTIME)

    def test_a_configured_group_is_changed_in_the_file(self, storage: Storage) -> None:
        storage.groups.reconcile([_configured("lab", ADA)])
        for change in (
            lambda: storage.groups.put("lab", "other", RUNTIME),
            lambda: storage.groups.remove("lab"),
            lambda: storage.groups.add_members("lab", [BOB]),
            lambda: storage.groups.remove_members("lab", [ADA]),
        ):
            with pytest.raises(ConflictError, match=r"configured in the config file \(\[\[groups"):
                change()
        assert storage.groups.get("lab") == _configured("lab", ADA)

    def test_an_author_no_longer_followed_is_not_listed(self, storage: Storage) -> None:
        """Until followed again: the membership is kept."""
        storage.groups.put("lab", "", RUNTIME)
        storage.groups.add_members("lab", [ADA, CY])
        storage.authors.remove(CY)
        assert storage.groups.get("lab") == Group("lab", "", (ADA,), RUNTIME)
        assert storage.groups.members_of(["lab"]) == {ADA}
        with pytest.raises(NotFoundError, match="no followed author named 'Cy Young'"):
            storage.groups.add_members("lab", [CY])
        storage.authors.put([Author(CY, RUNTIME)])
        assert storage.groups.members_of(["lab"]) == {ADA, CY}


class TestMemberships:
    def test_members_of_groups_and_groups_of_authors(self, storage: Storage) -> None:
        """An author in two groups is in both; one in none has an empty set."""
        storage.groups.reconcile([_configured("lab a", ADA, BOB), _configured("lab b", BOB)])
        assert storage.groups.members_of(["lab a"]) == {ADA, BOB}
        assert storage.groups.members_of(["lab b"]) == {BOB}
        assert storage.groups.members_of(["lab b", "unknown"]) == {BOB}
        assert storage.groups.members_of([]) == set()
        assert storage.groups.groups_of([ADA, BOB, CY]) == {
            ADA: {"lab a"},
            BOB: {"lab a", "lab b"},
            CY: set(),
        }


@pytest.mark.empty_database
def test_the_migration_goes_both_ways(database_url: str) -> None:
    """0023 makes the tables the models describe, and going back drops them."""
    engine = sa.create_engine(database_url)
    try:
        upgrade(engine)
        assert schema_drift(engine) == []
        downgrade(engine, "0022")
        tables = set(sa.inspect(engine).get_table_names())
        assert not {"groups", "group_members"} & tables
        columns = {c["name"] for c in sa.inspect(engine).get_columns("endpoints")}
        assert not {"authors", "groups"} & columns
        upgrade(engine)
        assert schema_drift(engine) == []
    finally:
        engine.dispose()
