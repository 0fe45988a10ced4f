"""Who shares a name query, and in what order a cycle takes them (syncd.service.batches)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from syncd.config import AuthorSettings
from syncd.domain.authors import Author
from syncd.domain.model import SyncRun
from syncd.domain.vocabulary import RunStatus
from syncd.service.batches import author_batches, batch_query, oldest_first

NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _author(name: str, query: str | None = None) -> Author:
    return AuthorSettings(name=name, query=query).author()


def _names(batches: list[list[Author]]) -> list[list[str]]:
    return [[a.name for a in batch] for batch in batches]


def _run(author: str, minutes: int) -> SyncRun:
    moment = NOON + timedelta(minutes=minutes)
    return SyncRun(1, author, moment, moment, RunStatus.OK, None, 1, 0, 0)


class TestAuthorBatches:
    def test_authors_without_a_query_of_their_own_share_one(self) -> None:
        """Name-only authors are ORed into one query; a custom query goes alone."""
        authors = [_author("Ada"), _author("Grace", 'au:"Hopper_G"'), _author("Emmy")]
        batches = author_batches(authors)
        assert _names(batches) == [["Ada", "Emmy"], ["Grace"]]
        assert batch_query(batches[0]) == 'au:"Ada" OR au:"Emmy"'

    def test_batches_come_in_the_order_of_their_first_author(self) -> None:
        """Who goes first stays first: a shared batch is not put after the custom queries."""
        authors = [_author("Grace", 'au:"Hopper_G"'), _author("Ada"), _author("Emmy", "au:E")]
        assert _names(author_batches(authors)) == [["Grace"], ["Ada"], ["Emmy"]]

    def test_a_full_batch_starts_another(self) -> None:
        """At most max_authors a batch, and never past max_query_chars of query."""
        authors = [_author(f"Author {n}") for n in range(5)]
        assert [len(b) for b in author_batches(authors, max_authors=2)] == [2, 2, 1]
        assert [len(b) for b in author_batches(authors, max_query_chars=30)] == [2, 2, 1]


class TestOldestFirst:
    def test_the_least_recently_synced_go_first(self) -> None:
        """Never synced first, then by their latest cycle that ran or succeeded; ties keep
        their order."""
        authors = [_author(name) for name in ("Ada", "Grace", "Emmy", "Lise")]
        claims = {"Ada": _run("Ada", 30), "Grace": _run("Grace", 10), "Lise": _run("Lise", 10)}
        assert [a.name for a in oldest_first(authors, claims)] == ["Emmy", "Grace", "Lise", "Ada"]
