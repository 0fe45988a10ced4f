"""A department to read groups over: authors, their papers and a dated story of changes.

Written through ``Storage`` as cycles write them (``apply_cycle``), then each
event dated where the story puts it (the clock of a cycle is now).  Names,
titles and co-authorship are as a department's are: accents and other
scripts, long titles, papers shared by two followed colleagues.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from syncd.domain.authors import Author
from syncd.domain.model import NewRevision, PaperWrite, SyncStats
from syncd.domain.vocabulary import AuthorOrigin, EventType, Origin, PaperStatus
from syncd.storage import Storage
from syncd.storage.schema import events_table, papers_table
from tests.fakearxiv import make_record

FIRST = (
    "Zoë", "Łukasz", "Søren", "José", "Chloé", "Wei", "Priya", "Oluwaseun", "Ингрид", "Mateo",
    "Aiko", "Björn", "Fatima", "Guðrún", "Hiroshi", "Isabel", "Jan", "Kateřina", "Liam", "Marta",
)  # fmt: skip
LAST = (
    "Müller", "Nowak", "García-Márquez", "Zhang", "Okafor", "Kowalczyk", "Dubois", "Van der Berg",
    "Nakamura", "Rossi", "Andersson", "Petrov", "Ó Súilleabháin", "Chen", "Haddad", "Iyer",
    "Johansson", "Kim", "Lindqvist", "Moreau",
)  # fmt: skip
TOPICS = (
    "sparse attention",
    "graph neural networks",
    "quantum error correction",
    "causal inference",
    "protein folding",
    "federated learning",
    "the Navier\u2013Stokes equations",
    "diffusion models",
    "topological data analysis",
    "Bayesian optimisation",
)
# The day the story starts; each paper's changes follow on later days.
START = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


def names(count: int) -> list[str]:
    """``count`` distinct names (at most 400), first names varying fastest."""
    return [f"{FIRST[i % len(FIRST)]} {LAST[(i // len(FIRST)) % len(LAST)]}" for i in range(count)]


@dataclass(frozen=True)
class Change:
    """One event of the story: whose, which paper, what, on which day after ``START``."""

    author: str
    arxiv_id: str
    type: EventType
    day: int
    version: int = 1
    withdrawn: bool = False


@dataclass
class Department:
    """What was written: the authors, each paper's followed authors, the story's events."""

    authors: list[str]
    papers: dict[str, list[str]] = field(default_factory=dict)
    story: list[Change] = field(default_factory=list)


def title_of(number: int) -> str:
    topic = TOPICS[number % len(TOPICS)]
    if number % 7 == 0:  # a long title, as some are
        return (
            f"Towards a unified, scalable and provably robust framework for {topic} under "
            "distribution shift, adversarial noise and limited supervision: theory, "
            "algorithms and large-scale empirical evaluation"
        )
    return f"On {topic}: a study of case {number}"


def build(storage: Storage, count: int, papers_each: int = 2) -> Department:
    """``count`` run-time authors, ``papers_each`` papers of each, every fifth paper shared
    with the next author; then versions and withdrawals on later days."""
    people = names(count)
    storage.authors.put([Author(name, AuthorOrigin.RUNTIME) for name in people])
    department = Department(people)
    number = 0
    for index, name in enumerate(people):
        for _ in range(papers_each):
            number += 1
            arxiv_id = f"2603.{number:05d}"
            owners = [name]
            if number % 5 == 0 and index + 1 < len(people):
                owners.append(people[index + 1])
            department.papers[arxiv_id] = owners
    for arxiv_id, owners in department.papers.items():
        number = int(arxiv_id[5:])
        for owner in owners:
            department.story.append(Change(owner, arxiv_id, EventType.ADDED, number % 60))
        if number % 3 == 0:
            day = number % 60 + 20
            for owner in owners:
                department.story.append(Change(owner, arxiv_id, EventType.REVISED, day, 2))
        if number % 11 == 0:
            day = number % 60 + 40
            for owner in owners:
                department.story.append(Change(owner, arxiv_id, EventType.REVISED, day, 3, True))
    write_story(storage, department)
    return department


def write_story(storage: Storage, department: Department) -> None:
    """Each change of the story as a cycle of its author writes it, dated on its day."""
    for change in sorted(department.story, key=lambda c: (c.day, c.author, c.arxiv_id)):
        write_change(storage, department, change)


def write_change(storage: Storage, department: Department, change: Change) -> None:
    owners = department.papers[change.arxiv_id]
    record = make_record(
        change.arxiv_id,
        change.version,
        title=title_of(int(change.arxiv_id[5:])),
        authors=(*owners, "Ada Coauthor"),
        withdrawn=change.withdrawn,
    )
    write = PaperWrite(
        key=change.arxiv_id,
        arxiv_id=change.arxiv_id,
        status=PaperStatus.TRACKED,
        origin=Origin.ARXIV,
        revisions=(NewRevision(record, "api"),),
        event_type=change.type,
    )
    if change.type == EventType.REVISED:
        state = storage.papers.states(change.author, [change.arxiv_id])[change.arxiv_id]
        kinds = ("version", "withdrawn") if change.withdrawn else ("version",)
        moved = {"version": {"old": change.version - 1, "new": change.version}}
        write = replace(
            write,
            paper_id=state.id,
            read_hash=state.record_hash,
            event_kinds=kinds,
            event_changes=moved,
        )
    run_id = storage.runs.start(change.author)
    assert run_id is not None
    events = storage.apply_cycle(run_id, change.author, [write], SyncStats())
    _date(storage, [e.seq for e in events], START + timedelta(days=change.day))


def _date(storage: Storage, seqs: Sequence[int], when: datetime) -> None:
    """Date the events ``seqs`` ``when``, and their papers' latest change with them (the
    story is written in its order, so a paper's last write is its latest change)."""
    e, p = events_table, papers_table
    with storage.db.transaction() as conn:
        conn.execute(e.update().where(e.c.seq.in_(seqs)).values(created_at=when))
        changed = sa.select(e.c.paper_id).where(e.c.seq.in_(seqs))
        conn.execute(p.update().where(p.c.id.in_(changed)).values(changed_at=when))


def day(number: int) -> datetime:
    return START + timedelta(days=number)


def count_events(storage: Storage) -> int:
    with storage.db.transaction() as conn:
        return int(conn.scalar(sa.select(sa.func.count()).select_from(events_table)) or 0)
