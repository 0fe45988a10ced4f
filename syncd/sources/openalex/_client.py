"""A polite client of OpenAlex: the work of an arXiv DOI, and the publication it merged.

OpenAlex has asked for a key since February 2026 (single-work lookups are
free, filtered lists are not): the client is built only with
``[publications] openalex_key`` and sends it as ``api_key``; it asks one work
at a time, never a list.  Paced by ``openalex_interval`` through
``syncd.sources.polite`` like every source.
"""

from __future__ import annotations

from typing import Unpack
from urllib.parse import quote

from syncd.config import ArxivSettings, PublicationsSettings
from syncd.domain.publications import LinkedWork
from syncd.errors import ConfigError, RequestRefused
from syncd.sources.openalex._parser import merged_publication, parse_work
from syncd.sources.polite import (
    Plumbing,
    ServiceClient,
    publication_policy,
)

__all__ = ["OpenAlexClient"]

_SETTING = "publications.openalex_url"


class OpenAlexClient(ServiceClient):
    """OpenAlex, asked politely with the key; use it as a context manager.

    ``ConfigError`` when ``[publications] openalex_key`` is not set: without a
    key OpenAlex is never asked.  ``requests`` counts requests by kind (``work``).
    """

    def __init__(
        self,
        publications: PublicationsSettings,
        arxiv: ArxivSettings,
        **plumbing: Unpack[Plumbing],
    ) -> None:
        if publications.openalex_key is None:
            raise ConfigError("OpenAlex is asked only with [publications] openalex_key set")
        self._key = publications.openalex_key.get_secret_value()
        policy = publication_policy("OpenAlex", publications.openalex_interval, publications, arxiv)
        super().__init__(publications.openalex_url, policy, **plumbing)

    def linked_work(self, arxiv_id: str) -> LinkedWork | None:
        """The publication OpenAlex merged into the work of ``arxiv_id``'s arXiv DOI; ``None``
        when it keeps them apart or knows no such work."""
        path = "/works/doi:" + quote(f"10.48550/arXiv.{arxiv_id}", safe="/")
        try:
            work = self._get("work", path, {"api_key": self._key}, parse_work, _SETTING)
        except RequestRefused as exc:
            if exc.status == 404:
                return None
            raise
        return merged_publication(arxiv_id, work)
