"""Authors grouped into batched name queries: ``au:"A" OR au:"B"``, a few per request.

N authors without a custom query cost about N / batch requests, not N; a
batch stays short, as arXiv documents no URL limit and long OR queries have
been seen to fail.  An author with a custom query goes alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from syncd.config import AuthorSettings

__all__ = ["MAX_BATCH_AUTHORS", "MAX_QUERY_CHARS", "author_batches", "batch_query"]

# Well under a kilobyte of search_query.
MAX_QUERY_CHARS = 1000
MAX_BATCH_AUTHORS = 25


def author_batches(
    authors: Sequence[AuthorSettings],
    max_query_chars: int = MAX_QUERY_CHARS,
    max_authors: int = MAX_BATCH_AUTHORS,
) -> list[list[AuthorSettings]]:
    """Group authors into batches whose OR query stays short; a custom query goes alone."""
    batches: list[list[AuthorSettings]] = []
    current: list[AuthorSettings] = []
    for author in authors:
        if author.query is not None:
            batches.append([author])
            continue
        candidate = [*current, author]
        if current and (
            len(batch_query(candidate)) > max_query_chars or len(candidate) > max_authors
        ):
            batches.append(current)
            candidate = [author]
        current = candidate
    if current:
        batches.append(current)
    return batches


def batch_query(authors: Sequence[AuthorSettings]) -> str:
    """The ``search_query`` of a batch: one author's query, or their ``au:`` terms ORed."""
    return " OR ".join(a.search_query for a in authors)
