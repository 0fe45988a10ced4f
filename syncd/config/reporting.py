"""What an invalid configuration says: each bad key, and what gave its value.

Values come from the file or, overriding it, from ``SYNCD_<SECTION>_<KEY>``
environment variables; a bad value is blamed on whichever gave it, so that
``SYNCD_HARVEST_ENABLE=true`` is not reported as a mistake in the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import ValidationError

__all__ = ["ENV_PREFIX", "invalid_configuration"]

# Environment variables SYNCD_<SECTION>_<KEY> override the file.
ENV_PREFIX = "SYNCD_"


def invalid_configuration(file: str, exc: ValidationError, environ: Mapping[str, str]) -> str:
    """The message of ``exc``, blamed on what gave the values: the file, or the environment
    variables that overrode it (named on their lines when the file is blamed too)."""
    errors = _errors(exc, environ)
    variables = [variable for _, _, variable in errors]
    if all(variables):
        source = "environment variable " + ", ".join(dict.fromkeys(filter(None, variables)))
        lines = [f"  {location}: {message}" for location, message, _ in errors]
    else:
        source = file
        lines = [
            f"  {location}: {message}" + (f" (from {variable})" if variable else "")
            for location, message, variable in errors
        ]
    return f"{source}: invalid configuration:\n" + "\n".join(lines)


def _errors(exc: ValidationError, environ: Mapping[str, str]) -> list[tuple[str, str, str | None]]:
    """Each error's key, message, and the variable that gave the value (None: the file)."""
    given = {name.upper(): name for name in environ if name.upper().startswith(ENV_PREFIX)}
    found = []
    for error in exc.errors(include_url=False, include_input=False):
        keys = [part for part in error["loc"][:2] if isinstance(part, str)]
        # SYNCD_HARVEST_ENABLED, or SYNCD_WEBHOOKS for a whole list given as JSON.
        names = [ENV_PREFIX + "_".join(keys[:depth]).upper() for depth in (2, 1)]
        variable = next((given[n] for n in names if n in given), None)
        found.append((_location(error["loc"]) or "(top level)", error["msg"], variable))
    return found


def _location(loc: Sequence[str | int]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
