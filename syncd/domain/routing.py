"""Which endpoints take which events: endpoints as the outbox routes them, and its filters.

Pure data and decisions: storage writes a delivery row per accepting
endpoint in the event's own transaction; the worker works the rows.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from syncd.domain.author_names import name_key
from syncd.domain.vocabulary import DeliveryFormat, DeliveryGroup

__all__ = ["Audience", "Endpoint", "EndpointSpec", "accepts", "url_hash"]


@dataclass(frozen=True, slots=True)
class EndpointSpec:
    """A configured endpoint as the outbox needs it: no secrets, just routing.

    The outbox stores ``url_hash``, never ``url``: see ``url_hash``.
    """

    name: str
    url: str
    url_hash: str
    events: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    format: DeliveryFormat = DeliveryFormat.STANDARD
    group: DeliveryGroup = DeliveryGroup.EVENT
    # Routing by person and group: author names and group names; neither takes everyone's.
    authors: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return (
            f"EndpointSpec(name={self.name!r}, format={self.format.value!r}, "
            f"group={self.group.value!r}, events={self.events!r}, kinds={self.kinds!r}, "
            f"authors={self.authors!r}, groups={self.groups!r})"
        )


def url_hash(url: str, key: bytes) -> str:
    """HMAC-SHA256 of ``url`` under ``key``, in hex.

    What the database keeps to notice a changed URL.  Keyed with a secret the
    database does not hold (the endpoint's signing key, or the installation's
    key file for unsigned targets), so that a copy of the database cannot
    confirm a guessed URL: Apprise URLs (an ntfy topic, a mailto password)
    are short enough to guess.
    """
    return hmac.new(key, url.encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A configured endpoint as the worker sends to it: its routing, secrets and timeout.

    Built once, when the configuration is loaded, so a secret read from the
    environment is read once and not on every send.
    """

    spec: EndpointSpec
    secrets: tuple[str, ...]
    timeout: float

    @property
    def name(self) -> str:
        """The endpoint's name in logs, CLI output and the outbox."""
        return self.spec.name

    def __repr__(self) -> str:
        # Never the URL (tokens live in its path) nor the secrets.
        return f"Endpoint(name={self.name!r}, timeout={self.timeout!r})"


def accepts(
    events: Sequence[str], kinds: Sequence[str], event_type: str, event_kinds: Sequence[str]
) -> bool:
    """Whether an endpoint filtering on ``events`` and ``kinds`` takes this event.

    An empty filter takes everything.  A kinds filter only narrows events
    that carry kinds; paper.added and paper.removed pass it.
    """
    if events and event_type not in events:
        return False
    return not (kinds and event_kinds and not set(kinds) & set(event_kinds))


@dataclass(frozen=True, slots=True)
class Audience:
    """Whose events an endpoint takes: everyone's, or those of some followed authors.

    Built when an event is published, from the endpoint's ``authors`` and
    ``groups`` and the groups' members as they are then: a group changed a
    moment ago routes the next event.
    """

    # The name keys of the authors taken; None: every author's events.
    keys: frozenset[str] | None

    @classmethod
    def of(
        cls,
        authors: Collection[str],
        groups: Collection[str],
        members: Mapping[str, Collection[str]],
    ) -> Audience:
        """The audience of an endpoint routing by ``authors`` and ``groups``, where
        ``members`` holds each group's member names (a group it lacks has none)."""
        if not authors and not groups:
            return cls(None)
        named = [*authors, *(m for g in groups for m in members.get(g, ()))]
        return cls(frozenset(name_key(name) for name in named))

    def takes(self, event_authors: Collection[str]) -> bool:
        """Whether an event of these followed authors goes to the endpoint: when one of them
        is taken.  However many are, the event goes once (one delivery per endpoint)."""
        if self.keys is None:
            return True
        return any(name_key(name) in self.keys for name in event_authors)
