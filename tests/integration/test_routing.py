"""Routing by person and group (issue 32), through the real CLI, to chat receivers.

Three followed authors, two groups that share one of them, two chat targets
routed by group and one routed by author: each target gets exactly the events
of its own people, in its own digests, and a group changed at run time routes
the next events without a restart.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack

import pytest
import sqlalchemy as sa

from syncd.storage.schema import (
    authors_table,
    deliveries_table,
    digest_events_table,
    endpoints_table,
    events_table,
)
from tests.chatreceiver import DiscordReceiver, SlackReceiver
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import make_record
from tests.integration.conftest import Syncd
from tests.receiver import Receiver

ADA, BOB, CY = "Ada Lovelace", "Bob Kahn", "Cy Young"
# Each author's own papers: a word of its title says whose it is.
PAPERS = {ADA: "2601.10001", BOB: "2601.10002", CY: "2601.10003"}
LATER = {ADA: "2601.20001", BOB: "2601.20002", CY: "2601.20003"}
# lab-a and lab-b share Bob; "cy" follows one person.
AUDIENCE = {"lab-a": {ADA, BOB}, "lab-b": {BOB, CY}, "cy": {CY}}


def _title(author: str, arxiv_id: str) -> str:
    return f"Paper {arxiv_id} of {author}"


def _publish(syncd: Syncd, papers: dict[str, str]) -> None:
    for author, arxiv_id in papers.items():
        syncd.arxiv.publish(
            make_record(arxiv_id, title=_title(author, arxiv_id), authors=(author, "Q. Other"))
        )


def _config(slack: Receiver, discord: Receiver, cy: Receiver) -> str:
    """Three authors, two groups sharing Bob, two chat targets by group, one by author."""
    authors = "".join(f'[[authors]]\nname = "{name}"\n\n' for name in (ADA, BOB, CY))
    routes = {
        "lab-a": 'groups = ["lab a"]',
        "lab-b": 'groups = ["lab b"]',
        "cy": f'authors = ["{CY.lower()}"]',  # any spelling of a followed author's name
    }
    return f"""
{authors}
[[groups]]
name = "lab a"
members = ["{ADA}", "{BOB}"]
description = "Ada's lab"

[[groups]]
name = "lab b"
members = ["{BOB}", "{CY}"]

[delivery]
retry_schedule = [0.05]
sync_wait = 10
poll_interval = 0.05

[[webhooks]]
name = "lab-a"
url = "{slack.url}"
format = "slack"
{routes["lab-a"]}

[[webhooks]]
name = "lab-b"
url = "{discord.url}"
format = "discord"
{routes["lab-b"]}

[[webhooks]]
name = "cy"
url = "{cy.url}"
format = "slack"
{routes["cy"]}
"""


@pytest.fixture
def receivers() -> Iterator[dict[str, Receiver]]:
    with ExitStack() as running:
        yield {
            "lab-a": running.enter_context(SlackReceiver()),
            "lab-b": running.enter_context(DiscordReceiver()),
            "cy": running.enter_context(SlackReceiver()),
        }


def _delivered(syncd: Syncd) -> dict[str, list[tuple[str, str, int]]]:
    """Per endpoint, each digest's events as (type, author), and how many digests carry
    each event: what the outbox routed."""
    d, de, e, a, ep = (
        deliveries_table,
        digest_events_table,
        events_table,
        authors_table,
        endpoints_table,
    )
    query = (
        sa.select(ep.c.name, d.c.id, e.c.type, a.c.name.label("author"))
        .select_from(d.join(ep, ep.c.id == d.c.endpoint_id).join(de, de.c.delivery_id == d.c.id))
        .join(e, e.c.seq == de.c.event_seq)
        .join(a, a.c.id == e.c.author_id)
        .order_by(d.c.id, e.c.seq)
    )
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.connect() as conn:
            found: dict[str, list[tuple[str, str, int]]] = {name: [] for name in AUDIENCE}
            for row in conn.execute(query):
                found[row.name].append((row.type, row.author, row.id))
            return found
    finally:
        engine.dispose()


def _message_texts(receiver: Receiver) -> list[str]:
    """Every message the receiver accepted, as the JSON text it was sent."""
    assert all(r.verified for r in receiver.received), [r.error for r in receiver.received]
    return [json.dumps(json.loads(r.body), ensure_ascii=False) for r in receiver.received]


def _check_each_target(syncd: Syncd, receivers: dict[str, Receiver], papers: dict[str, str]):
    """Each target got exactly its people's events, each once, and messages naming exactly
    their papers, one digest per cycle of one of its people."""
    delivered = _delivered(syncd)
    for target, people in AUDIENCE.items():
        routed = delivered[target]
        assert {author for _, author, _ in routed} == people, target
        authored = [(t, a) for t, a, _ in routed]
        assert len(authored) == len(set(authored)), f"{target} got an event twice"
        digests = {digest for _, _, digest in routed}
        texts = _message_texts(receivers[target])
        assert len(texts) == len(digests), target
        mentioned = {a for a, i in papers.items() for text in texts if _title(a, i) in text}
        assert mentioned == people, target


@ON_BOTH_DATABASES
def test_each_target_receives_exactly_its_peoples_events_and_digests(
    syncd: Syncd, receivers: dict[str, Receiver]
) -> None:
    """A first sync's author.added and a later sync's paper.added reach each target only for
    its people; Bob, in both groups, reaches both group targets once each."""
    syncd.author_table = False
    syncd.sections = _config(*receivers.values())
    _publish(syncd, PAPERS)
    first = syncd("sync")
    assert first.code == 0, first.err
    added = _delivered(syncd)
    for target, people in AUDIENCE.items():
        assert sorted(a for t, a, _ in added[target] if t == "author.added") == sorted(people)
    _publish(syncd, LATER)
    second = syncd("sync")
    assert second.code == 0, second.err
    _check_each_target(syncd, receivers, LATER)
    delivered = _delivered(syncd)
    for target, people in AUDIENCE.items():
        papers = sorted(a for t, a, _ in delivered[target] if t == "paper.added")
        assert papers == sorted(people), target


@ON_BOTH_DATABASES
def test_a_group_changed_at_run_time_routes_the_next_events(
    syncd: Syncd, receivers: dict[str, Receiver]
) -> None:
    """Groups made with `syncd groups`: a member added is routed from the next event on."""
    syncd.author_table = False
    config = _config(*receivers.values())
    # The group targets route by run-time groups instead of the file's.
    syncd.sections = config.split("[[groups]]")[0] + "[delivery]" + config.split("[delivery]")[1]
    syncd.sections = syncd.sections.replace('"lab a"', '"team"').replace('"lab b"', '"crew"')
    assert syncd("groups", "add", "team", ADA).code == 0
    assert syncd("groups", "add", "crew", CY).code == 0
    _publish(syncd, PAPERS)
    assert syncd("sync").code == 0
    assert syncd("groups", "members", "team", "--add", BOB).code == 0
    _publish(syncd, LATER)
    assert syncd("sync").code == 0
    delivered = _delivered(syncd)
    papers = {t: sorted(a for k, a, _ in delivered[t] if k == "paper.added") for t in AUDIENCE}
    assert papers == {"lab-a": [ADA, BOB], "lab-b": [CY], "cy": [CY]}
    firsts = {t: sorted(a for k, a, _ in delivered[t] if k == "author.added") for t in AUDIENCE}
    assert firsts == {"lab-a": [ADA], "lab-b": [CY], "cy": [CY]}
