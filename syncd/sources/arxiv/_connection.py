"""The polite connection to arXiv's services, as ``[arxiv]`` configures it.

One connection for the API's queries (``syncd.sources.arxiv._client``) and
OAI-PMH's pages (``syncd.sources.oai``): ``syncd.sources.polite``'s, paced by
arXiv's one budget for all its hosts (``_pacing._PACER`` in this process, the
database's pacer with replicas), with arXiv's Atom feeds as its bodies.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import httpx

from syncd.config import ArxivSettings
from syncd.errors import FeedError
from syncd.sources.arxiv._pacing import _COOLDOWNS, _PACER
from syncd.sources.polite import (
    BodyReader,
    ConnectionPolicy,
    CooldownStore,
    Pacer,
    PoliteConnection,
    user_agent,
    utc_now,
)

__all__ = ["ArxivConnection", "arxiv_policy"]

T = TypeVar("T")


def arxiv_policy(settings: ArxivSettings) -> ConnectionPolicy:
    """How ``[arxiv]`` asks arXiv to be asked."""
    return ConnectionPolicy(
        service="arXiv",
        log_name="arxiv",
        config_section="arxiv",
        user_agent=user_agent(settings.user_agent, settings.contact),
        accept="application/atom+xml",
        request_interval=settings.request_interval,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        backoff_base=settings.backoff_base,
        backoff_max=settings.backoff_max,
        max_response_bytes=settings.max_response_bytes,
        throttle_cooldown=settings.throttle_cooldown,
        throttle_cooldown_max=settings.throttle_cooldown_max,
        garbled=FeedError,
        metered=True,
    )


class ArxivConnection(PoliteConnection):
    """One connection to arXiv, shared by every request; use it as a context manager.

    ``pacer`` and ``cooldowns``: by default this process's own for arXiv.
    """

    def __init__(
        self,
        settings: ArxivSettings,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = utc_now,
        rng: random.Random | None = None,
        pacer: Pacer | None = None,
        cooldowns: CooldownStore | None = None,
    ) -> None:
        super().__init__(
            arxiv_policy(settings),
            pacer=pacer if pacer is not None else _PACER,
            transport=transport,
            sleep=sleep,
            clock=clock,
            now=now,
            rng=rng,
            cooldowns=cooldowns if cooldowns is not None else _COOLDOWNS,
        )
        self._settings = settings

    @property
    def settings(self) -> ArxivSettings:
        """The ``[arxiv]`` settings this client follows."""
        return self._settings

    def request(
        self,
        url: str,
        params: dict[str, str | int],
        context: dict[str, Any],
        parse: Callable[[bytes], T],
        *,
        setting: str = "arxiv.api_url",
        reader: Callable[[], BodyReader[T]] | None = None,
    ) -> T:
        """One logical request to any arXiv service (``PoliteConnection.request``);
        ``setting`` defaults to the API's URL."""
        return super().request(url, params, context, parse, setting=setting, reader=reader)
