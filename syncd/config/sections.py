"""What every configuration table shares: its base model and the bounds of durations.

A leaf, so the modules that define tables (``settings``, ``targets``)
share it without importing each other.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict

__all__ = ["DAY", "HOUR", "WEEK", "Section"]

# Upper bounds of durations, in seconds: generous for any real deployment, and
# far below where a sleep, a timedelta or a timestamp built from one overflows
# (``timeout = inf`` or ``1e308`` used to validate and then crash the first cycle).
HOUR: Final = 3600.0
DAY: Final = 86400.0
WEEK: Final = 604800.0


class Section(BaseModel):
    """The base of every configuration table: unknown keys refused, values frozen."""

    # inf and nan are valid TOML floats; no setting means anything by them.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
