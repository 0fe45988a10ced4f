"""endpoints keep a keyed hash of their URL, never the URL

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 01:10:00

Webhook URLs carry credentials (userinfo, query tokens, chat services' path
tokens), and every backup of the database carried them.  The URL stays in
the configuration; the table keeps only a hash keyed with the endpoint's
signing secret, to notice that an operator changed it.  Rows migrated here
have no hash until syncd next registers the configured endpoints.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("endpoints") as batch:
        batch.add_column(sa.Column("url_hash", sa.String(64), nullable=True))
        batch.drop_column("url")


def downgrade() -> None:
    # The URLs are gone; the previous schema gets them back from the
    # configuration the next time it registers its endpoints.
    with op.batch_alter_table("endpoints") as batch:
        batch.add_column(sa.Column("url", sa.Text, nullable=False, server_default=""))
        batch.drop_column("url_hash")
