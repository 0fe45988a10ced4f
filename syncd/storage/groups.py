"""Groups of followed authors: ``[[groups]]`` reconciled at start, others made at run time.

Routing reads groups here when an event is published, and every read opens
its own transaction: a group changed by one process (``syncd groups``, the
API) routes the next event of every other at once, without a restart.
Members are followed authors, named in any spelling of their name and kept
as the name syncd keeps; an author no longer followed keeps their place but
is not listed until followed again.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.author_names import name_key
from syncd.domain.groups import Group, GroupListing
from syncd.domain.vocabulary import AuthorOrigin, PaperStatus, Put
from syncd.errors import ConfigError, ConflictError, NotFoundError
from syncd.storage.database import Database, chunks, now, utc
from syncd.storage.schema import (
    authors_table,
    events_table,
    group_members_table,
    groups_table,
    paper_authors_table,
)

__all__ = ["Groups", "group_member_ids", "group_members", "members_by_group"]


class Groups:
    """The groups and group_members tables."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def all(self) -> list[Group]:
        """Every group, by name, with its followed members."""
        with self._db.transaction() as conn:
            return _groups(conn)

    def named_page(self, after: str | None, limit: int) -> list[Group]:
        """At most ``limit`` groups by name after the group named ``after``, with their
        followed members."""
        condition = groups_table.c.name > after if after is not None else None
        with self._db.transaction() as conn:
            return _groups(conn, condition, limit)

    def page(self, after: str | None, limit: int) -> list[GroupListing]:
        """At most ``limit`` groups by name, after the group named ``after``, their followed
        members counted."""
        g, m, a = groups_table, group_members_table, authors_table
        # Counted per group of the page only: a correlated count along the members' key.
        counted = (
            sa.select(sa.func.count())
            .select_from(m.join(a, a.c.id == m.c.author_id))
            .where(m.c.group_id == g.c.id, a.c.removed_at.is_(None))
            .scalar_subquery()
        )
        query = sa.select(g, counted.label("members")).order_by(g.c.name).limit(limit)
        if after is not None:
            query = query.where(g.c.name > after)
        with self._db.transaction() as conn:
            return [
                GroupListing(row.name, row.description, row.members or 0, AuthorOrigin(row.origin))
                for row in conn.execute(query)
            ]

    def members_page(self, name: str, after: str | None, limit: int) -> list[str]:
        """At most ``limit`` names of the group's followed members, by name, after ``after``."""
        a = authors_table
        query = (
            sa.select(a.c.name)
            .where(a.c.id.in_(group_member_ids(name)))
            .order_by(a.c.name)
            .limit(limit)
        )
        if after is not None:
            query = query.where(a.c.name > after)
        with self._db.transaction() as conn:
            return list(conn.scalars(query))

    def paper_counts(
        self, names: Collection[str], statuses: Collection[PaperStatus]
    ) -> dict[str, tuple[int, datetime | None]]:
        """Per group of ``names`` that has any: how many papers its followed members hold
        with one of ``statuses`` (each once), and when the latest event about one of them
        was published (None before any)."""
        g, m, a, t, e = (
            groups_table,
            group_members_table,
            authors_table,
            paper_authors_table,
            events_table,
        )
        held = (
            sa.select(g.c.name, t.c.paper_id)
            .select_from(
                g.join(m, m.c.group_id == g.c.id)
                .join(a, a.c.id == m.c.author_id)
                .join(t, t.c.author_id == a.c.id)
            )
            .where(g.c.name.in_(names), a.c.removed_at.is_(None), t.c.status.in_(statuses))
            .distinct()
            .subquery()
        )
        latest = (
            sa.select(sa.func.max(e.c.created_at))
            .where(e.c.paper_id == held.c.paper_id)
            .scalar_subquery()
        )
        query = sa.select(held.c.name, sa.func.count(), sa.func.max(latest)).group_by(held.c.name)
        with self._db.transaction() as conn:
            return {
                name: (int(count), utc(last) if last is not None else None)
                for name, count, last in conn.execute(query)
            }

    def get(self, name: str) -> Group | None:
        """The group of that name; None when there is none."""
        with self._db.transaction() as conn:
            found = _groups(conn, groups_table.c.name == name)
        return found[0] if found else None

    def members_of(self, names: Collection[str]) -> set[str]:
        """The names of the followed authors in any of the groups ``names``."""
        with self._db.transaction() as conn:
            return group_members(conn, names)

    def groups_of(self, authors: Collection[str]) -> dict[str, set[str]]:
        """Each of ``authors`` (names syncd keeps) with the names of the groups they are in;
        an author in none has an empty set."""
        found: dict[str, set[str]] = {name: set() for name in authors}
        a, g, m = authors_table, groups_table, group_members_table
        query = sa.select(a.c.name, g.c.name.label("group")).select_from(
            m.join(a, a.c.id == m.c.author_id).join(g, g.c.id == m.c.group_id)
        )
        with self._db.transaction() as conn:
            for chunk in chunks(list(found)):
                for row in conn.execute(query.where(a.c.name.in_(chunk))):
                    found[row.name].add(row.group)
        return found

    def put(self, name: str, description: str, origin: AuthorOrigin) -> Put:
        """Make a group, or change its description; what it did.

        A run-time put of a configured group is refused (``ConflictError``):
        it is changed in the file.  A configured put takes a run-time group of
        the same name over.
        """
        g = groups_table
        with self._db.transaction() as conn:
            row = conn.execute(sa.select(g).where(g.c.name == name)).first()
            if row is None:
                conn.execute(
                    g.insert().values(
                        name=name, description=description, origin=origin, created_at=now()
                    )
                )
                return Put.ADDED
            if row.origin == AuthorOrigin.CONFIG and origin != AuthorOrigin.CONFIG:
                raise _configured_elsewhere(name)
            if (row.description, row.origin) == (description, origin):
                return Put.UNCHANGED
            conn.execute(
                g.update().where(g.c.id == row.id).values(description=description, origin=origin)
            )
            return Put.UPDATED

    def remove(self, name: str) -> bool:
        """Remove a run-time group and its memberships; False when there is no such group.

        The authors stay followed.  A configured group is refused: it is removed
        from the file.
        """
        with self._db.transaction() as conn:
            row = _group_row(conn, name, required=False)
            if row is None:
                return False
            if row.origin == AuthorOrigin.CONFIG:
                raise _configured_elsewhere(name)
            conn.execute(
                group_members_table.delete().where(group_members_table.c.group_id == row.id)
            )
            conn.execute(groups_table.delete().where(groups_table.c.id == row.id))
            return True

    def add_members(self, name: str, authors: Collection[str]) -> int:
        """Put followed authors in a run-time group, all or none; how many were not in it.

        An author who is not followed is a ``NotFoundError``, and so is an
        unknown group; a configured group is refused (``ConflictError``).
        """
        with self._db.transaction() as conn:
            group = _runtime_group(conn, name)
            ids = _followed_ids(conn, authors)
            present = _member_ids(conn, group.id)
            fresh = sorted(set(ids.values()) - present)
            if fresh:
                conn.execute(
                    group_members_table.insert(),
                    [{"group_id": group.id, "author_id": i} for i in fresh],
                )
            return len(fresh)

    def remove_members(self, name: str, authors: Collection[str]) -> int:
        """Take authors out of a run-time group; how many were in it.

        Names of no author are ``NotFoundError``, written nothing; an author who
        is not in the group is left alone.
        """
        with self._db.transaction() as conn:
            group = _runtime_group(conn, name)
            ids = _author_ids(conn, authors, followed_only=False)
            present = _member_ids(conn, group.id)
            gone = sorted(set(ids.values()) & present)
            m = group_members_table
            for chunk in chunks(gone):
                conn.execute(m.delete().where(m.c.group_id == group.id, m.c.author_id.in_(chunk)))
            return len(gone)

    def reconcile(self, groups: Sequence[Group]) -> None:
        """Make the ``config`` groups match the file: each with exactly its members, and
        configured groups the file no longer has removed.  Run-time groups are left alone,
        but one the file names becomes the configured one.

        A member who is not a followed author is a ``ConfigError``, written nothing.
        """
        g, m = groups_table, group_members_table
        with self._db.transaction() as conn:
            for group in groups:
                try:
                    ids = set(_followed_ids(conn, group.members).values())
                except NotFoundError as exc:
                    raise ConfigError(f"[[groups]] {group.name!r}: {exc}") from None
                row = _group_row(conn, group.name, required=False)
                values = {"description": group.description, "origin": AuthorOrigin.CONFIG}
                if row is None:
                    # Replicas starting together on PostgreSQL reconcile at the same moment.
                    new = self._db.insert_ignoring_conflicts(g, "name")
                    conn.execute(new.values(name=group.name, created_at=now(), **values))
                conn.execute(g.update().where(g.c.name == group.name).values(values))
                group_id = _group_row(conn, group.name).id
                kept = _member_ids(conn, group_id)
                for chunk in chunks(sorted(kept - ids)):
                    conn.execute(
                        m.delete().where(m.c.group_id == group_id, m.c.author_id.in_(chunk))
                    )
                if ids - kept:
                    conn.execute(
                        self._db.insert_ignoring_conflicts(m, ("group_id", "author_id")),
                        [{"group_id": group_id, "author_id": i} for i in sorted(ids - kept)],
                    )
            stale = conn.execute(
                sa.select(g.c.id).where(
                    g.c.origin == AuthorOrigin.CONFIG, g.c.name.not_in([x.name for x in groups])
                )
            ).scalars()
            for chunk in chunks(list(stale)):
                conn.execute(m.delete().where(m.c.group_id.in_(chunk)))
                conn.execute(g.delete().where(g.c.id.in_(chunk)))


