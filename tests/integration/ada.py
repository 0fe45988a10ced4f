"""Ada Lovelace, the author the run-time author tests follow: her papers, following her, her page.

Her papers share no co-author and no category, so nothing tells her from a
namesake and each is held as a candidate; ``follow_ada`` also gives her
identifiers and follows a name full of markup beside her.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa

from syncd.storage.schema import paper_authors_table, papers_table
from tests.fakearxiv import FakeArxiv, make_record
from tests.integration.conftest import Syncd, sync_ok

ADA = "Ada Lovelace"
ADMIN_TOKEN = "operator-token-kept-out-of-every-log"
# Ada's papers share no co-author and no category: nothing tells her from a namesake,
# so each is held as a candidate.
ADA_PAPERS = {
    "2602.10001": ("Charles Babbage", "math.NT"),
    "2602.10002": ("Mary Somerville", "astro-ph.SR"),
    "2602.10003": ("Augustus De Morgan", "math.LO"),
}
GOOD_ORCID = "0000-0002-1825-0097"
ARXIV_ID = "lovelace_a_1"
# Markup for the pages to escape (a double quote is in no name: it would end au:"...").
HOSTILE_NAME = "<b>Eve</b> & 'Mallory'"
HOSTILE_REASON = "shares <i>nothing</i> & more"


def publish_ada(arxiv: FakeArxiv) -> None:
    for arxiv_id, (coauthor, category) in ADA_PAPERS.items():
        arxiv.publish(
            make_record(
                arxiv_id,
                title=f"A note by {ADA} and {coauthor}",
                authors=(ADA, coauthor),
                primary_category=category,
                categories=(category,),
            )
        )


def authors(syncd: Syncd) -> dict[str, dict[str, Any]]:
    return {a["name"]: a for a in syncd.json("authors", "list")}


def write_csv(path: Path, rows: list[str]) -> Path:
    path.write_text("name,orcid,arxiv_author_id,query\n" + "\n".join(rows) + "\n", "utf-8")
    return path


def set_reason(syncd: Syncd, arxiv_id: str, reason: str | None) -> None:
    engine = sa.create_engine(syncd.database_url)
    try:
        with engine.begin() as conn:
            t, p = paper_authors_table, papers_table
            theirs = sa.select(p.c.id).where(p.c.arxiv_id == arxiv_id)
            conn.execute(t.update().where(t.c.paper_id.in_(theirs)).values(candidate_reason=reason))
    finally:
        engine.dispose()


def follow_ada(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """Ada followed and synced (her papers held as candidates), then given her identifiers."""
    publish_ada(arxiv)
    assert syncd("authors", "add", ADA).code == 0
    sync_ok(syncd)
    identified = syncd("authors", "add", ADA, "--orcid", GOOD_ORCID, "--arxiv-author-id", ARXIV_ID)
    assert identified.code == 0, identified.err
    assert syncd("authors", "add", HOSTILE_NAME).code == 0
    set_reason(syncd, "2602.10001", HOSTILE_REASON)
    set_reason(syncd, "2602.10002", None)


def page_of(name: str) -> str:
    return "/authors/" + quote(name, safe="")
