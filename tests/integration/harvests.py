"""The harvest tests' shared day: a syncd set to harvest, the day's changes, what it told.

``story`` makes one day of every kind of change on the fake arXiv; the
harvest and the API cycle must tell it alike.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from tests.fakearxiv import FakeArxiv, make_record
from tests.integration.conftest import Syncd
from tests.scenario import AUTHOR, FEDCG, FLEXMARL, FLOWTRAIN, LORA, NESTPIPE, OXYGEN

DAY = date(2026, 7, 1)
NEW_PAPER = "2607.00001"
NAMESAKES_PAPER = "2607.00002"


def harvesting(syncd: Syncd) -> Syncd:
    """``syncd`` with ``[harvest]`` pointed at its fake arXiv's OAI-PMH endpoint."""
    syncd.sections += f'\n[harvest]\nurl = "{syncd.arxiv.oai_url}"\n'
    return syncd


def story(arxiv: FakeArxiv) -> None:
    """One day of changes: every kind of change, a withdrawal, a new paper, a namesake's."""
    arxiv.oai.today = DAY
    arxiv.revise(NESTPIPE, title="NestPipe: Nested Pipelining at Scale")
    arxiv.revise(NESTPIPE, abstract="A shorter abstract for the third version.")
    current = arxiv.current(FLOWTRAIN).authors
    arxiv.revise(FLOWTRAIN, authors=(current[1], current[0], *current[2:]))
    arxiv.revise(LORA, abstract="We revisit low-rank adapters for sparse experts.")
    arxiv.amend(FEDCG, journal_ref="IEEE Trans. Parallel Distrib. Syst. 34 (2023)")
    arxiv.amend(OXYGEN, doi="10.1145/1234567.1234568")
    arxiv.withdraw(FLEXMARL, "an error in the main theorem")
    arxiv.publish(
        make_record(
            NEW_PAPER, authors=(AUTHOR, "Yang Xu"), primary_category="cs.DC", categories=["cs.DC"]
        )
    )
    arxiv.publish(
        make_record(
            NAMESAKES_PAPER,
            authors=(AUTHOR, "Marie Curie"),
            primary_category="physics.chem-ph",
            categories=["physics.chem-ph"],
        )
    )


def told(syncd: Syncd, after: int) -> list[tuple[Any, ...]]:
    """The events after the first ``after``: type, paper ("" for an author's), kinds and
    old/new values."""
    return sorted(
        (
            e["type"],
            (e["paper"] or {}).get("arxiv_id", ""),
            tuple(e["kinds"]),
            json.dumps(e["changes"], sort_keys=True),
        )
        for e in syncd.json("events")[after:]
    )
