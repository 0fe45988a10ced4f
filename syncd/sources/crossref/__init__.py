"""Crossref's REST API: a polite client and a suspicious parser of its works and notices."""

from __future__ import annotations

from syncd.sources.crossref._client import (
    LINK_BATCH,
    NOTICE_BATCH,
    SEARCH_ROWS,
    CrossrefClient,
)
from syncd.sources.crossref._parser import (
    HOW_ARXIV_ID,
    HOW_DOI,
    clean_title,
    linked_works,
    notice_targets,
    parse_work_list,
    readable_works,
    work_from_item,
)

__all__ = [
    "HOW_ARXIV_ID",
    "HOW_DOI",
    "LINK_BATCH",
    "NOTICE_BATCH",
    "SEARCH_ROWS",
    "CrossrefClient",
    "clean_title",
    "linked_works",
    "notice_targets",
    "parse_work_list",
    "readable_works",
    "work_from_item",
]
