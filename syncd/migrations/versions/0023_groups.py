"""groups of followed authors, and endpoints that route by author and group

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-04 16:00:00

Issue 32: ``groups`` (a name, a description, where it is defined) and
``group_members`` (an author may be in several groups).  ``endpoints``
gain ``authors`` and ``groups``, the names a target routes by; an empty
list, what every endpoint from before has, takes every author's events.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TIME = sa.DateTime(timezone=True)
_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "groups",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("description", sa.String(2000), nullable=False, server_default=""),
        sa.Column("origin", sa.String(8), nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_groups"),
        sa.UniqueConstraint("name", name="uq_groups_name"),
    )
    op.create_table(
        "group_members",
        sa.Column("group_id", sa.Integer, nullable=False),
        sa.Column("author_id", sa.Integer, nullable=False),
        sa.ForeignKeyConstraint(
            ["group_id"], ["groups.id"], name="fk_group_members_group_id_groups"
        ),
        sa.ForeignKeyConstraint(
            ["author_id"], ["authors.id"], name="fk_group_members_author_id_authors"
        ),
        sa.PrimaryKeyConstraint("group_id", "author_id", name="pk_group_members"),
    )
    op.create_index("ix_group_members_author_id", "group_members", ["author_id"])
    # Plain ADD COLUMN, never a batch rebuild: on SQLite a rebuild of ``endpoints``
    # would break the foreign keys of every delivery that points at it.
    for column in ("authors", "groups"):
        op.add_column("endpoints", sa.Column(column, _JSON, nullable=False, server_default="[]"))


def downgrade() -> None:
    for column in ("groups", "authors"):
        op.drop_column("endpoints", column)
    op.drop_index("ix_group_members_author_id", table_name="group_members")
    op.drop_table("group_members")
    op.drop_table("groups")
