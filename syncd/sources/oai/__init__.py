"""arXiv's OAI-PMH interface: a client of ``ListRecords`` in ``arXivRaw`` and its page parser."""

from __future__ import annotations

from syncd.sources.oai._client import OaiClient
from syncd.sources.oai._parser import MAX_TOKEN_CHARS, OaiEntry, OaiPage, parse_page

__all__ = ["MAX_TOKEN_CHARS", "OaiClient", "OaiEntry", "OaiPage", "parse_page"]
