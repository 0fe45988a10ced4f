"""Authors defined at run time (``syncd authors add``/``import``, the API), checked as
``[[authors]]`` tables are: through an ``AuthorSettings`` (identifiers included).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from syncd.config.settings import AuthorSettings
from syncd.domain.authors import Author
from syncd.domain.vocabulary import AuthorOrigin
from syncd.errors import ConfigError

__all__ = ["runtime_author"]


def runtime_author(
    name: str,
    *,
    orcid: str | None = None,
    arxiv_author_id: str | None = None,
    query: str | None = None,
    seeds: Sequence[Path] = (),
) -> Author:
    """A run-time author; ``ConfigError`` naming the field that is wrong.

    Empty strings (a CSV's empty cells) mean "not given".  The name is
    checked and normalised as an ``[[authors]]`` table's is (``check_name``).
    """
    try:
        settings = AuthorSettings(
            name=name,
            orcid=(orcid or "").strip() or None,
            arxiv_author_id=(arxiv_author_id or "").strip() or None,
            query=query or None,
            seeds=tuple(p.resolve() for p in seeds),
        )
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "author"
        # pydantic's wording for a validator's ValueError: the reason is what follows.
        reason = first["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{where}: {reason}") from None
    return settings.author(AuthorOrigin.RUNTIME)
