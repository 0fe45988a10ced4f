"""Hypothesis profiles: ``ci`` (the default) is reproducible, ``explore`` looks further.

``ci`` is derandomized (the examples follow from each test's code, so every
run, on CI or a laptop, tries the same ones and a red run is red again) and
keeps no example database (a failure saved by an earlier run must not change
what a later one tries); it has no deadline and skips the too-slow health
check, since both depend on how busy the machine is, not on the code, and a
loaded CI machine must not turn them red; ``print_blob`` prints how to replay
a failure.
``explore`` (``make explore``, ``HYPOTHESIS_PROFILE=explore``) draws random
examples, ten times as many, to find what ``ci``'s fixed ones miss; pin each
find with ``@example``.

A test that sets its own ``max_examples`` asks ``examples(n)``, so the
profile scales it too.  A test that draws from its own ``random.Random``
takes its seed from ``random_seed(default)``: ``default`` under ``ci``, a fresh
one under ``explore``, and ``$SYNCD_TEST_SEED`` under either (to replay a
failure, whose message names its seed).
"""

from __future__ import annotations

import os
import secrets

from hypothesis import HealthCheck, settings

__all__ = ["CI_EXAMPLES", "examples", "load_profile", "random_seed"]

# Hypothesis's own default; a test's examples(n) is n times this profile's share of it.
CI_EXAMPLES = 100
_EXPLORE_EXAMPLES = 10 * CI_EXAMPLES

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
    max_examples=CI_EXAMPLES,
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


def random_seed(default: int) -> int:
    """A seeded test's seed: ``$SYNCD_TEST_SEED``, else ``default`` under a derandomized
    profile (``ci``), else a fresh one (``explore``)."""
    chosen = os.environ.get("SYNCD_TEST_SEED")
    if chosen:
        return int(chosen)
    return default if settings.default.derandomize else secrets.randbelow(2**32)
