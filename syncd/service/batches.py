"""Which authors share a name query, and in what order a cycle takes them.

Authors without a custom query share batched ``au:"A" OR au:"B"`` requests,
so N authors cost about N / batch requests, not N.  Authors go least
recently synced first (by their latest cycle that ran or succeeded): when
arXiv throttles us and a cycle stops part way, the authors it left out come
first in the next one, so none starves however often a storm cuts cycles
short.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from syncd.domain.authors import Author
from syncd.domain.model import SyncRun
from syncd.errors import StoreError
from syncd.storage import Storage

__all__ = [
    "MAX_BATCH_AUTHORS",
    "MAX_QUERY_CHARS",
    "author_batches",
    "batch_query",
    "last_claims",
    "oldest_first",
]

# arXiv documents no URL limit; long OR queries have been seen to fail, so
# a batch stays well under a kilobyte of search_query.
MAX_QUERY_CHARS = 1000
MAX_BATCH_AUTHORS = 25
# Before any real cycle: an author never claimed by one goes first.
_NEVER = datetime.min.replace(tzinfo=UTC)


def author_batches(
    authors: Sequence[Author],
    max_query_chars: int = MAX_QUERY_CHARS,
    max_authors: int = MAX_BATCH_AUTHORS,
) -> list[list[Author]]:
    """Group authors into batches whose OR query stays short; a custom query goes alone.

    Batches come in the order of their first authors: the order given is who goes first.
    """
    batches: list[list[Author]] = []
    current: list[Author] | None = None  # the batch still open, one of ``batches``
    for author in authors:
        if author.query is not None:
            batches.append([author])
            continue
        candidate = [*current, author] if current is not None else [author]
        if current is None or (
            len(batch_query(candidate)) > max_query_chars or len(candidate) > max_authors
        ):
            current = [author]
            batches.append(current)
        else:
            current.append(author)
    return batches


def batch_query(authors: Sequence[Author]) -> str:
    """The ``search_query`` of a batch: one author's query, or their ``au:`` terms ORed."""
    return " OR ".join(a.search_query for a in authors)


def last_claims(storage: Storage, authors: Sequence[Author]) -> dict[str, SyncRun]:
    """Each author's latest cycle that ran or succeeded; none when the database is down
    (each cycle then fails on its own, as it always did)."""
    try:
        return storage.runs.last_claims([a.name for a in authors])
    except StoreError:
        return {}


def oldest_first(authors: Sequence[Author], claims: Mapping[str, SyncRun]) -> list[Author]:
    """``authors``, least recently synced first (see the module's doc); ties keep their order."""

    def last_synced(author: Author) -> datetime:
        run = claims.get(author.name)
        return run.started_at if run is not None else _NEVER

    return sorted(authors, key=last_synced)
