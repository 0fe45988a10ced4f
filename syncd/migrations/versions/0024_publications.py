"""where papers were published: links with evidence, notices, lookups, per-host pacing

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-04 19:00:00

Issue 33: ``publication_links`` (every publication ever tied to a paper,
with its evidence and state), ``publication_notices`` (corrections and
retractions of a published version), ``publication_checks`` (when each
paper is looked up next) and ``host_pacers`` (each publication source's
pace, shared by replicas).  Nothing is filled: papers are looked up once
``[publications]`` is enabled.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "publication_links",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("paper_id", sa.Integer, nullable=False),
        sa.Column("key", sa.String(320), nullable=False),
        sa.Column("doi", sa.String(300)),
        sa.Column("venue", sa.String(1000)),
        sa.Column("type", sa.String(60)),
        sa.Column("date", sa.String(10)),
        sa.Column("title", sa.Text),
        sa.Column("url", sa.String(2000)),
        sa.Column("source", sa.String(12), nullable=False),
        sa.Column("level", sa.String(16), nullable=False),
        sa.Column("how", sa.String(40), nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("title_similarity", sa.Float),
        sa.Column("author_share", sa.Float),
        sa.Column("year_gap", sa.Integer),
        sa.Column("state", sa.String(12), nullable=False),
        sa.Column("found_at", _TIME, nullable=False),
        sa.Column("decided_at", _TIME),
        sa.ForeignKeyConstraint(
            ["paper_id"], ["papers.id"], name="fk_publication_links_paper_id_papers"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_publication_links"),
        sa.UniqueConstraint("paper_id", "key", name="uq_publication_links_paper_id_key"),
    )
    op.create_index("ix_publication_links_state", "publication_links", ["state"])
    op.create_table(
        "publication_notices",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("paper_id", sa.Integer, nullable=False),
        sa.Column("link_id", sa.Integer, nullable=False),
        sa.Column("doi", sa.String(300), nullable=False),
        sa.Column("type", sa.String(60), nullable=False),
        sa.Column("date", sa.String(10)),
        sa.Column("source", sa.String(60), nullable=False),
        sa.Column("found_at", _TIME, nullable=False),
        sa.ForeignKeyConstraint(
            ["paper_id"], ["papers.id"], name="fk_publication_notices_paper_id_papers"
        ),
        sa.ForeignKeyConstraint(
            ["link_id"],
            ["publication_links.id"],
            name="fk_publication_notices_link_id_publication_links",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_publication_notices"),
        sa.UniqueConstraint("paper_id", "doi", name="uq_publication_notices_paper_id_doi"),
    )
    op.create_table(
        "publication_checks",
        sa.Column("paper_id", sa.Integer, nullable=False),
        sa.Column("due_at", _TIME, nullable=False),
        sa.Column("checked_at", _TIME),
        sa.Column("searched_at", _TIME),
        sa.Column("record_hash", sa.String(32)),
        sa.Column("turn", sa.Integer, nullable=False, server_default="0"),
        sa.Column("failures", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_error", sa.String(500)),
        sa.ForeignKeyConstraint(
            ["paper_id"], ["papers.id"], name="fk_publication_checks_paper_id_papers"
        ),
        sa.PrimaryKeyConstraint("paper_id", name="pk_publication_checks"),
    )
    op.create_index("ix_publication_checks_due_at", "publication_checks", ["due_at"])
    op.create_table(
        "host_pacers",
        sa.Column("host", sa.String(300), nullable=False),
        sa.Column("last_start", _TIME),
        sa.PrimaryKeyConstraint("host", name="pk_host_pacers"),
    )


def downgrade() -> None:
    op.drop_table("host_pacers")
    op.drop_index("ix_publication_checks_due_at", table_name="publication_checks")
    op.drop_table("publication_checks")
    op.drop_table("publication_notices")
    op.drop_index("ix_publication_links_state", table_name="publication_links")
    op.drop_table("publication_links")
