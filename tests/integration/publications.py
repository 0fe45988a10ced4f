"""Issue 33's acceptance tests share this: syncd with ``[publications]`` on, pointed at the
fake Crossref (and OpenAlex) on loopback, a verifying webhook receiver, and papers of the
seeded author that arrive after its baseline, announced, as a real sync finds them."""

from __future__ import annotations

import ipaddress
import socket
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from syncd.domain.vocabulary import EventType
from syncd.storage.schema import (
    deliveries_table,
    papers_table,
    publication_links_table,
    publication_notices_table,
)
from tests.fakearxiv import make_record
from tests.fakecrossref import FakeCrossref
from tests.fakeopenalex import FakeOpenAlex
from tests.helpers import WEBHOOK_SECRET
from tests.integration.conftest import Outcome, Syncd, sync_ok
from tests.receiver import Receiver
from tests.scenario import AUTHOR, FLOWTRAIN

# The admin token of the operators' routes (``/api/v1/publications``).
ADMIN_TOKEN = "publications-admin-token-0123456789"
OPENALEX_KEY = "openalex-test-key"
PUBLICATION_TYPES = frozenset(
    {EventType.PUBLISHED, EventType.PUBLICATION_CHANGED, EventType.CORRECTED, EventType.RETRACTED}
)
COAUTHORS = ("Maren Holt", "Ilya Sorokin", "Beatriz Campos")


def publications_table(
    crossref: FakeCrossref,
    openalex: FakeOpenAlex | None = None,
    *,
    key: str | None = None,
) -> str:
    """``[publications]`` on, at the fakes; OpenAlex's key only when ``key`` is given."""
    lines = [
        "[publications]",
        "enabled = true",
        f'crossref_url = "{crossref.url}"',
        "crossref_interval = 0",
        "interval = 60",
        "timeout = 2",
    ]
    if openalex is not None:
        lines += [f'openalex_url = "{openalex.url}"', "openalex_interval = 0"]
    if key is not None:
        lines.append(f'openalex_key = "{key}"')
    return "\n" + "\n".join(lines) + "\n"


def webhook_table(receiver: Receiver) -> str:
    """One webhook target taking every event, delivered before a CLI command returns."""
    return (
        "\n[delivery]\nretry_schedule = [0.05, 0.05]\nsync_wait = 10\npoll_interval = 0.05\n"
        f'\n[[webhooks]]\nname = "lab"\nurl = "{receiver.url}"\ntimeout = 2\n'
        f'secret = "{WEBHOOK_SECRET}"\n'
    )


def configure(
    syncd: Syncd,
    crossref: FakeCrossref,
    receiver: Receiver,
    openalex: FakeOpenAlex | None = None,
    *,
    key: str | None = None,
    admin: bool = False,
) -> None:
    """Publications on, at the fakes, one webhook target; the admin token with ``admin``."""
    syncd.sections = publications_table(crossref, openalex, key=key) + webhook_table(receiver)
    if admin:
        syncd.sections += f'\n[http]\nadmin_token = "{ADMIN_TOKEN}"\n'


def new_paper(syncd: Syncd, arxiv_id: str, title: str, **fields: Any) -> None:
    """A new paper of the seeded author on the fake arXiv, in the field of its others
    (``fields``: ``doi``, ``journal_ref``...)."""
    flowtrain = syncd.arxiv.current(FLOWTRAIN)
    syncd.arxiv.publish(
        make_record(
            arxiv_id,
            title=title,
            authors=(AUTHOR, *COAUTHORS),
            primary_category=flowtrain.primary_category or "cs.LG",
            categories=flowtrain.categories,
            **fields,
        )
    )


def arrive(syncd: Syncd, papers: dict[str, str], **fields: Any) -> None:
    """The author's baseline synced, then ``papers`` (arXiv id: title) published and
    synced: each one comes in announced (``paper.added``), due its first lookup."""
    sync_ok(syncd)
    for arxiv_id, title in papers.items():
        new_paper(syncd, arxiv_id, title, **fields)
    sync_ok(syncd)
    added = {e["paper"]["arxiv_id"] for e in events(syncd) if e["type"] == EventType.ADDED}
    assert set(papers) <= added


def published_year(syncd: Syncd, arxiv_id: str) -> int:
    """The year of the paper's first version as the fake arXiv serves it: the year a
    bibliographic search is centred on."""
    published = syncd.arxiv.current(arxiv_id).published
    assert published is not None
    return int(published[:4])


def check(syncd: Syncd, *arxiv_ids: str) -> Outcome:
    """``syncd publications check [ID...]``, delivering what it announced."""
    return syncd("publications", "check", *arxiv_ids)


def check_ok(syncd: Syncd, *arxiv_ids: str) -> Outcome:
    outcome = check(syncd, *arxiv_ids)
    assert outcome.code == 0, outcome.err
    return outcome


def events(syncd: Syncd) -> list[dict[str, Any]]:
    """Every stored event, as ``syncd events --json`` lists them."""
    return list(syncd.json("events"))


