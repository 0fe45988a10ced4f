"""A polite connection to any upstream: paced per host, retried while worth it, size-capped."""

from __future__ import annotations

from syncd.sources.polite._client import Plumbing, ServiceClient
from syncd.sources.polite._connection import BodyReader, PoliteConnection, utc_now
from syncd.sources.polite._pacing import (
    PROCESS_COOLDOWNS,
    CooldownStore,
    LocalCooldowns,
    Pacer,
    ProcessPacer,
    host_of,
    process_pacer,
    retry_delay,
)
from syncd.sources.polite._policy import ConnectionPolicy, publication_policy, user_agent

__all__ = [
    "PROCESS_COOLDOWNS",
    "BodyReader",
    "ConnectionPolicy",
    "CooldownStore",
    "LocalCooldowns",
    "Pacer",
    "Plumbing",
    "PoliteConnection",
    "ProcessPacer",
    "ServiceClient",
    "host_of",
    "process_pacer",
    "publication_policy",
    "retry_delay",
    "user_agent",
    "utc_now",
]
