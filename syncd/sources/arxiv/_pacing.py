"""arXiv's own pacer and cooldowns: one budget for all of arXiv's hosts in this process.

arXiv asks for one request every 3 s to all of its services together, so the
API and OAI-PMH share one pacer (``_PACER``) whatever host they ask; the
cooldowns of its hosts are this process's (``_COOLDOWNS``) unless the
caller gives the database's store.  The machinery is ``syncd.sources.polite``'s.
"""

from __future__ import annotations

from syncd.sources.polite import (
    PROCESS_COOLDOWNS,
    CooldownStore,
    Pacer,
    ProcessPacer,
    retry_delay,
)
from syncd.sources.polite import host_of as arxiv_host

__all__ = ["CooldownStore", "Pacer", "arxiv_host", "retry_delay"]

_PACER = ProcessPacer()
_COOLDOWNS = PROCESS_COOLDOWNS
