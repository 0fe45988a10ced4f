"""Whether the database is already at this syncd's newest migration, read without Alembic.

Every command brings the schema up to date at start (``database.migrate``).
Importing Alembic and loading its scripts was about a tenth of what `syncd
papers` spends (docs/PERFORMANCE.md, "CLI start-up"), to learn, nearly
always, that there is nothing to do.  So the newest migration is read from
the scripts' ``revision`` and ``down_revision`` lines and compared with the
database's ``alembic_version`` row; unless that is a plain yes (a new or
older database, a branch, a script this reading does not understand),
Alembic's own upgrade runs as before.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from syncd.errors import StoreError

__all__ = ["at_head", "script_head", "translated"]

_VERSIONS = Path(__file__).resolve().parents[1] / "migrations" / "versions"
_REVISION = re.compile(r'^revision(?::\s*str)?\s*=\s*"([^"]+)"\s*$', re.MULTILINE)
_DOWN_REVISION = re.compile(r'^down_revision(?::[^=\n]+)?=\s*(?:None|"([^"]+)")\s*$', re.MULTILINE)


@contextmanager
def translated(doing: str) -> Iterator[None]:
    """A database failure while ``doing`` something to the schema, as one ``StoreError``."""
    try:
        yield
    except sa.exc.SQLAlchemyError as exc:
        reason = getattr(exc, "orig", None) or exc
        raise StoreError(f"database error while {doing}: {reason}") from exc


@functools.cache
def script_head() -> str | None:
    """The one migration no other revises; None unless every script reads plainly."""
    revisions: set[str] = set()
    revised: set[str] = set()
    for path in _VERSIONS.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        revision, down = _REVISION.findall(text), _DOWN_REVISION.findall(text)
        if len(revision) != 1 or len(down) != 1:
            return None
        revisions.add(revision[0])
        revised.update(filter(None, down))
    heads = revisions - revised
    return heads.pop() if len(heads) == 1 else None


def at_head(engine: Engine) -> bool:
    """Whether the database's schema is at the newest migration (False when unsure)."""
    head = script_head()
    with translated("migrating"), engine.connect() as conn:
        if head is None or not sa.inspect(conn).has_table("alembic_version"):
            return False
        stored = conn.execute(sa.text("SELECT version_num FROM alembic_version")).all()
    return [row[0] for row in stored] == [head]
