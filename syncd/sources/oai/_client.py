"""arXiv's OAI-PMH interface: ``ListRecords`` in ``arXivRaw``, page by page.

Every request goes through the API client's ``request`` (``syncd.sources.arxiv``):
the same connection, politeness budget (shared by replicas), deadlines,
size cap and retries.  A ``503`` with ``Retry-After`` is OAI-PMH's flow
control: the retry waits at least that long and goes on.

A harvest is incremental: ``from`` is a date (``YYYY-MM-DD``; arXiv refuses a
time), never with ``until``, as arXiv asks; further pages are asked for by
their ``resumptionToken`` alone, as the protocol requires.
"""

from __future__ import annotations

from datetime import date

from syncd.config import HarvestSettings
from syncd.errors import BadResumptionToken, NoRecordsMatch
from syncd.sources.arxiv import ArxivClient
from syncd.sources.oai._parser import MAX_TOKEN_CHARS, OaiPage, parse_page

__all__ = ["OaiClient"]

_PREFIX = "arXivRaw"


class OaiClient:
    """Lists arXivRaw records through an ``ArxivClient``'s connection and budget."""

    def __init__(self, client: ArxivClient, settings: HarvestSettings) -> None:
        self._client = client
        self._url = settings.url

    @property
    def requests(self) -> int:
        """Requests sent by the underlying client, the API's included."""
        return self._client.requests

    def first_page(self, since: date | None, set_spec: str | None) -> OaiPage:
        """The first page of records changed on or after ``since`` (all when ``None``).

        ``noRecordsMatch`` (nothing changed) is an empty last page.
        """
        params: dict[str, str | int] = {"verb": "ListRecords", "metadataPrefix": _PREFIX}
        if since is not None:
            params["from"] = since.isoformat()
        if set_spec is not None:
            params["set"] = set_spec
        context: dict[str, object] = {"oai_from": params.get("from"), "oai_set": set_spec}
        return self._list(params, context)

    def next_page(self, token: str) -> OaiPage:
        """The page a ``resumptionToken`` names; ``BadResumptionToken`` once it expired.

        A token longer than any arXiv writes (one an older syncd stored) is
        refused unsent, as an expired one is: the harvest lists its set again.
        """
        if len(token) > MAX_TOKEN_CHARS:
            raise BadResumptionToken(
                f"the stored token is {len(token)} characters long, more than arXiv's"
                f" {MAX_TOKEN_CHARS}; not sending it"
            )
        params: dict[str, str | int] = {"verb": "ListRecords", "resumptionToken": token}
        return self._list(params, {"oai_token": token[:80]})

    def _list(self, params: dict[str, str | int], context: dict[str, object]) -> OaiPage:
        try:
            return self._client.request(
                self._url, params, dict(context), parse_page, setting="harvest.url"
            )
        except NoRecordsMatch as exc:
            return OaiPage(exc.response_date, (), None)
