"""re-read the stored records as arXiv means them: one record per version (data only)

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-03 15:00:00

Issue 29: syncd now reads every format of arXiv as the API reads it
(``syncd.domain.canonical``).  Records stored before were read otherwise:
harvested ones (arXivRaw) and feed-read ones carry TeX as submitted
(``Pl\\"otz``), feed-read ones ``+00:00`` times and, from ``.atom2``, one
author named "A, B, C", and both list both names of an alias category pair.
Compared with a fresh reading of the same version, each would publish a
false ``paper.revised``.  This re-reads every stored arXiv record, papers
and revisions, with the readers' own function, and recomputes its
``record_hash``: a paper's record and its current revision stay one.

The function and the hash are syncd's current code, imported rather than
copied: the rows must equal what this syncd reads, whichever
version runs the migration.  Seed records are left as the pages showed them;
events as they were announced.  What cannot be re-read from a record alone
(an arXivRaw author string split by the older rules) is left to the
comparison, which takes the same names read two ways as no change
(``same_names``), and to the next reading, which stores them canonically.

Downgrading keeps the records: an older syncd reads and hashes them alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from syncd.domain.canonical import canonical, split_joined_names
from syncd.domain.record import Record, content_hash

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
_TABLES = tuple(
    sa.table(
        name,
        sa.column("id", sa.Integer),
        sa.column("record", _JSON),
        sa.column("record_hash", sa.String),
    )
    for name in ("papers", "revisions")
)
_CHUNK = 2000
_JOINED = ", "


def upgrade() -> None:
    bind = op.get_bind()
    for table in _TABLES:
        last = 0
        while True:
            rows = bind.execute(
                sa.select(table.c.id, table.c.record)
                .where(table.c.id > last)
                .order_by(table.c.id)
                .limit(_CHUNK)
            ).all()
            if not rows:
                break
            last = rows[-1].id
            _rewrite(bind, table, [(row.id, _reread(row.record)) for row in rows])


def downgrade() -> None:
    pass  # canonical records are records every syncd reads; nothing to undo


def _reread(stored: dict[str, Any]) -> dict[str, Any] | None:
    """A stored record as this syncd reads that version; None when it already is so.

    A record with one author whose name holds ", " was read from ``.atom2``,
    which joins every author in one <name>: no other format gives a name
    holding ", " but before a joined suffix ("Heath, Jr."), which the split
    keeps.  Keys this syncd does not know are kept.
    """
    record = Record.from_dict(stored)
    if record.is_seed:
        return None
    read = record
    if len(record.authors) == 1 and _JOINED in record.authors[0]:
        read = replace(record, authors=split_joined_names(record.authors[0]))
    read = canonical(read)
    return None if read == record else stored | read.to_dict()


def _rewrite(
    bind: sa.Connection, table: sa.TableClause, rows: list[tuple[int, dict[str, Any] | None]]
) -> None:
    """Store each re-read record with the hash this syncd computes for it."""
    params = [
        {"row_id": row_id, "new_record": record, "new_hash": content_hash(Record.from_dict(record))}
        for row_id, record in rows
        if record is not None
    ]
    if params:
        bind.execute(
            sa.update(table)
            .where(table.c.id == sa.bindparam("row_id"))
            .values(
                record=sa.bindparam("new_record", type_=_JSON), record_hash=sa.bindparam("new_hash")
            ),
            params,
        )
