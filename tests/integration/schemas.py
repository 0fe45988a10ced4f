"""What the API's schema tests share: syncd's OpenAPI operations, and one held to its schema.

schemathesis generates requests from ``/api/v1/openapi.json``; for each an
answer must not be a 5xx and must be what the document says it is (a cursor
it made up may be refused).
"""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from tests.integration.conftest import Site

__all__ = ["api_operations", "check_against_its_schema"]


def api_operations(site: Site) -> list[Any]:
    """Every operation ``site``'s OpenAPI document describes."""
    api = schemathesis.openapi.from_url(f"{site.url}/api/v1/openapi.json")
    return [result.ok() for result in api.get_all_operations()]


def check_against_its_schema(operation: Any, examples: int) -> None:
    """``examples`` generated requests of ``operation``, each answered as its schema says."""

    @given(case=operation.as_strategy())
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    def keeps_its_schema(case: schemathesis.Case) -> None:
        # A cursor (``after``) is opaque: one the API never gave is a 400 however well
        # it is formed, which a schema cannot say.
        given_cursor = bool((case.query or {}).get("after"))
        case.call_and_validate(excluded_checks=[positive_data_acceptance] if given_cursor else [])

    keeps_its_schema()
