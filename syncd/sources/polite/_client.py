"""What a client of one JSON service shares: its polite connection and requests counted by kind."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from types import TracebackType
from typing import Self, TypedDict, TypeVar, Unpack

import httpx

from syncd.sources.polite._connection import PoliteConnection, utc_now
from syncd.sources.polite._pacing import CooldownStore, Pacer, host_of, process_pacer
from syncd.sources.polite._policy import ConnectionPolicy

__all__ = ["Plumbing", "ServiceClient"]

T = TypeVar("T")


class Plumbing(TypedDict, total=False):
    """What a service's client may be handed besides its settings (each has a default):
    tests hand a transport, a clock and a sleep; the service hands the database's pacer
    and cooldowns."""

    transport: httpx.BaseTransport | None
    pacer: Pacer | None
    cooldowns: CooldownStore | None
    sleep: Callable[[float], None]
    clock: Callable[[], float]
    now: Callable[[], datetime]
    rng: random.Random | None


class ServiceClient:
    """A client of ``base_url``'s service on one polite connection; a context manager.

    ``requests`` counts the logical requests sent by kind (a request retried
    counts once); ``pacer`` defaults to this process's pacer of the service's
    host (``process_pacer``), ``cooldowns`` to this process's store.
    """

    def __init__(
        self, base_url: str, policy: ConnectionPolicy, **plumbing: Unpack[Plumbing]
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.requests: Counter[str] = Counter()
        pacer = plumbing.get("pacer")
        self._connection = PoliteConnection(
            policy,
            pacer=pacer if pacer is not None else process_pacer(host_of(self.base_url)),
            transport=plumbing.get("transport"),
            sleep=plumbing.get("sleep", time.sleep),
            clock=plumbing.get("clock", time.monotonic),
            now=plumbing.get("now", utc_now),
            rng=plumbing.get("rng"),
            cooldowns=plumbing.get("cooldowns"),
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self._connection.close()

    def _get(
        self,
        kind: str,
        path: str,
        params: dict[str, str | int],
        parse: Callable[[bytes], T],
        setting: str,
    ) -> T:
        """One request of ``kind`` for ``base_url + path``, parsed by ``parse``."""
        self.requests[kind] += 1
        context = {"kind": kind}
        return self._connection.request(
            self.base_url + path, params, context, parse, setting=setting
        )
