"""OpenAlex: a polite client of single works (with a key) and the publication it merged."""

from __future__ import annotations

from syncd.sources.openalex._client import OpenAlexClient
from syncd.sources.openalex._parser import (
    HOW_MERGED,
    PUBLISHED_SOURCE_TYPES,
    merged_publication,
    parse_work,
)

__all__ = [
    "HOW_MERGED",
    "PUBLISHED_SOURCE_TYPES",
    "OpenAlexClient",
    "merged_publication",
    "parse_work",
]
