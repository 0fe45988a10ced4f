"""How politely one upstream service is asked: its pace, patience, size cap and names."""

from __future__ import annotations

from dataclasses import dataclass

from syncd.config import ArxivSettings, PublicationsSettings
from syncd.errors import PermanentUpstreamError, PublicationSourceError

__all__ = ["ConnectionPolicy", "publication_policy", "user_agent"]


@dataclass(frozen=True, slots=True)
class ConnectionPolicy:
    """What a ``PoliteConnection`` needs to know of the service it asks.

    ``service`` names it in messages ("arXiv", "Crossref"); ``log_name``
    prefixes its log lines (``arxiv_request``, ``crossref_retry``);
    ``config_section`` is the configuration table whose keys the messages
    name (``arxiv.max_response_bytes``).  ``garbled`` is the error its
    parser raises for a body that is not what the service sends: a 4xx
    body that fails to parse is not the service's own error answer, and an
    oversized body is refused with it.  ``metered``: its requests count in
    syncd's ``syncd_arxiv_*`` metrics.
    """

    service: str
    log_name: str
    config_section: str
    user_agent: str
    accept: str
    request_interval: float
    timeout: float
    max_retries: int
    backoff_base: float
    backoff_max: float
    max_response_bytes: int
    throttle_cooldown: float
    throttle_cooldown_max: float
    garbled: type[PermanentUpstreamError]
    metered: bool = False


def user_agent(base: str, contact: str | None) -> str:
    """The User-Agent every source sends: ``base``, and ``mailto:contact`` when one is set
    (arXiv, Crossref and OpenAlex all ask for a way to reach whoever runs a client)."""
    return f"{base} mailto:{contact}" if contact else base


def publication_policy(
    service: str,
    interval: float,
    publications: PublicationsSettings,
    arxiv: ArxivSettings,
) -> ConnectionPolicy:
    """How a source of publications (Crossref, OpenAlex) is asked: paced by its own
    ``interval``, with ``[publications]``'s timeout and size cap and ``[arxiv]``'s patience
    (retries, backoff, cooldowns) and User-Agent with its contact."""
    return ConnectionPolicy(
        service=service,
        log_name=service.lower(),
        config_section="publications",
        user_agent=user_agent(arxiv.user_agent, arxiv.contact),
        accept="application/json",
        request_interval=interval,
        timeout=publications.timeout,
        max_retries=arxiv.max_retries,
        backoff_base=arxiv.backoff_base,
        backoff_max=arxiv.backoff_max,
        max_response_bytes=publications.max_response_bytes,
        throttle_cooldown=arxiv.throttle_cooldown,
        throttle_cooldown_max=arxiv.throttle_cooldown_max,
        garbled=PublicationSourceError,
    )
