"""one author per name without regard to case: ``authors.name_key``

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-08 09:00:00

Issue 29: names are data.  A name is kept in its normal form (NFC, spaces
collapsed) and is one author without regard to case: "Jane Smith", "jane
smith" and "JANE  SMITH" are one, and a unique index on ``name_key`` (the
folded name, ``syncd.domain.author_names.name_key``) keeps it so.  Names, keys and
the rules are syncd's current code, imported rather than copied, so the
rows equal what this syncd writes.

A database written before may break these rules, and this migration cannot
ask anyone, so it decides; it never deletes a row, a paper, a revision or
an event, and every author it stops following is logged
(``author_no_longer_followed``, with the author's id, name and reason) and
shown by ``syncd authors list`` as no longer followed, its papers, history
and events kept:

- A name with surplus spaces or in another Unicode form is rewritten in its
  normal form: the same author, spelled as it is now checked.
- Names that are one without regard to case keep one author: the earliest
  followed (spelled in normal form first), else the earliest.  The others
  are no longer followed and keep their name but no key, so the name is
  free for the one author it now means.  Each such author already had its
  own papers and history, found by the same query; keeping one followed
  stops the tripled events and loses nothing, where failing the migration
  would leave an operator with no command that repairs it.  In the one case
  where the kept author's normal spelling is the exact name of one stopped
  (``Jane  Smith`` followed, ``Jane Smith`` removed long ago), the stopped
  one is renamed ``<name> (duplicate #<id>)``, so no two rows share a name.
- A name no author may have now (a quote, a parenthesis, a colon, an
  operator word, an invisible or control character: what could widen or
  break a batched query) is no longer followed and has no key: syncd cannot
  query it safely and will not guess what was meant.  Add the author again
  under a name it accepts.
- A custom query that is not whole (unpaired quotes or parentheses, control
  characters) stops its author the same way, keeping its key: ``syncd
  authors add NAME --query ...`` (or the fixed config file) follows it again
  with its history.

An ``[[authors]]`` table breaking a rule stops syncd at start (exit 2,
naming the key) before this runs: fix the file, then start again.

Downgrading drops the key; names rewritten and authors stopped stay as they
are, which the previous syncd reads.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

import sqlalchemy as sa
import structlog
from alembic import op

from syncd.domain.author_names import MAX_NAME_CHARS, check_name, check_query, name_key

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_log = structlog.get_logger(__name__)
_AUTHORS = sa.table(
    "authors",
    sa.column("id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("name_key", sa.String),
    sa.column("query", sa.String),
    sa.column("removed_at", sa.DateTime(timezone=True)),
)


class _Change(NamedTuple):
    """What becomes of one author row: its name, its key, and why it stops being followed."""

    id: int
    old_name: str
    name: str
    key: str | None
    stop: str | None  # None: followed as before (or not followed before either)


def upgrade() -> None:
    # Plain ADD COLUMN and CREATE INDEX: a batch rebuild of ``authors`` on
    # SQLite would break the foreign keys of every row that points at it.
    op.add_column("authors", sa.Column("name_key", sa.String(600)))
    bind = op.get_bind()
    a = _AUTHORS
    query = sa.select(a.c.id, a.c.name, a.c.query, a.c.removed_at).order_by(a.c.id)
    when = datetime.now(UTC)
    # Rows giving up a name go first: a kept author may be renamed onto it.
    for change in sorted(_changes(bind.execute(query).all()), key=lambda c: c.key is not None):
        values: dict[str, Any] = {"name": change.name, "name_key": change.key}
        if change.stop is not None:
            values["removed_at"] = when
            _log.warning(
                "author_no_longer_followed",
                author_id=change.id,
                author=change.old_name,
                reason=change.stop,
            )
        bind.execute(a.update().where(a.c.id == change.id).values(values))
    op.create_index("ix_authors_name_key", "authors", ["name_key"], unique=True)


def _changes(rows: Sequence[Any]) -> Iterator[_Change]:
    """Each row's change, rows in the order they were created."""
    groups: dict[str, list[tuple[Any, str]]] = {}
    for row in rows:
        try:
            normal = check_name(row.name)
        except ValueError as exc:
            stop = _stop(row, f"its name is refused now: {exc}")
            yield _Change(row.id, row.name, row.name, None, stop)
            continue
        groups.setdefault(name_key(normal), []).append((row, normal))
    for key, members in groups.items():
        # min() keeps the first of equals: the earliest created.
        kept, normal = min(members, key=lambda m: (m[0].removed_at is not None, m[0].name != m[1]))
        for row, _ in members:
            if row is kept:
                continue
            name = row.name
            if name == normal:  # kept is renamed to it
                name = f"{name[: MAX_NAME_CHARS - 24]} (duplicate #{row.id})"
            reason = f"the same author as {normal!r} (#{kept.id}) without regard to case"
            yield _Change(row.id, row.name, name, None, _stop(row, reason))
        yield _Change(kept.id, kept.name, normal, key, _stop(kept, _query_refused(kept.query)))


def _stop(row: Any, reason: str | None) -> str | None:
    """``reason`` when the row's author is followed: an author no longer followed stays so."""
    return reason if row.removed_at is None else None


def _query_refused(query: str | None) -> str | None:
    try:
        check_query(query or "")
    except ValueError as exc:
        return f"its query is refused now: {exc}"
    return None


def downgrade() -> None:
    op.drop_index("ix_authors_name_key", table_name="authors")
    op.drop_column("authors", "name_key")
