"""The arXiv API: a polite client and a hardened parser of its Atom feeds."""

from __future__ import annotations

from syncd.arxiv._client import ArxivClient
from syncd.arxiv._parser import FeedPage, parse_feed

__all__ = ["ArxivClient", "FeedPage", "parse_feed"]
