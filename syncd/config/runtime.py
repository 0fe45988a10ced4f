"""Authors defined at run time (``syncd authors add``/``import``, the API), checked as
``[[authors]]`` tables are: by building an ``AuthorSettings``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from syncd.config.settings import AuthorSettings
from syncd.errors import ConfigError

__all__ = ["MAX_NAME_CHARS", "runtime_author"]

MAX_NAME_CHARS = 200  # authors.name
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_ORCID = re.compile(r"^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$")
_ARXIV_AUTHOR_ID = re.compile(r"^[a-z][a-z0-9_]{0,62}_\d+$")


def runtime_author(
    name: str,
    *,
    orcid: str | None = None,
    arxiv_author_id: str | None = None,
    query: str | None = None,
    seeds: Sequence[Path] = (),
) -> AuthorSettings:
    """The settings of a run-time author; ``ConfigError`` naming the field that is wrong.

    Empty strings (a CSV's empty cells) mean "not given".
    """
    name = name.strip()
    if not name:
        raise ConfigError("name: must not be empty")
    if len(name) > MAX_NAME_CHARS or _CONTROL.search(name):
        raise ConfigError(f"name: at most {MAX_NAME_CHARS} characters, no control characters")
    try:
        author = AuthorSettings(
            name=name,
            orcid=(orcid or "").strip() or None,
            arxiv_author_id=(arxiv_author_id or "").strip() or None,
            query=(query or "").strip() or None,
            seeds=tuple(p.resolve() for p in seeds),
        )
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "author"
        raise ConfigError(f"{where}: {first['msg']}") from None
    _check_identifiers(author)
    return author


# Until AuthorSettings validates identifiers itself (issue 22, item 1): the one place
# run-time authors check them; ``[[authors]]`` tables get the same check there.
def _check_identifiers(author: AuthorSettings) -> None:
    if author.orcid is not None and not _valid_orcid(author.orcid):
        raise ConfigError(
            "orcid: not an ORCID iD (0000-0002-1825-0097: four groups of four digits,"
            " the last may be X, with a valid ISO 7064 mod 11-2 check digit)"
        )
    if author.arxiv_author_id is not None and not _ARXIV_AUTHOR_ID.match(author.arxiv_author_id):
        raise ConfigError("arxiv_author_id: not an arXiv author id (such as warner_s_1)")


def _valid_orcid(orcid: str) -> bool:
    if not _ORCID.match(orcid):
        return False
    digits = orcid.replace("-", "")
    total = 0
    for digit in digits[:-1]:
        total = (total + int(digit)) * 2
    check = (12 - total % 11) % 11
    return digits[-1] == ("X" if check == 10 else str(check))
