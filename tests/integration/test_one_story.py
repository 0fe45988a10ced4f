"""One story per paper (issue 32): a paper of two followed authors is one record and one
stream of events naming both, delivered once per target and listed once in the feed."""

from __future__ import annotations

from collections import Counter

from lxml import etree

from syncd.domain.vocabulary import EventType
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import ATOM_NS, make_record
from tests.helpers import WEBHOOK_SECRET, StartReceiver
from tests.integration.conftest import Syncd, revise_nestpipe, serving, sync_ok
from tests.integration.harvests import DAY, NEW_PAPER, harvesting
from tests.receiver import Receiver
from tests.scenario import AUTHOR, FLOWTRAIN, NESTPIPE

pytestmark = ON_BOTH_DATABASES

# NestPipe's and FlowTrain's second author, followed beside the seeded one.
COAUTHOR = "Zhaolong Xing"
BOTH = sorted([AUTHOR, COAUTHOR])


def _follow_both(
    syncd: Syncd, lab: Receiver, library: Receiver, routes: tuple[str, str] | None = None
) -> None:
    """Both authors in the file, and two webhook targets taking every event, or with
    ``routes`` each one author's (``authors = [...]``)."""
    syncd.extra = f'\n[[authors]]\nname = "{COAUTHOR}"\n'
    wanted = [f'authors = ["{name}"]\n' for name in routes] if routes else ["", ""]
    targets = "".join(
        f'\n[[webhooks]]\nname = "{name}"\nurl = "{receiver.url}"\ntimeout = 2\n'
        f'secret = "{WEBHOOK_SECRET}"\n{route}'
        for (name, receiver), route in zip(
            (("lab", lab), ("library", library)), wanted, strict=True
        )
    )
    syncd.sections = (
        "\n[delivery]\nretry_schedule = [0.05, 0.05]\nsync_wait = 10\npoll_interval = 0.05\n"
        + targets
    )


def _events_of(syncd: Syncd, arxiv_id: str) -> list[dict[str, object]]:
    return [e for e in syncd.json("events") if (e.get("paper") or {}).get("arxiv_id") == arxiv_id]


def _feed_entries(syncd: Syncd) -> list[tuple[str, list[str]]]:
    """The events feed's entries: each one's id and the authors it names."""
    with serving(syncd) as site:
        response = site.get("/feeds/events.atom")
    assert response.status_code == 200
    feed = etree.fromstring(response.content)
    return [
        (
            entry.findtext(f"{{{ATOM_NS}}}id") or "",
            [a.findtext(f"{{{ATOM_NS}}}name") or "" for a in entry.findall(f"{{{ATOM_NS}}}author")],
        )
        for entry in feed.findall(f"{{{ATOM_NS}}}entry")
    ]


def test_a_new_version_is_one_event_naming_both_delivered_once_per_target(
    syncd: Syncd, receiver_for: StartReceiver
) -> None:
    """NestPipe v2, seen by both authors' queries: one ``paper.revised`` naming both,
    one delivery to each target with the same webhook-id, one entry in the feed."""
    lab, library = receiver_for(WEBHOOK_SECRET), receiver_for(WEBHOOK_SECRET)
    _follow_both(syncd, lab, library)
    sync_ok(syncd)
    papers = [p for p in syncd.json("papers") if p["arxiv_id"] == NESTPIPE]
    assert len(papers) == 1  # one story, whoever found it
    assert papers[0]["followed_authors"] == BOTH
    # The seeded author's seed of it joined the story the other's cycle may have begun.
    assert any(h["version"] is None for h in syncd.json("history", NESTPIPE))
    delivered_before = {r.msg_id for r in lab.delivered}

    revise_nestpipe(syncd.arxiv)
    sync_ok(syncd)

    revised = [e for e in _events_of(syncd, NESTPIPE) if e["type"] == EventType.REVISED]
    assert len(revised) == 1
    (event,) = revised
    assert event["authors"] == BOTH
    for target in (lab, library):
        fresh = [r for r in target.delivered if r.msg_id not in delivered_before]
        assert [r.msg_id for r in fresh] == [event["id"]]
        assert fresh[0].verified
        assert fresh[0].json["data"]["authors"] == BOTH
    entries = [names for tag, names in _feed_entries(syncd) if tag.endswith(str(event["id"]))]
    assert entries == [BOTH]
    # The paper is listed once, under each author as theirs.
    assert [p["arxiv_id"] for p in syncd.json("papers")].count(NESTPIPE) == 1
    for name in BOTH:
        theirs = [p for p in syncd.json("papers", "--author", name) if p["arxiv_id"] == NESTPIPE]
        assert [p["author"] for p in theirs] == [name]


def _joint_paper(syncd: Syncd, arxiv_id: str) -> None:
    """A new paper of both authors, in their field."""
    flowtrain = syncd.arxiv.current(FLOWTRAIN)
    syncd.arxiv.publish(
        make_record(
            arxiv_id,
            title="Pipelines all the way down",
            authors=(AUTHOR, COAUTHOR, "Huichao Chai"),
            primary_category=flowtrain.primary_category or "cs.LG",
            categories=flowtrain.categories,
        )
    )


