"""Groups at run time: the commands that make, change and remove them (CLI and API alike).

The file's groups are reconciled first, so a configured group is refused
even before the daemon's first start; a change is read by the next event
published, by every process (``syncd.storage.groups``).
"""

from __future__ import annotations

from collections.abc import Sequence

from syncd.config import Settings
from syncd.domain.groups import MAX_DESCRIPTION_CHARS, Group, check_group_name
from syncd.domain.vocabulary import AuthorOrigin, Put
from syncd.errors import ConfigError, ConflictError, NotFoundError
from syncd.service.configured import reconcile_config, routed_by
from syncd.storage import Storage

__all__ = ["add_group", "change_members", "named_group", "remove_group"]


def add_group(
    storage: Storage, settings: Settings, name: str, description: str, members: Sequence[str]
) -> tuple[Group, Put]:
    """Make a run-time group (or change its description) with these members added, all or
    none: an author who is not followed writes nothing.  The group, and what was done."""
    reconcile_config(storage, settings)
    name = _group_name(name)
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise ConfigError(f"a description has at most {MAX_DESCRIPTION_CHARS} characters")
    _check_followed(storage, members)
    done = storage.groups.put(name, description, AuthorOrigin.RUNTIME)
    if storage.groups.add_members(name, members) and done == Put.UNCHANGED:
        done = Put.UPDATED
    return named_group(storage, name), done


def change_members(
    storage: Storage, settings: Settings, name: str, add: Sequence[str], remove: Sequence[str]
) -> tuple[Group, int, int]:
    """Add and take out members of a run-time group; the group, how many joined and left."""
    reconcile_config(storage, settings)
    named_group(storage, name)
    _check_followed(storage, add)
    joined = storage.groups.add_members(name, add) if add else 0
    left = storage.groups.remove_members(name, remove) if remove else 0
    return named_group(storage, name), joined, left


def remove_group(storage: Storage, settings: Settings, name: str) -> None:
    """Remove a run-time group; its authors stay followed.  One a target routes by is
    refused: the target would route by nothing."""
    reconcile_config(storage, settings)
    routes = routed_by(settings, name)
    # A configured group is refused for that first, by storage.
    if routes and named_group(storage, name).origin == AuthorOrigin.RUNTIME:
        raise ConflictError(
            f"group {name!r} routes {', '.join(routes)} in the config file: change them first"
        )
    if not storage.groups.remove(name):
        raise NotFoundError(f"no group named {name!r}")


def _group_name(name: str) -> str:
    try:
        return check_group_name(name)
    except ValueError as exc:
        raise ConfigError(f"group name {name[:120]!r}: {exc}") from None


def named_group(storage: Storage, name: str) -> Group:
    """The group called ``name``; ``NotFoundError`` naming it when there is none."""
    group = storage.groups.get(name)
    if group is None:
        raise NotFoundError(f"no group named {name!r}")
    return group


def _check_followed(storage: Storage, names: Sequence[str]) -> None:
    """``NotFoundError`` naming every one of ``names`` that is no followed author."""
    unknown = [n for n in names if not storage.authors.followed_now(storage.authors.stored_name(n))]
    if unknown:
        raise NotFoundError(f"no followed author named {', '.join(map(repr, unknown))}")
