"""one story per paper: papers once, each author's hold on one in paper_authors

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-04 15:40:00

Issue 32: a paper of two followed authors was two rows, each with its own
revisions and events, so one change was announced twice.  A paper is now one
row (``key`` and ``arxiv_id`` unique); what was per author (status, origin,
absences, claim, a candidate's reason) moves to ``paper_authors``, one row
per author holding it.  Events gain ``authors``, the followed authors who
held the paper when it was published.

Rows duplicated across authors (the same arXiv id; for seed papers not
linked, the same key) merge into the oldest: each old row becomes its
author's tie; the paper's record is the most recent (highest version, then
latest observed); the others' revisions move over unless the history
already holds their record (those are folded, and the events that pointed
at them point at the one kept); the history is renumbered by time observed.
Events and deliveries move to the kept row.  Nothing is queued: an upgrade
announces nothing.

Downgrade gives each tie its row again: the oldest tie keeps the paper, every
other author gets a copy with its history, and their events and deliveries.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
_TIME = sa.DateTime(timezone=True)
# What moved from papers to paper_authors, as 0021 had it.
_TIE_COLUMNS = ("status", "origin", "absent_syncs", "claimed", "candidate_reason")
_STORY_COLUMNS = (
    "id",
    "key",
    "arxiv_id",
    "record",
    "record_hash",
    "backfill_pending",
    "created_at",
    "updated_at",
)

_OLD_PAPERS = sa.table(
    "papers",
    *(sa.column(c) for c in ("id", "author_id", "key", "arxiv_id", "record_hash")),
    *(sa.column(c) for c in ("backfill_pending", *_TIE_COLUMNS)),
    sa.column("record", _JSON),
    sa.column("created_at", _TIME),
    sa.column("updated_at", _TIME),
)
_TIES = sa.table(
    "paper_authors",
    *(sa.column(c) for c in ("paper_id", "author_id", *_TIE_COLUMNS)),
    sa.column("created_at", _TIME),
    sa.column("updated_at", _TIME),
)
_REVISIONS = sa.table(
    "revisions",
    *(sa.column(c) for c in ("id", "paper_id", "seq", "source", "version", "record_hash")),
    *(sa.column(c) for c in ("sync_run_id",)),
    sa.column("kinds", _JSON),
    sa.column("changes", _JSON),
    sa.column("record", _JSON),
    sa.column("observed_at", _TIME),
    sa.column("version_date", _TIME),
)
_EVENTS = sa.table(
    "events",
    *(sa.column(c) for c in ("seq", "paper_id", "revision_id", "author_id")),
    sa.column("authors", _JSON),
)
_DELIVERIES = sa.table("deliveries", sa.column("event_seq"), sa.column("paper_id"))
_AUTHORS = sa.table("authors", sa.column("id"), sa.column("name"))


def _tie_columns() -> list[sa.Column[Any]]:
    return [
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("origin", sa.String(8), nullable=False),
        sa.Column("absent_syncs", sa.Integer, nullable=False),
        sa.Column("claimed", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("candidate_reason", sa.String(500)),
    ]


def _story_columns() -> list[Any]:
    return [
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("key", sa.String(120), nullable=False),
        sa.Column("arxiv_id", sa.String(40)),
        sa.Column("record", _JSON, nullable=False),
        sa.Column("record_hash", sa.String(32), nullable=False),
        sa.Column("backfill_pending", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("created_at", _TIME, nullable=False),
        sa.Column("updated_at", _TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_papers"),
    ]


def upgrade() -> None:
    bind = op.get_bind()
    _open_transaction(bind)
    op.create_table(
        "paper_authors",
        sa.Column("paper_id", sa.Integer, nullable=False),
        sa.Column("author_id", sa.Integer, nullable=False),
        *_tie_columns(),
        sa.Column("created_at", _TIME, nullable=False),
        sa.Column("updated_at", _TIME, nullable=False),
        sa.ForeignKeyConstraint(
            ["author_id"], ["authors.id"], name="fk_paper_authors_author_id_authors"
        ),
        sa.ForeignKeyConstraint(
            ["paper_id"], ["papers.id"], name="fk_paper_authors_paper_id_papers"
        ),
        sa.PrimaryKeyConstraint("paper_id", "author_id", name="pk_paper_authors"),
    )
    op.create_index("ix_paper_authors_author_status", "paper_authors", ["author_id", "status"])
    op.add_column("events", sa.Column("authors", _JSON, nullable=False, server_default="[]"))
    _merge(bind)
    _name_event_authors(bind)
    if bind.dialect.name == "postgresql":
        for column in ("author_id", *_TIE_COLUMNS):
            op.drop_column("papers", column)  # its constraints go with it
        op.create_unique_constraint("uq_papers_key", "papers", ["key"])
        op.create_unique_constraint("uq_papers_arxiv_id", "papers", ["arxiv_id"])
    else:
        _rebuild_on_sqlite(
            bind,
            [
                *_story_columns(),
                sa.UniqueConstraint("key", name="uq_papers_key"),
                sa.UniqueConstraint("arxiv_id", name="uq_papers_arxiv_id"),
            ],
            _STORY_COLUMNS,
        )


def _open_transaction(bind: Connection) -> None:
    """Make sure the migration runs in one transaction: SQLite's driver opens one only at
    the first write, and the table rebuild below must not commit half done."""
    bind.execute(sa.text("UPDATE papers SET id = id WHERE 1 = 0"))


def _merge(bind: Connection) -> None:
    """Every old row becomes its author's tie on the story it merges into."""
    rows = bind.execute(sa.select(_OLD_PAPERS).order_by(_OLD_PAPERS.c.id)).all()
    last_seen = dict(
        bind.execute(
            sa.select(_REVISIONS.c.paper_id, sa.func.max(_REVISIONS.c.observed_at)).group_by(
                _REVISIONS.c.paper_id
            )
        ).all()
    )
    ties: dict[tuple[int, int], dict[str, Any]] = {}
    keys: set[str] = set()
    for group in _groups(rows):
        survivor = group[0]
        for row in group:
            tie = {c: getattr(row, c) for c in ("author_id", *_TIE_COLUMNS)}
            tie |= {"paper_id": survivor.id, "created_at": row.created_at}
            tie["updated_at"] = row.updated_at
            held = ties.get((survivor.id, row.author_id))
            # One author with two rows of one story (a seed and its paper): the better hold.
            if held is None or _rank(row.status) < _rank(held["status"]):
                ties[(survivor.id, row.author_id)] = tie
        if len(group) > 1:
            _fold(bind, survivor, group, last_seen)
        _name_story(bind, survivor, group, keys)
    if ties:
        bind.execute(_TIES.insert(), list(ties.values()))