def group_member_ids(name: str) -> sa.Select[tuple[int]]:
    """The ids of the followed members of the group called ``name``, as a subquery: a
    page or a count over a group of any size, without its names in an IN list."""
    a, g, m = authors_table, groups_table, group_members_table
    return (
        sa.select(m.c.author_id)
        .join(g, g.c.id == m.c.group_id)
        .join(a, a.c.id == m.c.author_id)
        .where(g.c.name == name, a.c.removed_at.is_(None))
    )


def group_members(conn: Connection, names: Collection[str]) -> set[str]:
    """The names of the followed authors in any of the groups ``names``."""
    return {name for members in members_by_group(conn, names).values() for name in members}


def members_by_group(conn: Connection, names: Collection[str]) -> dict[str, set[str]]:
    """The names of the followed members of each of the groups ``names`` that has any, in
    ``conn``'s transaction: routing reads them where it writes the deliveries."""
    a, g, m = authors_table, groups_table, group_members_table
    query = (
        sa.select(g.c.name.label("group"), a.c.name)
        .select_from(m.join(a, a.c.id == m.c.author_id).join(g, g.c.id == m.c.group_id))
        .where(a.c.removed_at.is_(None))
    )
    found: dict[str, set[str]] = {}
    for chunk in chunks(sorted(names)):
        for row in conn.execute(query.where(g.c.name.in_(chunk))):
            found.setdefault(row.group, set()).add(row.name)
    return found