def _added_once(syncd: Syncd, arxiv_id: str, *targets: Receiver) -> dict[str, object]:
    """The one event about ``arxiv_id``, a ``paper.added``, delivered once to each target."""
    (added,) = _events_of(syncd, arxiv_id)
    assert added["type"] == EventType.ADDED
    for target in targets:
        assert Counter(r.msg_id for r in target.delivered)[str(added["id"])] == 1
    (paper,) = [p for p in syncd.json("papers") if p["arxiv_id"] == arxiv_id]
    assert paper["followed_authors"] == BOTH
    return added


def test_a_new_paper_of_both_harvested_is_one_story_naming_both(
    syncd: Syncd, receiver_for: StartReceiver
) -> None:
    """A harvested record both authors hold is one story, one ``paper.added`` naming both."""
    lab, library = receiver_for(WEBHOOK_SECRET), receiver_for(WEBHOOK_SECRET)
    _follow_both(syncd, lab, library)
    harvesting(syncd)
    sync_ok(syncd)
    syncd.arxiv.oai.today = DAY
    _joint_paper(syncd, NEW_PAPER)
    outcome = syncd("harvest", "--from", DAY.isoformat())
    assert outcome.code == 0, outcome.err
    added = _added_once(syncd, NEW_PAPER, lab, library)
    assert added["authors"] == BOTH


def test_a_new_paper_of_both_synced_is_added_once_to_each_ones_target(
    syncd: Syncd, receiver_for: StartReceiver
) -> None:
    """Found by both authors' cycles of one sync, each storing on its own: one story, one
    ``paper.added``; the second cycle adds its author's name to it, and the target routed
    by that author receives it too, once."""
    lab, library = receiver_for(WEBHOOK_SECRET), receiver_for(WEBHOOK_SECRET)
    _follow_both(syncd, lab, library, routes=(AUTHOR, COAUTHOR))
    sync_ok(syncd)
    _joint_paper(syncd, NEW_PAPER)
    sync_ok(syncd)
    added = _added_once(syncd, NEW_PAPER, lab, library)
    assert added["authors"] == BOTH
    for target in (lab, library):
        (delivery,) = [r for r in target.delivered if r.msg_id == added["id"]]
        assert delivery.verified


def test_an_author_arriving_on_a_known_paper_adds_a_name(
    syncd: Syncd, receiver_for: StartReceiver
) -> None:
    """The co-author followed after NestPipe is known: no second story, no event about the
    paper, and its next change names both."""
    lab, library = receiver_for(WEBHOOK_SECRET), receiver_for(WEBHOOK_SECRET)
    _follow_both(syncd, lab, library)
    extra = syncd.extra
    syncd.extra = ""
    sync_ok(syncd)
    before = _events_of(syncd, NESTPIPE)
    assert [p["followed_authors"] for p in syncd.json("papers") if p["arxiv_id"] == NESTPIPE] == [
        [AUTHOR]
    ]
    syncd.extra = extra
    sync_ok(syncd)
    assert _events_of(syncd, NESTPIPE) == before  # a name added is not a story
    (paper,) = [p for p in syncd.json("papers") if p["arxiv_id"] == NESTPIPE]
    assert paper["followed_authors"] == BOTH
    revise_nestpipe(syncd.arxiv)
    sync_ok(syncd)
    revised = [e for e in _events_of(syncd, NESTPIPE) if e["type"] == EventType.REVISED]
    assert [e["authors"] for e in revised] == [BOTH]


def test_purging_an_author_keeps_the_papers_others_hold(syncd: Syncd) -> None:
    """``authors purge`` deletes an author no longer followed and the paper only they held,
    with its history and events; the papers they shared stay, with their events."""
    solo = "2607.00077"
    syncd.arxiv.publish(make_record(solo, authors=(COAUTHOR, "Huichao Chai")))
    assert syncd("authors", "add", COAUTHOR).code == 0
    sync_ok(syncd)
    shared_events = _events_of(syncd, NESTPIPE)
    assert _events_of(syncd, solo) or solo in {p["arxiv_id"] for p in syncd.json("papers")}
    refused = syncd("authors", "purge", COAUTHOR, "--yes")
    assert refused.code == 2
    assert "is followed" in refused.err
    assert syncd("authors", "remove", COAUTHOR).code == 0
    unasked = syncd("authors", "purge", COAUTHOR)  # no terminal to ask on
    assert unasked.code == 2
    assert "--yes" in unasked.err
    assert COAUTHOR in {a["name"] for a in syncd.json("authors", "list")}
    purged = syncd("authors", "purge", COAUTHOR, "--yes")
    assert purged.code == 0, purged.err
    assert "1 paper deleted" in purged.out
    assert COAUTHOR not in {a["name"] for a in syncd.json("authors", "list")}
    papers = {p["arxiv_id"]: p for p in syncd.json("papers")}
    assert solo not in papers
    assert papers[NESTPIPE]["followed_authors"] == [AUTHOR]
    assert _events_of(syncd, NESTPIPE) == shared_events
    assert _events_of(syncd, solo) == []
    assert syncd("history", solo).code == 2