def _name_story(bind: Connection, survivor: Any, group: Sequence[Any], keys: set[str]) -> None:
    """The story's key (its oldest row's, unless an earlier story has it: then its arXiv
    id) and arXiv id (any of its rows')."""
    arxiv_id = next((row.arxiv_id for row in group if row.arxiv_id is not None), None)
    key = survivor.key if survivor.key not in keys or arxiv_id is None else arxiv_id
    keys.add(key)
    if (key, arxiv_id) != (survivor.key, survivor.arxiv_id):
        p = _OLD_PAPERS
        values = {"key": key, "arxiv_id": arxiv_id}
        bind.execute(p.update().where(p.c.id == survivor.id).values(values))


def _rank(status: str) -> int:
    order = ("tracked", "candidate", "unlinked", "removed")
    return order.index(status) if status in order else len(order)


def _groups(rows: Sequence[Any]) -> list[list[Any]]:
    """The rows of each story, oldest first: one arXiv id is one story, and a seed paper not
    linked joins the story of its key.  Stories whose keys would clash (one seed key linked
    to two papers) keep their arXiv id as key."""
    by_story: dict[str, list[Any]] = defaultdict(list)
    story_of_key: dict[str, str] = {}
    for row in rows:
        if row.arxiv_id is not None:
            story = f"arxiv:{row.arxiv_id}"
            by_story[story].append(row)
            story_of_key.setdefault(row.key, story)
    for row in rows:
        if row.arxiv_id is None:
            by_story[story_of_key.setdefault(row.key, f"key:{row.key}")].append(row)
    return [sorted(group, key=lambda r: r.id) for group in by_story.values()]


