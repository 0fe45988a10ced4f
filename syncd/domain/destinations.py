"""Where a webhook may be sent: the destination policy against SSRF.

http and https only, and by default never a link-local or cloud-metadata
address (169.254.0.0/16, fe80::/10, fd00:ec2::254, and IPv4 addresses of
those embedded in IPv6), wherever the URL's host name resolves to at the
moment of connecting (``syncd.delivery.transport``); ``[delivery]
allow_destinations`` lifts that for listed hosts and networks.

No DNS here: configuration refuses blocked literals at load with
``check_destination``; the resolver is delivery's (``resolve_host``).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from syncd.errors import ConfigError

__all__ = [
    "BlockedDestinationError",
    "DestinationPolicy",
    "Resolver",
    "check_destination",
    "check_host",
    "numeric_addresses",
    "unique_addresses",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
# (host, port) -> the numeric addresses to connect to, in order of preference.
Resolver = Callable[[str, int], Sequence[str]]

# Never a webhook's business unless allowed: the link-local ranges, where the
# cloud metadata services live (169.254.169.254 on AWS, GCP, Azure and others,
# 169.254.170.2 for ECS task credentials), and AWS's IPv6 metadata address.
# Loopback and private ranges stay allowed: receivers on the LAN are normal.
_BLOCKED_NETWORKS: tuple[IPNetwork, ...] = (
    ipaddress.ip_network("169.254.0.0/16"),
    ipaddress.ip_network("fe80::/10"),
    ipaddress.ip_network("fd00:ec2::254/128"),
)
_BLOCKED_KIND = "link-local/metadata"
# IPv6 forms that carry an IPv4 address the packets may end up at.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_HOST_LABEL = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
_MAX_HOST_LENGTH = 253
_MAX_LABEL_LENGTH = 63


class BlockedDestinationError(ConfigError):
    """A webhook URL points at an address the destination policy refuses.

    The message names the host and the address and says how to allow it; it
    never quotes the URL's path, query or credentials.
    """


def _embedded_forms(address: IPAddress) -> list[IPAddress]:
    """``address`` and any IPv4 address embedded in it (mapped, compatible, NAT64, 6to4)."""
    forms: list[IPAddress] = [address]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            forms.append(address.ipv4_mapped)
        elif address.sixtofour is not None:
            forms.append(address.sixtofour)
        elif address in _NAT64 or (address in _IPV4_COMPATIBLE and int(address) > 1):
            forms.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return forms


def _host_key(host: str) -> str:
    """A host name as the allow list compares it: lower case, no trailing dot or brackets."""
    return host.strip().strip("[]").rstrip(".").lower()


def _parse_allowed(entry: str) -> IPNetwork | str:
    """One ``allow_destinations`` entry: a network, an address, or a host name."""
    text = _host_key(entry)
    if "/" in text:
        try:
            return ipaddress.ip_network(text)
        except ValueError as exc:
            raise ValueError(f"{entry!r} is not a network: {exc}") from None
    try:
        return ipaddress.ip_network(ipaddress.ip_address(text))
    except ValueError:
        pass
    labels = text.split(".")
    if (
        not text
        or len(text) > _MAX_HOST_LENGTH
        or any(
            not label
            or len(label) > _MAX_LABEL_LENGTH
            or not set(label) <= _HOST_LABEL
            or label.startswith("-")
            or label.endswith("-")
            for label in labels
        )
    ):
        raise ValueError(
            f"{entry!r} is neither an IP address, a network such as 169.254.10.0/24,"
            " nor a host name such as metadata.internal"
        )
    return text


@dataclass(frozen=True, slots=True)
class DestinationPolicy:
    """Which webhook destinations are refused: link-local and metadata addresses, unless allowed.

    ``networks`` and ``hosts`` come from ``[delivery] allow_destinations``: an
    allowed host name lets through whatever it resolves to; an allowed network
    lets through its addresses, also in IPv4-mapped form.
    """

    networks: tuple[IPNetwork, ...] = ()
    hosts: frozenset[str] = frozenset()

    @classmethod
    def from_allow_list(cls, entries: Iterable[str]) -> DestinationPolicy:
        """The policy allowing ``entries``: IP addresses, networks and host names.

        Raises ``ValueError`` naming the first entry that is none of those.
        """
        networks: list[IPNetwork] = []
        hosts: set[str] = set()
        for entry in entries:
            parsed = _parse_allowed(entry)
            if isinstance(parsed, str):
                hosts.add(parsed)
            else:
                networks.append(parsed)
        return cls(tuple(networks), frozenset(hosts))

    def blocked(self, address: str) -> bool:
        """Whether connecting to the numeric ``address`` is refused (unparsable ones are)."""
        try:
            forms = _embedded_forms(ipaddress.ip_address(address))
        except ValueError:
            return True
        if not any(form in network for form in forms for network in _BLOCKED_NETWORKS):
            return False
        return not any(form in network for form in forms for network in self.networks)

    def check(self, host: str, addresses: Iterable[str]) -> None:
        """Raise ``BlockedDestinationError`` unless ``host`` may be reached at every address."""
        if _host_key(host) in self.hosts:
            return
        for address in addresses:
            if self.blocked(address):
                raise BlockedDestinationError(_blocked_message(host, address))


def _blocked_message(host: str, address: str) -> str:
    shown_host = _host_key(host)
    try:
        literal = ipaddress.ip_address(shown_host) == ipaddress.ip_address(address)
    except ValueError:
        literal = False
    where = (
        f"destination {address} is blocked"
        if literal
        else f"destination {shown_host} resolves to {address}, which is blocked"
    )
    return f"{where} ({_BLOCKED_KIND}); allow it with [delivery] allow_destinations"


def numeric_addresses(host: str) -> list[str] | None:
    """The address ``host`` spells, if it is an IP literal in any form the resolver accepts.

    ``None`` for a host name.  No DNS: besides the usual forms, this catches
    ``2852039166``, ``0xa9fea9fe`` and ``0251.0376.0251.0376``, which the C
    resolver reads as 169.254.169.254, and IPv6 literals with a zone id.
    """
    zoned = _zoned_ipv6(host)
    if zoned is not None:
        return [zoned]
    try:
        infos = socket.getaddrinfo(
            _host_key(host), None, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST
        )
    except (OSError, UnicodeError):
        return None
    return unique_addresses(infos)


def _zoned_ipv6(host: str) -> str | None:
    """``address%zone`` when ``host`` is an IPv6 literal with a zone id; ``None`` otherwise.

    A URL writes the zone's "%" as "%25" (RFC 6874: ``[fe80::1%25eth0]``).
    getaddrinfo refuses a zone naming no interface, "25eth0" among them, so
    such a literal passed for a host name and skipped the start-up check; the
    address alone says whether it is blocked, whatever the zone.
    """
    address, percent, zone = host.strip().strip("[]").partition("%")
    if not percent:
        return None
    try:
        ipaddress.IPv6Address(address)
    except ValueError:
        return None
    # Interface names are case-sensitive: only the address is lowered.
    return f"{address.lower()}%{unquote('%' + zone)[1:]}"


def unique_addresses(infos: Iterable[tuple[Any, ...]]) -> list[str]:
    """The numeric addresses of getaddrinfo's ``infos``, once each, in its order."""
    addresses: list[str] = []
    for family, _, _, _, sockaddr in infos:
        address = str(sockaddr[0])
        if family == socket.AF_INET6 and len(sockaddr) > 3 and sockaddr[3] and "%" not in address:
            address = f"{address}%{sockaddr[3]}"  # a link-local address needs its interface
        if address not in addresses:
            addresses.append(address)
    return addresses


