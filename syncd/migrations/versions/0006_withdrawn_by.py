"""name who withdrew the withdrawn versions already stored (data only)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 09:00:00

Records gained ``withdrawn_by`` (issue 15).  A row stored before lacks the
key and reads as None, and ``content_hash`` hashes the field only when it is
set, so every stored row not marked withdrawn already agrees with a fresh
entry, hash and all.  A row marked withdrawn would not: a fresh entry names
who withdrew, and the difference would publish an event on an unchanged
arXiv.  This fills ``withdrawn_by`` on those rows, papers and revisions,
from their own abstract and comment, and recomputes their ``record_hash``.

The hash is ``content_hash`` as it stood at this revision, frozen here
(``_record_hash``): a migration writes what it wrote the day it was made,
and a later change to the hash brings a migration of its own.  The
withdrawal rules are still imported from syncd.

A row the rules no longer call withdrawn (a false alarm of the old word
match) is left as it is: the next sync reports ``withdrawn`` back to false,
which a lab told of the withdrawal needs to hear.  A row marked withdrawn
whose notice names no one keeps None, as a fresh parse would.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from syncd.domain.withdrawal import detect_withdrawal

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
# The record's hashed fields at this revision, in order, each with its shape;
# withdrawn_by joins them only when set.
_HASHED = (
    ("arxiv_id", "text"),
    ("version", "number"),
    ("title", "text"),
    ("abstract", "text"),
    ("authors", "names"),
    ("authors_complete", "flag"),
    ("primary_category", "text"),
    ("categories", "set"),
    ("comment", "text"),
    ("journal_ref", "text"),
    ("doi", "text"),
    ("withdrawn", "flag"),
)
_TABLES = tuple(
    sa.table(
        name,
        sa.column("id", sa.Integer),
        sa.column("record", _JSON),
        sa.column("record_hash", sa.String),
    )
    for name in ("papers", "revisions")
)


def upgrade() -> None:
    bind = op.get_bind()
    for table in _TABLES:
        withdrawn = table.c.record["withdrawn"].as_boolean().is_(True)
        rows = bind.execute(sa.select(table.c.id, table.c.record).where(withdrawn)).all()
        _rewrite(bind, table, [(row.id, _named(row.record)) for row in rows])


def downgrade() -> None:
    # syncd before 0005 cannot read a record holding withdrawn_by at all
    # (Record.from_dict refuses unknown keys), so every row loses the key.
    bind = op.get_bind()
    for table in _TABLES:
        rows = bind.execute(sa.select(table.c.id, table.c.record)).all()
        _rewrite(bind, table, [(row.id, _unnamed(row.record)) for row in rows])


def _named(record: dict[str, Any]) -> dict[str, Any] | None:
    """The stored record with who withdrew it filled in; None when it stays as it is."""
    if "withdrawn_by" in record:
        return None
    verdict = detect_withdrawal(record.get("abstract"), record.get("comment"))
    if not verdict.withdrawn or verdict.by is None:
        return None
    return {**record, "withdrawn_by": verdict.by}


def _unnamed(record: dict[str, Any]) -> dict[str, Any] | None:
    if "withdrawn_by" not in record:
        return None
    return {name: value for name, value in record.items() if name != "withdrawn_by"}


def _rewrite(
    bind: sa.Connection, table: sa.TableClause, rows: list[tuple[int, dict[str, Any] | None]]
) -> None:
    """Store each changed record with its hash."""
    params = [
        {"row_id": row_id, "new_record": record, "new_hash": _record_hash(record)}
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


def _record_hash(record: dict[str, Any]) -> str:
    """A stored record's ``content_hash`` as syncd computed it at this revision.

    Fields joined with NUL, list items with RS; a missing key reads as the
    record's default (no text, no names, not set).
    """
    parts = [_encoded(shape, record.get(name)) for name, shape in _HASHED]
    if record.get("withdrawn_by") is not None:
        parts.append(record["withdrawn_by"])
    return hashlib.blake2b("\x00".join(parts).encode(), digest_size=16).hexdigest()


def _encoded(shape: str, value: Any) -> str:
    if shape == "text":
        return value or ""
    if shape == "number":
        return str(value)
    if shape == "names":
        return "\x1e".join(value or ())
    if shape == "set":
        return "\x1e".join(sorted(value or ()))
    return "1" if value else "0"
