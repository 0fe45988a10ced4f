"""``syncd groups``: groups of followed authors at run time, which targets route by.

A change is read by the next event any process publishes: a running
``syncd run`` routes by it at once.  Unknown groups and authors, and changes
to configured groups, are usage errors (exit 2) that say why.
"""

from __future__ import annotations

import argparse

from syncd.cli.output import print_json, print_table
from syncd.cli.table import Column
from syncd.domain.counting import counted
from syncd.domain.groups import Group, group_json
from syncd.service.app import App
from syncd.service.configured import reconcile_config
from syncd.service.groups import add_group, change_members, remove_group

__all__ = ["add", "list_groups", "members", "remove"]


def list_groups(args: argparse.Namespace, app: App) -> int:
    reconcile_config(app.storage, app.settings)
    groups = app.storage.groups.all()
    if args.json:
        return print_json([group_json(g) for g in groups])
    rows = [
        (g.name, str(g.origin), str(len(g.members)), ", ".join(g.members) or "-", g.description)
        for g in groups
    ]
    columns = (
        Column("NAME", shrink_to=12),
        Column("SOURCE", drop_rank=2),
        Column("MEMBERS"),
        Column("WHO", shrink_to=20),
        Column("DESCRIPTION", shrink_to=10, drop_rank=1),
    )
    print_table(columns, rows)
    return 0


def add(args: argparse.Namespace, app: App) -> int:
    group, done = add_group(app.storage, app.settings, args.name, args.description, args.members)
    print(f"{group.name}: {done}; {_members(group)}")
    return 0


def remove(args: argparse.Namespace, app: App) -> int:
    remove_group(app.storage, app.settings, args.name)
    print(f"{args.name}: removed; its authors stay followed")
    return 0


def members(args: argparse.Namespace, app: App) -> int:
    group, joined, left = change_members(
        app.storage, app.settings, args.name, args.add, args.remove
    )
    if args.add or args.remove:
        print(f"{group.name}: {joined} added, {left} removed; {_members(group)}")
        return 0
    for name in group.members:
        print(name)
    return 0


def _members(group: Group) -> str:
    listed = f": {', '.join(group.members)}" if group.members else ""
    return counted(len(group.members), "member") + listed
