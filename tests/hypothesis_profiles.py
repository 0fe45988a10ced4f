"""Hypothesis profiles: ``ci`` (the default) is reproducible, ``explore`` looks further.

``ci`` is derandomized (the examples follow from each test's code, so every
run, on CI or a laptop, tries the same ones and a red run is red again) and
keeps no example database (a failure saved by an earlier run must not change
what a later one tries); ``print_blob`` prints how to replay a failure.
``explore`` (``make explore``, ``HYPOTHESIS_PROFILE=explore``) draws random
examples, ten times as many, to find what ``ci``'s fixed ones miss; pin each
find with ``@example``.

A test that sets its own ``max_examples`` asks ``examples(n)``, so the
profile scales it too.
"""

from __future__ import annotations

import os

from hypothesis import settings

__all__ = ["CI_EXAMPLES", "examples", "load_profile"]

# Hypothesis's own default; a test's examples(n) is n times this profile's share of it.
CI_EXAMPLES = 100
_EXPLORE_EXAMPLES = 10 * CI_EXAMPLES

settings.register_profile(
    "ci", derandomize=True, database=None, print_blob=True, max_examples=CI_EXAMPLES
)
settings.register_profile("explore", print_blob=True, max_examples=_EXPLORE_EXAMPLES)


def load_profile() -> str:
    """Load ``$HYPOTHESIS_PROFILE`` (``ci`` when unset) and return its name."""
    name = os.environ.get("HYPOTHESIS_PROFILE") or "ci"
    settings.load_profile(name)
    return name


def examples(count: int) -> int:
    """``count`` examples under ``ci``, as many more under a profile that asks for more."""
    return count * settings.default.max_examples // CI_EXAMPLES