def publication_events(syncd: Syncd, arxiv_id: str | None = None) -> list[dict[str, Any]]:
    """The stored publication events (of one paper, with ``arxiv_id``), oldest first."""
    return [
        e
        for e in events(syncd)
        if e["type"] in PUBLICATION_TYPES
        and (arxiv_id is None or (e.get("paper") or {}).get("arxiv_id") == arxiv_id)
    ]


def the_publication(syncd: Syncd, arxiv_id: str) -> dict[str, Any]:
    """The one publication event of ``arxiv_id``, a ``paper.published``: its publication."""
    (event,) = publication_events(syncd, arxiv_id)
    assert event["type"] == EventType.PUBLISHED
    publication: dict[str, Any] = event["changes"]["publication"]
    return publication


def delivered_once(receiver: Receiver, syncd: Syncd, arxiv_id: str) -> None:
    """Each publication event of ``arxiv_id`` reached the receiver, verified, exactly once;
    no other publication event of the paper did."""
    stored = publication_events(syncd, arxiv_id)
    assert stored
    counts = Counter(r.msg_id for r in receiver.delivered if r.verified)
    for event in stored:
        assert counts[str(event["id"])] == 1, event
    about = [
        r
        for r in receiver.delivered
        if r.json is not None
        and r.json.get("type") in PUBLICATION_TYPES
        and ((r.json.get("data") or {}).get("paper") or {}).get("arxiv_id") == arxiv_id
    ]
    assert sorted(str(r.msg_id) for r in about) == sorted(str(e["id"]) for e in stored)


def links(syncd: Syncd) -> dict[str, list[dict[str, Any]]]:
    """The stored publication links by arXiv id (doi, state, how, level), as found."""
    link, paper = publication_links_table, papers_table
    query = (
        sa.select(paper.c.arxiv_id, link.c.doi, link.c.state, link.c.how, link.c.level)
        .join(paper, paper.c.id == link.c.paper_id)
        .order_by(link.c.id)
    )
    engine = sa.create_engine(syncd.database_url)
    found: dict[str, list[dict[str, Any]]] = {}
    try:
        with engine.connect() as conn:
            for row in conn.execute(query):
                values = {"doi": row.doi, "state": row.state, "how": row.how, "level": row.level}
                found.setdefault(row.arxiv_id, []).append(values)
    finally:
        engine.dispose()
    return found


def notices_recorded(syncd: Syncd) -> int:
    """How many notices the store holds."""
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.connect() as conn:
            count = sa.select(sa.func.count()).select_from(publication_notices_table)
            return int(conn.scalar(count) or 0)
    finally:
        engine.dispose()


def link_filters(crossref: FakeCrossref) -> list[set[str]]:
    """The ``relation.object`` values of each link request Crossref received."""
    return [
        {
            clause.partition(":")[2]
            for clause in (request.param("filter") or "").split(",")
            if clause.startswith("relation.object:")
        }
        for request in crossref.requests_of("link")
    ]


def asked_about(crossref: FakeCrossref, arxiv_id: str) -> list[str]:
    """The kinds of Crossref request that named ``arxiv_id`` (its id or title aside)."""
    return [
        request.kind
        for request in crossref.requests
        if any(arxiv_id in value for values in request.query.values() for value in values)
    ]


@pytest.fixture
def crossref() -> Iterator[FakeCrossref]:
    """A fake Crossref on loopback, knowing nothing until a test publishes works in it."""
    with FakeCrossref() as fake:
        yield fake


@pytest.fixture
def openalex() -> Iterator[FakeOpenAlex]:
    """A fake OpenAlex on loopback answering requests that carry ``OPENALEX_KEY``."""
    with FakeOpenAlex(key=OPENALEX_KEY) as fake:
        yield fake


def delivery_recorded(syncd: Syncd, arxiv_id: str) -> bool:
    """Whether the store records every delivery of the paper's publication events as done."""
    stored = [int(e["seq"]) for e in publication_events(syncd, arxiv_id)]
    d = deliveries_table
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.connect() as conn:
            query = sa.select(d.c.delivered_at).where(d.c.event_seq.in_(stored))
            done = list(conn.scalars(query))
    finally:
        engine.dispose()
    return bool(stored) and bool(done) and all(when is not None for when in done)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name, not an address
        return host == "localhost"


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Every connection this process opens during the test goes to loopback: any other is
    refused and named when the test ends (subprocesses run the same config, at the fakes)."""
    elsewhere: list[object] = []
    connect = socket.socket.connect

    def checked(sock: socket.socket, address: Any) -> None:
        host = address[0] if isinstance(address, tuple) else None  # else a Unix socket
        if host is not None and not _is_loopback(host):
            elsewhere.append(address)
            raise ConnectionRefusedError(f"not loopback: {address!r}")
        connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", checked)
    yield elsewhere
    assert elsewhere == [], f"connections beyond loopback: {elsewhere}"
