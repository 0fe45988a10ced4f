"""arXiv's OAI-PMH interface: a client of ``ListRecords`` in ``arXivRaw`` and its page parser."""

from __future__ import annotations

from syncd.sources.oai._client import OaiClient
from syncd.sources.oai._parser import OaiPage, parse_page

__all__ = ["OaiClient", "OaiPage", "parse_page"]
