"""Newly published events into the log and the outbox: their rows, and their deliveries.

Every writer of events (a cycle's ``publish``, a publication lookup's
``publish_planned``) inserts them with ``insert_events`` and queues them with
``queue_deliveries``, inside its own transaction: an event is never without
its deliveries, and every event is routed by the same rules (the endpoint's
types and kinds, its authors and groups, digests for endpoints grouped by cycle).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.model import Event
from syncd.domain.routing import Audience, accepts
from syncd.domain.vocabulary import DeliveryFormat, DeliveryGroup, DeliveryStatus
from syncd.storage.database import among, chunks
from syncd.storage.groups import members_by_group
from syncd.storage.paper_index import mark_changed
from syncd.storage.schema import (
    deliveries_table,
    digest_events_table,
    endpoints_table,
    events_table,
)

__all__ = [
    "DIGEST_MAX_BYTES",
    "active_endpoints",
    "audiences",
    "delivery_row",
    "insert_events",
    "queue_deliveries",
    "takes",
]

# The largest body of a standard digest: a cycle's digest is split, in
# order, into as many digests (each its own message) as keep every body
# under it, for receivers that cap bodies (nginx's default is 1 MiB).
DIGEST_MAX_BYTES = 1024 * 1024
# What a body holds besides its events' share: the envelope, with room to spare.
_DIGEST_ENVELOPE_BYTES = 1024
# An event's share besides its strings and record: field names, its id,
# seq, type and time, as syncd.domain.views.event_json writes them (about 200).
_EVENT_FRAME_BYTES = 256


def insert_events(conn: Connection, event_rows: Sequence[dict[str, Any]]) -> list[int]:
    """Insert events rows (every column but ``id`` and ``seq``), each under a new id; return
    their seqs in order.  The ids are in the rows afterwards (``row["id"]``)."""
    # One random part per batch and a counter: uuid4 per event costs a
    # system call each, and 96 random bits already make ids unique.
    prefix = uuid.uuid4().hex[:24]
    for number, row in enumerate(event_rows):
        row["id"] = f"evt_{prefix}{number:08x}"
    conn.execute(events_table.insert(), list(event_rows))
    changed: dict[int, datetime] = {}
    for row in event_rows:
        changed[row["paper_id"]] = max(
            row["created_at"], changed.get(row["paper_id"], row["created_at"])
        )
    mark_changed(conn, changed, revisions=False)
    return _event_seqs(conn, [row["id"] for row in event_rows])


def _event_seqs(conn: Connection, event_ids: Sequence[str]) -> list[int]:
    """The seqs of events just inserted, in the order of ``event_ids``."""
    seqs: dict[str, int] = {}
    for chunk in chunks(event_ids):
        query = sa.select(events_table.c.id, events_table.c.seq).where(
            among(conn, events_table.c.id, chunk)
        )
        seqs |= {row.id: row.seq for row in conn.execute(query)}
    return [seqs[event_id] for event_id in event_ids]


def active_endpoints(conn: Connection) -> list[Any]:
    """The endpoints deliveries are queued for: active and not disabled."""
    return list(
        conn.execute(
            sa.select(endpoints_table).where(
                endpoints_table.c.active.is_(True), endpoints_table.c.disabled_at.is_(None)
            )
        ).all()
    )


def audiences(conn: Connection, endpoints: Sequence[Any]) -> dict[int, Audience]:
    """Each endpoint's audience by its id, from its groups' members as they are now (one
    query for every endpoint's groups)."""
    members = members_by_group(conn, {g for endpoint in endpoints for g in endpoint.groups})
    return {e.id: Audience.of(e.authors, e.groups, members) for e in endpoints}


def takes(
    endpoint: Any,
    audience: Audience,
    event_type: str,
    kinds: Sequence[str],
    names: Collection[str],
) -> bool:
    """Whether ``endpoint`` (an endpoints row) takes an event of this type and kinds naming
    these followed authors: its filters accept it and its ``audience`` takes one of them."""
    return accepts(endpoint.events, endpoint.kinds, event_type, kinds) and audience.takes(names)


def queue_deliveries(
    conn: Connection, published: Sequence[tuple[Event, int]], *, when: datetime
) -> None:
    """One delivery row per event and accepting endpoint grouped by event, and one digest
    per endpoint grouped by cycle carrying every event of ``published`` it accepts
    (several, in order, for a standard endpoint whose digest would outgrow DIGEST_MAX_BYTES).

    ``published``: each event just inserted with its paper's id.  An endpoint
    routed by authors or groups takes an event when one of the followed
    authors it names (``Event.names``) is its.
    """
    endpoints = active_endpoints(conn)
    audience = audiences(conn, endpoints)
    delivery_rows: list[dict[str, Any]] = []
    digests: list[tuple[dict[str, Any], list[int]]] = []
    sizes: dict[int, int] = {}

    def size(item: tuple[Event, int]) -> int:
        # Once per event, however many endpoints take it.
        event, _ = item
        if event.seq not in sizes:
            sizes[event.seq] = _digest_share(event)
        return sizes[event.seq]

    for endpoint in endpoints:
        taken = [
            (event, paper_id)
            for event, paper_id in published
            if takes(endpoint, audience[endpoint.id], event.type, event.kinds, event.names)
        ]
        if not taken:
            continue
        if endpoint.grouping != DeliveryGroup.CYCLE:
            delivery_rows += [delivery_row(endpoint.id, p, e.seq, when) for e, p in taken]
            continue
        # Chat messages list what fits their platform's limits and say how many more.
        standard = endpoint.format == DeliveryFormat.STANDARD
        for part in _digest_parts(taken, size) if standard else [taken]:
            first, first_paper = part[0]
            # The digest stands in the queue where its first event would.
            digest = delivery_row(endpoint.id, first_paper, first.seq, when)
            digests.append(
                (digest | {"digest_id": f"dig_{uuid.uuid4().hex}"}, [e.seq for e, _ in part])
            )
    if delivery_rows:
        conn.execute(deliveries_table.insert(), delivery_rows)
    if digests:
        _queue_digests(conn, digests)


def _digest_parts(
    taken: Sequence[tuple[Event, int]], size: Callable[[tuple[Event, int]], int]
) -> list[list[tuple[Event, int]]]:
    """``taken`` cut, in order, into runs whose digest body stays under DIGEST_MAX_BYTES
    (an event too large for any digest goes alone)."""
    parts: list[list[tuple[Event, int]]] = []
    room = 0
    for item in taken:
        share = size(item)
        if not parts or share > room:
            parts.append([])
            room = DIGEST_MAX_BYTES - _DIGEST_ENVELOPE_BYTES
        parts[-1].append(item)
        room -= share
    return parts


def _digest_share(event: Event) -> int:
    """How many bytes ``event`` adds to a standard digest's body, at most."""
    shown = event.record.to_dict() if event.record is not None else None
    # The strings and structures of syncd.domain.views.event_json, encoded as the payload is.
    carried: list[Any] = [event.author, event.names, event.paper_key, event.arxiv_id]
    carried += [event.kinds, event.changes, shown]
    text = json.dumps(carried, ensure_ascii=False, separators=(",", ":"), default=dict)
    return len(text.encode("utf-8")) + _EVENT_FRAME_BYTES


def delivery_row(endpoint_id: int, paper_id: int, seq: int, when: datetime) -> dict[str, Any]:
    """A pending delivery of the event ``seq`` to an endpoint, due ``when``."""
    return {
        "event_seq": seq,
        "endpoint_id": endpoint_id,
        "paper_id": paper_id,
        "status": DeliveryStatus.PENDING,
        "attempts": 0,
        "next_attempt_at": when,
        "created_at": when,
        "digest_id": None,
    }


def _queue_digests(conn: Connection, digests: Sequence[tuple[dict[str, Any], list[int]]]) -> None:
    """Insert the digests' delivery rows and the list of events each carries."""
    d = deliveries_table
    inserted = conn.execute(
        d.insert().returning(d.c.id, sort_by_parameter_order=True),
        [row for row, _ in digests],
    ).scalars()
    carried = [
        {"delivery_id": delivery_id, "event_seq": seq}
        for delivery_id, (_, seqs) in zip(inserted, digests, strict=True)
        for seq in seqs
    ]
    conn.execute(digest_events_table.insert(), carried)
