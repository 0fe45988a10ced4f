"""The arXiv API: a polite client and a hardened parser of its Atom feeds."""

from __future__ import annotations

from syncd.sources.arxiv._client import (
    AUTHOR_FEED_FORMAT,
    MAX_ID_LIST_CHARS,
    MAX_IDS_PER_REQUEST,
    ArxivClient,
    id_list_batches,
)
from syncd.sources.arxiv._pacing import CooldownStore, Pacer, arxiv_host
from syncd.sources.arxiv._parser import (
    AuthorFeedFormat,
    clean_text,
    hardened_parser,
    hardened_pull_parser,
    refuse_declarations,
)
from syncd.sources.arxiv._reader import FeedPage, FeedReader, parse_author_feed, parse_feed

__all__ = [
    "AUTHOR_FEED_FORMAT",
    "MAX_IDS_PER_REQUEST",
    "MAX_ID_LIST_CHARS",
    "ArxivClient",
    "AuthorFeedFormat",
    "CooldownStore",
    "FeedPage",
    "FeedReader",
    "Pacer",
    "arxiv_host",
    "clean_text",
    "hardened_parser",
    "hardened_pull_parser",
    "id_list_batches",
    "parse_author_feed",
    "parse_feed",
    "refuse_declarations",
]
