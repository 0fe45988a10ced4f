"""The ``[[groups]]`` tables: groups of followed authors defined in the file.

Each names its ``members`` (author names) and may describe itself.  Whether
the members are followed authors is known only with the database (run-time
authors count too): ``syncd.storage.groups.Groups.reconcile`` checks that at
start, a ``ConfigError`` like any other of the file's.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, field_validator

from syncd.config.sections import Section
from syncd.domain.author_names import check_name, repeated_names
from syncd.domain.groups import MAX_DESCRIPTION_CHARS, Group, check_group_name
from syncd.domain.vocabulary import AuthorOrigin

__all__ = ["GroupSettings", "distinct_groups"]


class GroupSettings(Section):
    """One ``[[groups]]`` table: a name, its members, and what the group is."""

    name: Annotated[str, AfterValidator(check_group_name)]
    members: tuple[Annotated[str, AfterValidator(check_name)], ...] = ()
    description: str = Field("", max_length=MAX_DESCRIPTION_CHARS)

    @field_validator("members")
    @classmethod
    def _distinct_members(cls, members: tuple[str, ...]) -> tuple[str, ...]:
        twice = [
            f"{members[later]!r} is {members[first]!r}" for later, first in repeated_names(members)
        ]
        if twice:
            raise ValueError(f"member listed twice without regard to case: {'; '.join(twice)}")
        return members

    def group(self) -> Group:
        """The group this table defines, members as the file names them, sorted."""
        return Group(self.name, self.description, tuple(sorted(self.members)), AuthorOrigin.CONFIG)


def distinct_groups(groups: tuple[GroupSettings, ...]) -> tuple[GroupSettings, ...]:
    """``groups`` when no two tables have one name; else ``ValueError`` naming them."""
    names = [g.name for g in groups]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"group defined twice: {', '.join(map(repr, twice))}")
    return groups
