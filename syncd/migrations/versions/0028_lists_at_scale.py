"""lists at scale: each author's latest runs kept on the author, covering indexes

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-04 22:55:00

Issue 34: every page's status strip and ``/authors`` ask how each author's
cycles stand (their newest run, newest running, good and failed one, when the
good one ended).  Read from ``sync_runs`` that is an aggregate over every run
ever, on every page: 135 ms at 100,000 authors with one run each, growing with
the months.  The answer is kept on ``authors`` instead, by triggers on
``sync_runs`` (every write of a run, by syncd, a test or an operator, keeps
it), each recomputing the one author's columns from the covering index
``ix_sync_runs_author_standing``.  ``ix_paper_authors_paper_status`` lets
every list's counts per status read each paper's best hold from an index.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = ("latest_run_id", "running_run_id", "ok_run_id", "ok_finished_at", "failed_run_id")


def _standing(who: str) -> str:
    """The UPDATE that recomputes the author ``who`` (an SQL expression) names."""
    runs = f"FROM sync_runs WHERE author_id = {who}"
    return f"""
        UPDATE authors SET
            latest_run_id = (SELECT max(id) {runs}),
            running_run_id = (SELECT max(id) {runs} AND status = 'running'),
            ok_run_id = (SELECT max(id) {runs} AND status = 'ok'),
            ok_finished_at = (SELECT max(finished_at) {runs} AND status = 'ok'),
            failed_run_id = (SELECT max(id) {runs} AND status IN ('failed', 'abandoned'))
        WHERE id = {who}"""


def upgrade() -> None:
    op.create_index(
        "ix_sync_runs_author_standing",
        "sync_runs",
        ["author_id", "status", "id", "finished_at"],
    )
    op.create_index("ix_paper_authors_paper_status", "paper_authors", ["paper_id", "status"])
    for name in _COLUMNS:
        kind = sa.DateTime(timezone=True) if name == "ok_finished_at" else sa.Integer()
        op.add_column("authors", sa.Column(name, kind))
    op.execute(_standing("authors.id"))
    if op.get_bind().dialect.name == "sqlite":
        for event, row in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD")):
            op.execute(
                f"CREATE TRIGGER sync_runs_standing_{event.lower()} AFTER {event} ON sync_runs"
                f" BEGIN {_standing(f'{row}.author_id')}; END"
            )
        return
    op.execute(
        "CREATE FUNCTION syncd_run_standing() RETURNS trigger LANGUAGE plpgsql AS $$"
        " DECLARE who integer; BEGIN"
        " IF TG_OP = 'DELETE' THEN who := OLD.author_id; ELSE who := NEW.author_id; END IF;"
        f" {_standing('who')};"
        " RETURN NULL; END $$"
    )
    op.execute(
        "CREATE TRIGGER sync_runs_standing AFTER INSERT OR UPDATE OR DELETE ON sync_runs"
        " FOR EACH ROW EXECUTE FUNCTION syncd_run_standing()"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for event in ("insert", "update", "delete"):
            op.execute(f"DROP TRIGGER sync_runs_standing_{event}")
    else:
        op.execute("DROP TRIGGER sync_runs_standing ON sync_runs")
        op.execute("DROP FUNCTION syncd_run_standing()")
    for name in reversed(_COLUMNS):
        op.drop_column("authors", name)
    op.drop_index("ix_paper_authors_paper_status", table_name="paper_authors")
    op.drop_index("ix_sync_runs_author_standing", table_name="sync_runs")