def _fold(bind: Connection, survivor: Any, group: Sequence[Any], last_seen: dict[int, Any]) -> None:
    """Merge the rows of ``group`` into ``survivor``'s: record, history, events, deliveries."""
    others = [row.id for row in group[1:]]
    latest = max(
        group,
        key=lambda r: (r.record.get("version") or 0, _utc(last_seen.get(r.id)), -r.id),
    )
    r = _REVISIONS
    revisions = bind.execute(
        sa.select(r.c.id, r.c.paper_id, r.c.seq, r.c.record_hash, r.c.observed_at)
        .where(r.c.paper_id.in_([row.id for row in group]))
        .order_by(r.c.paper_id != survivor.id, r.c.paper_id, r.c.seq)
    ).all()
    kept: dict[str, int] = {}  # record hash -> the revision kept with it
    moved: list[Any] = []
    folded: dict[int, int] = {}
    for revision_row in revisions:
        first = kept.get(revision_row.record_hash)
        if revision_row.paper_id == survivor.id or first is None:
            kept.setdefault(revision_row.record_hash, revision_row.id)
            moved.append(revision_row)
        else:
            folded[revision_row.id] = first
    e = _EVENTS
    for gone, first in folded.items():
        bind.execute(e.update().where(e.c.revision_id == gone).values(revision_id=first))
    if folded:
        bind.execute(r.delete().where(r.c.id.in_(list(folded))))
    # Renumbered by time observed; first out of the way of the (paper_id, seq) key.
    for row in moved:
        bind.execute(r.update().where(r.c.id == row.id).values(seq=-row.id, paper_id=survivor.id))
    ordered = sorted(moved, key=lambda row: (_utc(row.observed_at), row.paper_id, row.seq))
    for seq, row in enumerate(ordered, start=1):
        bind.execute(r.update().where(r.c.id == row.id).values(seq=seq))
    bind.execute(e.update().where(e.c.paper_id.in_(others)).values(paper_id=survivor.id))
    d = _DELIVERIES
    bind.execute(d.update().where(d.c.paper_id.in_(others)).values(paper_id=survivor.id))
    p = _OLD_PAPERS
    bind.execute(
        p.update()
        .where(p.c.id == survivor.id)
        .values(
            record=latest.record,
            record_hash=latest.record_hash,
            backfill_pending=any(row.backfill_pending for row in group),
        )
    )
    bind.execute(p.delete().where(p.c.id.in_(others)))


def _utc(value: datetime | None) -> datetime:
    if value is None:
        return datetime.min.replace(tzinfo=UTC)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _name_event_authors(bind: Connection) -> None:
    """An event published before names the author whose row it was about."""
    e = _EVENTS
    for author_id, name in bind.execute(sa.select(_AUTHORS.c.id, _AUTHORS.c.name)).all():
        bind.execute(e.update().where(e.c.author_id == author_id).values(authors=[name]))


def _rebuild_on_sqlite(bind: Connection, shape: Sequence[Any], copied: Sequence[str]) -> None:
    """Give SQLite's ``papers`` a new shape, its rows' ``copied`` columns kept.

    SQLite drops no constrained column, so the table is built anew.  The
    tables that point at papers must keep pointing at it: the new table is
    created empty and renamed into place, and rows go in once it is there;
    the references the drop leaves dangling are deferred until the rows
    are back (``defer_foreign_keys`` counts them back down as each comes).
    """
    bind.execute(sa.text("PRAGMA defer_foreign_keys = ON"))
    bind.execute(sa.text("CREATE TABLE papers_0022 AS SELECT * FROM papers"))
    op.drop_index("ix_papers_backfill_pending", "papers")
    op.create_table("papers_new", *shape)
    op.drop_table("papers")
    op.rename_table("papers_new", "papers")
    names = ", ".join(copied)
    bind.execute(sa.text(f"INSERT INTO papers ({names}) SELECT {names} FROM papers_0022"))
    op.drop_table("papers_0022")
    op.create_index("ix_papers_backfill_pending", "papers", ["backfill_pending"])
    bind.execute(sa.text("PRAGMA defer_foreign_keys = OFF"))