def _groups(
    conn: Connection, condition: sa.ColumnElement[bool] | None = None, limit: int | None = None
) -> list[Group]:
    g, m, a = groups_table, group_members_table, authors_table
    query = sa.select(g).order_by(g.c.name).limit(limit)
    if condition is not None:
        query = query.where(condition)
    found = conn.execute(query).all()
    members: dict[int, list[str]] = {row.id: [] for row in found}
    named = (
        sa.select(m.c.group_id, a.c.name)
        .join(a, a.c.id == m.c.author_id)
        .where(a.c.removed_at.is_(None))
    )
    for chunk in chunks(list(members)):
        for row in conn.execute(named.where(m.c.group_id.in_(chunk))):
            members[row.group_id].append(row.name)
    return [
        Group(row.name, row.description, tuple(sorted(members[row.id])), AuthorOrigin(row.origin))
        for row in found
    ]


def _configured_elsewhere(name: str) -> ConflictError:
    return ConflictError(
        f"group {name!r} is configured in the config file ([[groups]]): change or remove it there"
    )


def _group_row(conn: Connection, name: str, *, required: bool = True) -> Any:
    row = conn.execute(sa.select(groups_table).where(groups_table.c.name == name)).first()
    if row is None and required:
        raise NotFoundError(f"no group named {name!r}")
    return row


def _runtime_group(conn: Connection, name: str) -> Any:
    """The row of a group whose members may change at run time."""
    row = _group_row(conn, name)
    if row.origin == AuthorOrigin.CONFIG:
        raise _configured_elsewhere(name)
    return row


def _member_ids(conn: Connection, group_id: int) -> set[int]:
    m = group_members_table
    return set(conn.scalars(sa.select(m.c.author_id).where(m.c.group_id == group_id)))


def _followed_ids(conn: Connection, names: Collection[str]) -> dict[str, int]:
    return _author_ids(conn, names, followed_only=True)


def _author_ids(conn: Connection, names: Collection[str], *, followed_only: bool) -> dict[str, int]:
    """The id of the author each of ``names`` names, in any spelling of their name;
    ``NotFoundError`` naming every name that names none."""
    a = authors_table
    keys = {name: name_key(name) for name in names}
    query = sa.select(a.c.name_key, a.c.id)
    if followed_only:
        query = query.where(a.c.removed_at.is_(None))
    found: dict[str, int] = {}
    for chunk in chunks(sorted(set(keys.values()))):
        found |= {
            row.name_key: row.id for row in conn.execute(query.where(a.c.name_key.in_(chunk)))
        }
    unknown = [name for name, key in keys.items() if key not in found]
    if unknown:
        which = "followed author" if followed_only else "author"
        raise NotFoundError(f"no {which} named {', '.join(map(repr, unknown))}")
    return {name: found[key] for name, key in keys.items()}
