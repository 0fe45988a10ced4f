"""Data migrations write what they wrote the day they were made, whatever syncd computes now."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

import pytest

_MIGRATION_0006 = importlib.import_module("syncd.migrations.versions.0006_withdrawn_by")

WITHDRAWN = {
    "arxiv_id": "2401.00001",
    "version": 2,
    "title": "T",
    "abstract": "A",
    "authors": ["Ada", "Bob"],
    "authors_complete": True,
    "primary_category": "cs.LG",
    "categories": ["cs.LG", "cs.AI"],
    "comment": "c",
    "journal_ref": None,
    "doi": "10.1/x",
    "published": None,
    "updated": None,
    "withdrawn": True,
    "withdrawn_by": "author",
}


@pytest.mark.parametrize(
    ("record", "digest"),
    [
        (WITHDRAWN, "03d10dc5ce21901400201c780470bf47"),
        # Keys a record stored before they existed lacks read as their defaults.
        ({"arxiv_id": "x", "withdrawn": True}, "bce9e3f8b718f3e6b82845cea4009f34"),
    ],
)
def test_0006_hashes_as_content_hash_did_at_its_revision(
    record: dict[str, Any], digest: str
) -> None:
    """The digests are what syncd.record.content_hash gave these records at 0006 (run at
    commit c0fd43c, where 0006 was added)."""
    assert _MIGRATION_0006._record_hash(record) == digest


def test_0006_imports_no_record_code_of_syncd() -> None:
    """0006 imports neither the live content_hash nor the Record it hashes: a later change
    to them cannot change what it writes."""
    path = Path(_MIGRATION_0006.__file__ or "")
    imported = {
        node.module
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom)
    }
    assert "syncd.domain.record" not in imported
    assert "syncd.domain.withdrawal" in imported  # the check reads the imports it should