def downgrade() -> None:
    bind = op.get_bind()
    _open_transaction(bind)
    if bind.dialect.name == "postgresql":
        op.drop_constraint("uq_papers_key", "papers")
        op.drop_constraint("uq_papers_arxiv_id", "papers")
        op.add_column("papers", sa.Column("author_id", sa.Integer))
        for added in _tie_columns():
            added.nullable = True
            op.add_column("papers", added)
    else:
        old_shape: list[Any] = [
            *_story_columns(),
            sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id")),
            *_tie_columns(),
            sa.UniqueConstraint("author_id", "key", name="uq_papers_author_id_key"),
            sa.UniqueConstraint("author_id", "arxiv_id", name="uq_papers_author_id_arxiv_id"),
        ]
        for item in old_shape:
            if isinstance(item, sa.Column) and item.name in ("author_id", *_TIE_COLUMNS):
                item.nullable = True
        _rebuild_on_sqlite(bind, old_shape, _STORY_COLUMNS)
    _split(bind)
    if bind.dialect.name == "postgresql":
        for column in ("author_id", "status", "origin", "absent_syncs", "claimed"):
            op.alter_column("papers", column, nullable=False)
        op.create_foreign_key(
            "fk_papers_author_id_authors", "papers", "authors", ["author_id"], ["id"]
        )
        op.create_unique_constraint("uq_papers_author_id_key", "papers", ["author_id", "key"])
        op.create_unique_constraint(
            "uq_papers_author_id_arxiv_id", "papers", ["author_id", "arxiv_id"]
        )
    op.drop_column("events", "authors")
    op.drop_index("ix_paper_authors_author_status", "paper_authors")
    op.drop_table("paper_authors")


def _split(bind: Connection) -> None:
    """Each tie its row again: the oldest keeps the paper, the others get a copy."""
    t, p, r, e, d = _TIES, _OLD_PAPERS, _REVISIONS, _EVENTS, _DELIVERIES
    ties = bind.execute(sa.select(t).order_by(t.c.paper_id, t.c.created_at, t.c.author_id)).all()
    by_paper: dict[int, list[Any]] = defaultdict(list)
    for tie in ties:
        by_paper[tie.paper_id].append(tie)
    next_id = int(bind.scalar(sa.select(sa.func.max(p.c.id))) or 0) + 1
    for paper_id, held in by_paper.items():
        first, *rest = held
        bind.execute(p.update().where(p.c.id == paper_id).values(_tie_values(first)))
        if not rest:
            continue
        story = bind.execute(sa.select(p).where(p.c.id == paper_id)).one()
        history = bind.execute(sa.select(r).where(r.c.paper_id == paper_id)).all()
        for tie in rest:
            copy = {c: getattr(story, c) for c in _STORY_COLUMNS} | _tie_values(tie)
            bind.execute(p.insert().values(copy | {"id": next_id}))
            for row in history:
                values = {c: getattr(row, c) for c in row._fields if c != "id"}
                bind.execute(r.insert().values(values | {"paper_id": next_id}))
            mine = sa.and_(e.c.paper_id == paper_id, e.c.author_id == tie.author_id)
            seqs = sa.select(e.c.seq).where(mine).scalar_subquery()
            bind.execute(d.update().where(d.c.event_seq.in_(seqs)).values(paper_id=next_id))
            bind.execute(e.update().where(mine).values(paper_id=next_id))
            next_id += 1


def _tie_values(tie: Any) -> dict[str, Any]:
    return {c: getattr(tie, c) for c in ("author_id", *_TIE_COLUMNS)}
