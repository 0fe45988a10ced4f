"""Groups of followed authors: a lab, a department, a project, as values and their names' rules.

A group is a name, a description and its members (author names).  An author
may be in several groups.  ``config`` groups are the file's ``[[groups]]``
tables, reconciled at start; ``runtime`` ones are made with ``syncd groups``
or the API.  Targets route by them (``syncd.domain.routing``).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any, Final

from syncd.domain.vocabulary import AuthorOrigin

__all__ = [
    "MAX_DESCRIPTION_CHARS",
    "MAX_GROUP_NAME_CHARS",
    "Group",
    "GroupListing",
    "check_group_name",
    "group_json",
]

MAX_GROUP_NAME_CHARS: Final = 100
MAX_DESCRIPTION_CHARS: Final = 2000
# A group's name is a path segment (/groups/<name>) and a word on a command line:
# no slash, and nothing that acts instead of showing (Unicode's C* categories).
_REFUSED_CATEGORIES = ("C",)


@dataclass(frozen=True, slots=True)
class Group:
    """A named set of followed authors; ``members`` are author names, sorted."""

    name: str
    description: str
    members: tuple[str, ...]
    origin: AuthorOrigin


@dataclass(frozen=True, slots=True)
class GroupListing:
    """A group as a list of groups shows it: its followed members counted, not named."""

    name: str
    description: str
    members: int
    origin: AuthorOrigin


def check_group_name(raw: str) -> str:
    """``raw`` in its normal form (NFC, whitespace runs as one space, stripped), or
    ``ValueError`` saying why no group can have it."""
    text = unicodedata.normalize("NFC", raw)
    for char in text:
        if unicodedata.category(char).startswith(_REFUSED_CATEGORIES) and char not in " \t":
            raise ValueError(f"contains U+{ord(char):04X}: a group's name is one line of text")
    name = " ".join(text.split())
    if not name:
        raise ValueError("must not be empty")
    if "/" in name:
        raise ValueError(f"{name!r} contains '/': a group's name is one segment of its page's URL")
    if len(name) > MAX_GROUP_NAME_CHARS:
        raise ValueError(f"at most {MAX_GROUP_NAME_CHARS} characters (this one has {len(name)})")
    return name


def group_json(group: Group) -> dict[str, Any]:
    """A group as ``syncd groups list --json`` and ``/api/v1/groups`` give it."""
    return {
        "name": group.name,
        "description": group.description,
        "source": str(group.origin),
        "members": list(group.members),
    }
