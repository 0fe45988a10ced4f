"""The connection a webhook goes out on: checked destinations, bounded by the attempt.

DNS rebinding is why this exists: see ``_GuardedBackend``.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable

import httpcore
import httpx

from syncd.domain.destinations import (
    DestinationPolicy,
    Resolver,
    numeric_addresses,
    unique_addresses,
)
from syncd.httpclient import DeadlineBackend, DeadlineTransport

__all__ = ["guarded_transport", "resolve_host"]


def resolve_host(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to now, in the resolver's order; ``OSError`` if none."""
    return unique_addresses(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))


class _GuardedBackend(DeadlineBackend):
    """Opens TCP connections only to addresses the destination policy allows.

    DNS rebinding: checking a name's addresses and then letting the HTTP client
    resolve it again leaves a window in which a hostile DNS server (TTL 0) can
    swap a public answer for 169.254.169.254.  So the name is resolved once,
    here, for each new connection; every address it resolves to is checked (one
    blocked address refuses the destination: a name that mixes a receiver with a
    metadata address is not one to trust); and the socket connects to those
    checked addresses and nothing else.  TLS still verifies the certificate
    against the host name (httpcore passes it as server_hostname) and the Host
    header keeps the name, so nothing changes for the receiver.  The price: a
    pooled keep-alive connection (at most 5 s idle) keeps the address it was
    opened to after DNS changes, which is still a checked address.
    """

    def __init__(self, policy: DestinationPolicy, resolve: Resolver) -> None:
        self._policy = policy
        self._resolve = resolve

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = numeric_addresses(host)
        if addresses is None:
            try:
                addresses = list(self._resolve(host, port))
            except (OSError, UnicodeError) as exc:
                # What the stock backend raises when the resolver fails.
                raise httpcore.ConnectError(str(exc)) from exc
        if not addresses:
            raise httpcore.ConnectError(f"{host} resolves to no address")
        self._policy.check(host, addresses)
        failure: httpcore.ConnectError | httpcore.ConnectTimeout | None = None
        for address in addresses:
            try:
                # The shared backend bounds the connect and the connection by
                # the attempt's deadline.
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure


def guarded_transport(policy: DestinationPolicy, resolve: Resolver) -> httpx.BaseTransport:
    """httpx's transport (httpx's default limits), connecting through ``_GuardedBackend``."""
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)
    return DeadlineTransport(limits, _GuardedBackend(policy, resolve))