def check_destination(
    url: str,
    allowed: Collection[str] | DestinationPolicy = (),
    *,
    resolve: Resolver | None = None,
) -> None:
    """Refuse a webhook URL that is not http(s) or whose host is a blocked address.

    Without ``resolve`` this is pure: IP literals are checked, host names pass
    (their addresses are checked at send time, because DNS changes).  With
    ``resolve`` every address of a host name is checked.  Raises
    ``BlockedDestinationError`` for a blocked address and ``ConfigError`` for a
    URL that is not http(s); neither message quotes the URL.
    """
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        raise ConfigError("not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ConfigError("must be an http:// or https:// URL")
    if not host:
        raise ConfigError("the URL has no host")
    policy = (
        allowed
        if isinstance(allowed, DestinationPolicy)
        else DestinationPolicy.from_allow_list(allowed)
    )
    check_host(host, port or (443 if scheme == "https" else 80), policy, resolve=resolve)


def check_host(
    host: str, port: int, policy: DestinationPolicy, *, resolve: Resolver | None = None
) -> None:
    """Refuse ``host`` if it is, or (given ``resolve``) resolves to, a blocked address.

    Without ``resolve`` a host name passes.  Raises ``BlockedDestinationError``;
    ``resolve`` may raise ``OSError``.
    """
    addresses = numeric_addresses(host)
    if addresses is None:
        if resolve is None:
            return
        addresses = list(resolve(host, port))
    policy.check(host, addresses)
