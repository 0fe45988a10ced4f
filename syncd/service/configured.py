"""The file made the database's at start: its authors, then its groups; and its targets'
routes checked against both before anything is delivered.

Whether a name in ``[[groups]]`` or in a target's ``authors`` and ``groups``
is known takes the database (run-time authors and groups count), so these are
the configuration's last checks, ``ConfigError`` (exit 2) like the others.
Routes are checked by the commands that deliver (``App.register_endpoints``)
alone: ``syncd groups add`` must work while a target names the group it makes.
"""

from __future__ import annotations

from collections.abc import Iterator

from syncd.config import Settings
from syncd.domain.author_names import name_key
from syncd.errors import ConfigError
from syncd.storage import Storage

__all__ = ["check_routes", "reconcile_config", "routed_by"]


def reconcile_config(storage: Storage, settings: Settings) -> None:
    """Make the database's configured authors, then groups, those of the file."""
    storage.authors.reconcile(settings.configured_authors)
    storage.groups.reconcile([table.group() for table in settings.groups])


def routed_by(settings: Settings, group: str) -> list[str]:
    """Where the targets that route by the group ``group`` are in the file."""
    return [where for where, _, groups in _routes(settings) if group in groups]


def check_routes(storage: Storage, settings: Settings) -> None:
    """Refuse targets that route by an author syncd never followed or by no group."""
    authors = {name_key(name) for name in storage.authors.names()}
    groups = {group.name for group in storage.groups.all()}
    problems = [
        f"{where}.authors: {name!r} is no author syncd follows"
        for where, names, _ in _routes(settings)
        for name in names
        if name_key(name) not in authors
    ]
    problems += [
        f"{where}.groups: no group named {name!r} ([[groups]] or `syncd groups add`)"
        for where, _, names in _routes(settings)
        for name in names
        if name not in groups
    ]
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))


def _routes(settings: Settings) -> Iterator[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """Each target's place in the file, and the authors and groups it routes by."""
    for number, hook in enumerate(settings.webhooks):
        yield f"webhooks[{number}]", hook.authors, hook.groups
    for number, table in enumerate(settings.notify):
        yield f"notify[{number}]", table.authors, table.groups
