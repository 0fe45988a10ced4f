"""The cycle-grouped endpoints reliability runs add, and the accounting of their digests.

Beside the standard per-event endpoint, the torture and the soak deliver to
a standard endpoint grouped by cycle (signed ``cycle.digest`` messages under
``dig_`` ids) and to a Slack endpoint (grouped by cycle, its default;
unsigned, no id on the wire).  Counted per endpoint against the database:

* every event is carried by exactly one digest of the endpoint (else lost,
  or doubled under distinct ids);
* every digest was received at least once with a 2xx (else its events are
  lost), and every 2xx receipt is a digest the database holds, carrying the
  events the database says (else false).  The signed endpoint is matched by
  ``webhook-id`` and the event ids in the body; the Slack endpoint, whose
  messages carry no id, by the exact body rendered from the digest's events
  (digests that render alike must be received as often as there are of them).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

import sqlalchemy as sa

from syncd.delivery.messages import message_body
from syncd.domain.model import Event
from syncd.domain.vocabulary import DeliveryFormat
from syncd.storage import Storage
from syncd.storage.schema import deliveries_table, digest_events_table, endpoints_table
from tests.chatreceiver import SlackReceiver
from tests.receiver import Received, Receiver

__all__ = ["DigestEndpoints", "DigestTally", "digest_endpoints"]

DIGEST_HOOK = "reliability-digest"
SLACK_HOOK = "reliability-slack"


@dataclass
class DigestTally:
    """How one cycle-grouped endpoint's digests fared."""

    endpoint: str
    digests: int = 0  # digests the database holds for it
    received: int = 0  # distinct digests received with a 2xx
    redelivered: int = 0  # further 2xx receipts of a digest already received
    lost: list[str] = field(default_factory=list)  # event ids no received digest carries
    doubled: list[str] = field(default_factory=list)  # event ids in two digests
    false: list[str] = field(default_factory=list)  # receipts matching no digest


@dataclass
class DigestEndpoints:
    """The receivers of the cycle-grouped endpoints, and their ``[[webhooks]]`` tables."""

    signed: Receiver
    slack: SlackReceiver
    secret: str

    @property
    def hooks(self) -> dict[str, dict[str, object]]:
        return {
            DIGEST_HOOK: {"url": self.signed.url, "secret": self.secret, "group": "cycle"},
            SLACK_HOOK: {"url": self.slack.url, "format": "slack", "timeout": 5.0},
        }

    def tally(self, url: str) -> list[DigestTally]:
        """Tally both endpoints' receipts against the database at ``url``."""
        storage = Storage(url)
        try:
            events = {event.seq: event for event in storage.events.since()}
            with storage.db.transaction() as conn:
                digests = _digests(conn)
        finally:
            storage.close()
        return [
            _tally(DIGEST_HOOK, events, digests.get(DIGEST_HOOK, {}), self.signed, signed=True),
            _tally(SLACK_HOOK, events, digests.get(SLACK_HOOK, {}), self.slack, signed=False),
        ]


@contextmanager
def digest_endpoints(secret: str) -> Iterator[DigestEndpoints]:
    """Receivers for a signed cycle-grouped endpoint and a Slack one, running."""
    with ExitStack() as stack:
        signed = stack.enter_context(Receiver([secret]))
        slack = stack.enter_context(SlackReceiver())
        yield DigestEndpoints(signed, slack, secret)


def _digests(conn: sa.Connection) -> dict[str, dict[str, list[int]]]:
    """endpoint name -> digest id -> the seqs of the events it carries, in order."""
    d, c, e = deliveries_table, digest_events_table, endpoints_table
    query = (
        sa.select(e.c.name, d.c.digest_id, c.c.event_seq)
        .join(d, d.c.endpoint_id == e.c.id)
        .join(c, c.c.delivery_id == d.c.id)
        .order_by(c.c.event_seq)
    )
    found: dict[str, dict[str, list[int]]] = {}
    for row in conn.execute(query):
        found.setdefault(row.name, {}).setdefault(row.digest_id, []).append(row.event_seq)
    return found


def _wire_key(received: Received, *, signed: bool) -> object:
    """What a receipt is recognised by: a signed digest's id and the ids of the events it
    carries; a Slack message's exact body."""
    if not signed:
        return received.body
    data = (received.json or {}).get("data") or {}
    carried = tuple(event.get("id", "") for event in data.get("events") or ())
    return received.msg_id or "", carried


def _tally(
    endpoint: str,
    events: Mapping[int, Event],
    digests: Mapping[str, list[int]],
    receiver: Receiver,
    *,
    signed: bool,
) -> DigestTally:
    tally = DigestTally(endpoint, digests=len(digests))
    carriers = Counter(seq for seqs in digests.values() for seq in seqs)
    tally.doubled = sorted(events[seq].id for seq, n in carriers.items() if n > 1)
    # What each digest looks like on the wire, to recognise its receipts by.  Two Slack
    # digests may look alike (the same change to the same paper, cycles apart): a look
    # shared by k digests counts as delivered once received k times.
    looks: dict[object, list[str]] = {}
    for digest_id, seqs in digests.items():
        carried = [events[seq] for seq in seqs]
        if signed:
            key: object = (digest_id, tuple(event.id for event in carried))
        else:
            key = message_body(DeliveryFormat.SLACK, carried, public_url=None)
        looks.setdefault(key, []).append(digest_id)
    good = [r for r in receiver.received if r.verified and 200 <= r.status_sent < 300]
    seen = Counter(_wire_key(r, signed=signed) for r in good)
    tally.false = sorted(str(key) for key in seen if key not in looks)
    received = [
        digest_id for key, alike in looks.items() if seen[key] >= len(alike) for digest_id in alike
    ]
    tally.received = len(received)
    tally.redelivered = sum(max(seen[key] - len(alike), 0) for key, alike in looks.items())
    delivered = {seq for digest_id in received for seq in digests[digest_id]}
    tally.lost = sorted(event.id for seq, event in events.items() if seq not in delivered)
    return tally
